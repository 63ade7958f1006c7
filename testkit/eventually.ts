/**
 * The one way tests and benchmarks wait for something that happens asynchronously (a row written, a stream welcomed,
 * a pod running): call a function until it has an answer. The timeout only bounds a hang, so a wait never decides a
 * test by how fast something happened; assert on time windows, if ever, with timestamps, not with a timeout here.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { inspect } from 'node:util';

/** How long {@link eventually} waits by default: generous, since it only turns a hang into a clear failure. */
const EVENTUALLY_TIMEOUT_MS = 30_000;

/** How long {@link eventually} pauses between attempts by default. */
const EVENTUALLY_INTERVAL_MS = 25;

/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this long (default {@link EVENTUALLY_TIMEOUT_MS}); fn is still called at least once. */
  timeoutMs?: number;
  /** Pause between the end of one attempt and the next (default {@link EVENTUALLY_INTERVAL_MS}). */
  intervalMs?: number;
}

/**
 * Thrown from the function given to {@link eventually} when the condition can no longer come true (the process it
 * waits on exited, say): the wait ends at once with this error instead of retrying until the timeout.
 */
export class StopWaiting extends Error {
  override name = 'StopWaiting';
}

/** What {@link eventually} treats as "not yet". */
type NotYet = undefined | null | false;

/**
 * Calls `fn` until it returns (or resolves to) a value other than `undefined`, `null` or `false`, and returns that
 * value. A throw or rejection also counts as "not yet" and is retried, except a {@link StopWaiting}, which ends the
 * wait at once. Attempts never overlap: the next starts `intervalMs` after the previous one settled.
 *
 * On timeout it throws an Error whose message names `what` (say what is awaited: "account alpha ACTIVE") and the
 * last error or value, with the last error as its `cause`. So `0` and `''` are answers; return `false` or `undefined`
 * for "not yet", and throw (an assertion, say) when the last state is worth reading in the failure.
 */
export async function eventually<T>(what: string, fn: () => T | Promise<T>, options: EventuallyOptions = {}): Promise<Exclude<T, NotYet>> {
  const timeoutMs = options.timeoutMs ?? EVENTUALLY_TIMEOUT_MS;
  const intervalMs = options.intervalMs ?? EVENTUALLY_INTERVAL_MS;
  const deadline = Date.now() + timeoutMs;
  let attempts = 0;
  let last: { error: unknown } | { value: unknown } = { value: undefined };
  for (;;) {
    attempts++;
    try {
      const value = await fn();
      if (value !== undefined && value !== null && value !== false) return value as Exclude<T, NotYet>;
      last = { value };
    } catch (error) {
      if (error instanceof StopWaiting) throw error;
      last = { error };
    }
    if (Date.now() >= deadline) break;
    await sleep(intervalMs);
  }
  const seen =
    'error' in last
      ? `last error: ${last.error instanceof Error ? last.error.message : inspect(last.error)}`
      : `last value: ${inspect(last.value, { depth: 3, breakLength: Infinity }).slice(0, 1000)}`;
  throw new Error(`${what}: not reached within ${timeoutMs} ms (${attempts} attempts); ${seen}`, {
    cause: 'error' in last ? last.error : undefined,
  });
}
