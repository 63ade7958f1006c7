/**
 * Watches the agent's configuration file by polling its content (fs.watch misses the rename-writes editors and
 * ConfigMap volume updates do). A new content counts once two reads in a row return it: a file caught half-written
 * (truncated, then filled) is never applied — read empty, it would remove every account for a moment. Then the file
 * is validated again: an invalid file is logged with every issue and the running configuration is kept; a valid one
 * hands its `kubernetes.accounts` to the caller, and changes to any other setting are logged as needing a restart.
 */
import { readFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import { AgentConfigError, parseAgentConfigText } from './load.js';
import type { AccountConfig, AgentConfig } from './schema.js';

/** Options of {@link watchConfigFile}. */
export interface ConfigWatcherOptions {
  file: string;
  /** Environment for the overrides (as at start-up). */
  env?: NodeJS.ProcessEnv;
  /** The configuration the agent runs with: the baseline for "needs a restart". */
  running: AgentConfig;
  intervalMs: number;
  logger: Logger;
  /** Applies a new, valid account list; the next check waits for it. */
  onAccounts(accounts: AccountConfig[]): Promise<void>;
  /** Reads the file; the file system by default (tests inject a sequence of contents). */
  readText?: (file: string) => Promise<string>;
}

/** A running watcher. */
export interface ConfigWatcher {
  /** Stops polling; resolves when a check in progress has finished. */
  close(): Promise<void>;
}

/** Top-level settings (and `kubernetes.*` other than accounts) that differ between two configurations. */
function settingsNeedingRestart(running: AgentConfig, next: AgentConfig): string[] {
  const changed: string[] = [];
  for (const key of new Set([...Object.keys(running), ...Object.keys(next)]) as Set<keyof AgentConfig>) {
    if (key === 'kubernetes') {
      const { accounts: _a, ...a } = running.kubernetes;
      const { accounts: _b, ...b } = next.kubernetes;
      for (const sub of new Set([...Object.keys(a), ...Object.keys(b)]) as Set<keyof typeof a>) {
        if (!isDeepStrictEqual(a[sub], b[sub])) changed.push(`kubernetes.${sub}`);
      }
    } else if (!isDeepStrictEqual(running[key], next[key])) changed.push(key);
  }
  return changed;
}

/** Starts polling `file` (see the module comment). The first check compares against the file as read now. */
export async function watchConfigFile(options: ConfigWatcherOptions): Promise<ConfigWatcher> {
  const { file, logger } = options;
  const log = logger.child({ configFile: file });
  const read = () => (options.readText ? options.readText(file) : readFile(file, 'utf8'));
  let last: string | undefined = await read().catch(() => undefined);
  /** A new content read once: applied when the next read returns it again. */
  let candidate: string | undefined;
  let lastReadError = '';
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let checking: Promise<void> = Promise.resolve();

  async function check(): Promise<void> {
    let text: string;
    try {
      text = await read();
      lastReadError = '';
    } catch (err) {
      const why = (err as Error).message;
      if (why !== lastReadError) log.warn({ err: why }, 'cannot read the configuration file; keeping the running configuration');
      lastReadError = why;
      return;
    }
    if (text === last) {
      candidate = undefined;
      return;
    }
    if (text !== candidate) {
      candidate = text;
      return;
    }
    candidate = undefined;
    last = text;
    let next: AgentConfig;
    try {
      next = parseAgentConfigText(text, file, options.env);
    } catch (err) {
      if (!(err instanceof AgentConfigError)) throw err;
      log.error({ issues: err.issues }, `the configuration file changed but is invalid; keeping the running configuration. ${err.message}`);
      return;
    }
    const restart = settingsNeedingRestart(options.running, next);
    if (restart.length > 0) {
      log.warn(
        { settings: restart },
        `configuration file changed: ${restart.join(', ')} take effect only after a restart (only kubernetes.accounts is reloaded)`,
      );
    }
    await options.onAccounts(next.kubernetes.accounts);
  }

  const schedule = () => {
    if (closed) return;
    timer = setTimeout(() => {
      checking = check()
        .catch((err: unknown) => log.error({ err: (err as Error).message }, 'checking the configuration file failed'))
        .finally(schedule);
    }, options.intervalMs);
  };
  schedule();
  return {
    async close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      await checking;
    },
  };
}
