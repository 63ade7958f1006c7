/**
 * The bearer token of the gateway stream, from `clouddriver.auth`: a static `token`, a `tokenFile` read before each
 * connection attempt, or a `tokenCommand` run through the shell whose trimmed stdout is the token. The command is
 * re-run every `tokenCommandIntervalSeconds` in the background, and before a connection attempt when its last run is
 * older than that, or when the gateway refused the last token (UNAUTHENTICATED, e.g. an expired JWT ended the stream).
 * A failing run (non-zero exit, empty output, timeout) is logged with its stderr and the previous token is kept. The
 * token itself is never logged.
 */
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import type { AgentConfig } from '../config/schema.js';

/** Gives the token to use for the next connection attempt. */
export interface TokenSource {
  /**
   * The current token, refreshed first when stale; `undefined` when no token is configured. Throws when a token
   * source is configured but has never produced a token (the attempt must fail and back off).
   */
  current(): Promise<string | undefined>;
  /**
   * The gateway refused the credentials (UNAUTHENTICATED: an expired or revoked token): the next {@link current}
   * fetches a new token first (re-runs the token command; a token file is re-read anyway).
   */
  rejected(): void;
  /** Stops the background refresh. */
  close(): void;
}

/** Raised when a configured token source has no token to offer. */
class TokenUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenUnavailableError';
  }
}

const MAX_OUTPUT_BYTES = 64 * 1024;

/**
 * Runs the token command once, in its own process group (so a timeout kills whatever it started too); resolves with
 * the trimmed stdout, rejects with a message that includes stderr.
 */
function runTokenCommand(command: { command: string; args?: string[] }, timeoutMs: number): Promise<string> {
  const [file, args] = command.args !== undefined ? [command.command, command.args] : ['/bin/sh', ['-c', command.command]];
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const killGroup = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      if (stdout.length < MAX_OUTPUT_BYTES) stdout += chunk.toString('utf8');
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < MAX_OUTPUT_BYTES) stderr += chunk.toString('utf8');
    });
    const finish = (why: string | undefined) => {
      clearTimeout(timer);
      const errText = stderr.trim().slice(0, 2000);
      const token = stdout.trim();
      if (why === undefined && token === '') why = 'printed no token on stdout';
      if (why !== undefined) reject(new Error(`${why}${errText ? `; stderr: ${errText}` : ''}`));
      else resolve(token);
    };
    child.once('error', (err) => finish(`cannot run it: ${err.message}`));
    child.once('close', (code, signal) => {
      if (timedOut) finish(`timed out after ${timeoutMs / 1000} s`);
      else if (code !== 0) finish(code === null ? `killed by ${signal}` : `exited with code ${code}`);
      else finish(undefined);
    });
  });
}

/** Creates the token source of `clouddriver.auth` (see the module comment). */
export function createTokenSource(auth: AgentConfig['clouddriver']['auth'], logger: Logger): TokenSource {
  if (auth?.tokenCommand !== undefined) {
    const command = auth.tokenCommand;
    const intervalMs = auth.tokenCommandIntervalSeconds * 1000;
    const timeoutMs = auth.tokenCommandTimeoutSeconds * 1000;
    let token: string | undefined;
    let lastRun = 0;
    /** Set when the gateway refused the token; cleared when a run starts (a run that started later gives a new token). */
    let refused = false;
    let lastError = '';
    let running: Promise<void> | undefined;
    let closed = false;
    const refresh = () =>
      (running ??= (async () => {
        refused = false;
        try {
          const fresh = await runTokenCommand(command, timeoutMs);
          if (token !== undefined && fresh !== token) logger.info('token command gave a new token; used from the next connection');
          token = fresh;
          lastError = '';
        } catch (err) {
          lastError = (err as Error).message;
          logger.error(
            { command: command.command, err: lastError },
            `clouddriver.auth.tokenCommand failed: ${lastError}; ${token === undefined ? 'no token yet' : 'keeping the previous token'}`,
          );
        } finally {
          lastRun = Date.now();
          running = undefined;
        }
      })());
    const timer = setInterval(() => {
      if (!closed) void refresh();
    }, intervalMs);
    timer.unref();
    return {
      async current() {
        // A run that started before the refusal may return the refused token: wait for it, then run again.
        if (refused && running) await running;
        if (token === undefined || refused || Date.now() - lastRun >= intervalMs) await refresh();
        if (token === undefined) throw new TokenUnavailableError(`no bearer token: clouddriver.auth.tokenCommand failed: ${lastError}`);
        return token;
      },
      rejected() {
        refused = true;
      },
      close() {
        closed = true;
        clearInterval(timer);
      },
    };
  }
  if (auth?.tokenFile !== undefined) {
    const file = auth.tokenFile;
    let token: string | undefined;
    return {
      async current() {
        try {
          const text = (await readFile(file, 'utf8')).trim();
          if (text === '') throw new Error('the file is empty');
          token = text;
        } catch (err) {
          const why = (err as Error).message;
          logger.error(
            { file, err: why },
            `clouddriver.auth.tokenFile: cannot read a token from ${file}: ${why}; ${token === undefined ? 'no token yet' : 'keeping the previous token'}`,
          );
          if (token === undefined) throw new TokenUnavailableError(`no bearer token: clouddriver.auth.tokenFile ${file}: ${why}`);
        }
        return token;
      },
      rejected() {},
      close() {},
    };
  }
  const token = auth?.token || undefined;
  return { current: async () => token, rejected() {}, close() {} };
}
