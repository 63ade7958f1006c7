/**
 * An `outpost` client command as a child process (node bin/outpost.js, as a user runs it) whose output a test reads
 * while it runs: `outpost login` prints the URL and code to act on, then waits for the person. Its environment is
 * only what the test gives (plus PATH), so no setting of the machine's user leaks in.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/outpost.js', import.meta.url));

/** How a command ended. */
export interface CliChildResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A running command. */
export interface CliChild {
  /** Resolves with the first match of `pattern` in stderr; rejects when the command exits first or after `timeoutMs`. */
  waitForStderr(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves once it exited. */
  readonly result: Promise<CliChildResult>;
  /** SIGTERM, if it still runs. */
  kill(): void;
}

/** Starts `outpost ARGS…` with `env` (and PATH) as its whole environment. */
export function startCliChild(args: string[], env: Record<string, string>): CliChild {
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout.on('data', (c: Buffer) => void (stdout += c.toString('utf8')));
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString('utf8');
    for (const l of [...listeners]) l();
  });
  let exited = false;
  const result = new Promise<CliChildResult>((resolve) =>
    child.once('close', (code) => {
      exited = true;
      for (const l of [...listeners]) l();
      resolve({ code, stdout, stderr });
    }),
  );
  return {
    result,
    waitForStderr(pattern, timeoutMs = 60_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stderr);
          if (match) done(() => resolve(match));
          else if (exited) done(() => reject(new Error(`outpost ${args[0]} exited without printing ${pattern}: ${stderr}`)));
        };
        const timer = setTimeout(() => done(() => reject(new Error(`outpost ${args[0]} did not print ${pattern}: ${stderr}`))), timeoutMs);
        const done = (settle: () => void) => {
          clearTimeout(timer);
          listeners.delete(check);
          settle();
        };
        listeners.add(check);
        check();
      });
    },
    kill: () => void (exited || child.kill('SIGTERM')),
  };
}
