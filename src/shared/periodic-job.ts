/**
 * A job run periodically in the background (sweeps, clean-ups, lease upkeep, file polls): one round at a time, the
 * next one `intervalMs` after the previous one ended, so a slow round delays the next instead of overlapping it. A
 * failed round is logged and the job goes on; nothing is thrown to the timer. The timer is unref'd: a pending round
 * never keeps the process alive. `stop()` resolves once a round in flight has finished, so a caller can close what the
 * rounds use (the database) right after it.
 */

/** The timer functions the job uses; tests pass fakes to fire rounds themselves. */
export interface JobTimers {
  /** Calls `callback` once after `ms`; returns a handle for {@link JobTimers.clear}. */
  set(callback: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

/** Node's timers, unref'd. */
export const NODE_TIMERS: JobTimers = {
  set(callback, ms) {
    const timer = setTimeout(callback, ms);
    timer.unref();
    return timer;
  },
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** Options of {@link createPeriodicJob}. */
export interface PeriodicJobOptions {
  /** One round. Its rejection is logged at error level with `errorMessage`; the next round runs as usual. */
  run: () => Promise<unknown>;
  /** Pause between the end of a round and the start of the next (and before the first). */
  intervalMs: number;
  /** Where failed rounds go (a pino Logger fits). */
  logger: { error(fields: { err: unknown }, message: string): void };
  /** The log message of a failed round, e.g. "account sweep failed". */
  errorMessage: string;
  /** Defaults to {@link NODE_TIMERS}. */
  timers?: JobTimers;
}

/** A periodic job; nothing runs before `start()`. */
export interface PeriodicJob {
  /** Schedules the first round `intervalMs` from now; no-op while started. May be called again after `stop()`. */
  start(): void;
  /** Runs the next round as soon as possible instead of after the interval; no-op when stopped or while a round runs. */
  runSoon(): void;
  /** No more rounds; resolves when the round in flight, if any, has finished. Safe to call more than once. */
  stop(): Promise<void>;
  /** True between `start()` and `stop()`. */
  readonly started: boolean;
}

/** Creates the job. The caller must `stop()` it before closing what `run` uses. */
export function createPeriodicJob(options: PeriodicJobOptions): PeriodicJob {
  const timers = options.timers ?? NODE_TIMERS;
  let started = false;
  let pending: unknown;
  let round: Promise<void> | undefined;

  const cancel = () => {
    if (pending === undefined) return;
    timers.clear(pending);
    pending = undefined;
  };
  const schedule = (ms: number) => {
    cancel();
    pending = timers.set(fire, ms);
  };
  function fire(): void {
    pending = undefined;
    if (!started || round) return;
    // Assigned before the round can end (even a `run` that throws at once ends in a later microtask).
    round = (async () => {
      try {
        await options.run();
      } catch (err) {
        options.logger.error({ err }, options.errorMessage);
      }
    })().finally(() => {
      round = undefined;
      if (started && pending === undefined) schedule(options.intervalMs);
    });
  }

  return {
    start() {
      if (started) return;
      started = true;
      // A round of an earlier start still running schedules the next one when it ends.
      if (!round) schedule(options.intervalMs);
    },
    runSoon() {
      if (started && !round) schedule(0);
    },
    async stop() {
      started = false;
      cancel();
      await round;
    },
    get started() {
      return started;
    },
  };
}
