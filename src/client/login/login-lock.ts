/**
 * One renewal at a time per cache file. Providers rotate refresh tokens, and many treat a rotated one used again as
 * stolen and revoke the whole sign-in: two kubectl processes renewing the same login at once would sign the user out.
 * So a renewal holds a lock file beside the cache (created exclusively), and reads the cache again inside it: whoever
 * waited finds the token the other one got. A lock left by a process that died is taken over once it is old.
 */
import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, ExitCode } from '../errors.js';

/** Give up after waiting this long for another holder: a renewal is one request to the provider. */
const WAIT_MS = 30_000;
/** A lock file older than this belongs to a process that died. */
const STALE_MS = 60_000;

function tryCreate(lock: string): boolean {
  try {
    const fd = openSync(lock, 'wx', 0o600);
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw new CliError(
      `cannot create the lock ${lock} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.FAILED,
    );
  }
}

function ageMs(lock: string): number | undefined {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return undefined; // released meanwhile
  }
}

/**
 * Runs `fn` holding `<file>.lock`, and removes the lock after it however it ends. Waits for another holder, takes
 * over a lock older than {@link STALE_MS}, and throws CliError (exit 1) naming the lock after {@link WAIT_MS}. The
 * caller must read the state it guards again inside `fn`: it may have changed while waiting.
 */
export async function withLoginLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${file}.lock`;
  const started = Date.now();
  while (!tryCreate(lock)) {
    const age = ageMs(lock);
    if (age !== undefined && age > STALE_MS) {
      rmSync(lock, { force: true });
      continue;
    }
    if (Date.now() - started > WAIT_MS) {
      throw new CliError(
        `another outpost process has been renewing this sign-in for over ${WAIT_MS / 1000} s (lock ${lock}); ` +
          'remove the lock if no outpost runs, or run outpost login again',
        ExitCode.FAILED,
      );
    }
    await sleep(50);
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}
