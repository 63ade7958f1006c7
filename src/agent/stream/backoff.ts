/**
 * Exponential backoff with full jitter (delay drawn uniformly from [0, min(max, base × factor^attempt)]), so many
 * agents restarting together do not reconnect in lock-step.
 */

/** Backoff parameters, in seconds. */
export interface BackoffPolicy {
  baseSeconds: number;
  factor: number;
  maxSeconds: number;
}

/** Delay in milliseconds before retry number `attempt` (0-based). `random` is injectable for tests. */
export function backoffDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxSeconds, policy.baseSeconds * policy.factor ** Math.max(0, attempt));
  return Math.round(random() * ceiling * 1000);
}

/** Resolves after `ms`, or early (without error) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}
