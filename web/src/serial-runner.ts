/** Runs one async task at a time, coalescing requests that arrive meanwhile. */
export interface SerialRunner {
  /**
   * Runs the task now if idle; if it is running, runs it once more after it ends (however many requests arrived
   * meanwhile). Never runs two at once, so a burst of live updates costs at most two fetches.
   */
  request(): void;
  /** Stops future runs; a run in progress finishes (abort it through your own signal). */
  dispose(): void;
}

/**
 * Creates a runner for `task`. The task must not throw (catch and record errors inside it): a rejection is swallowed
 * so one failure does not stop later refreshes.
 */
export function createSerialRunner(task: () => Promise<void>): SerialRunner {
  let running = false;
  let again = false;
  let disposed = false;

  const loop = async (): Promise<void> => {
    running = true;
    try {
      do {
        again = false;
        try {
          await task();
        } catch {
          // The task records its own errors.
        }
      } while (again && !disposed);
    } finally {
      running = false;
    }
  };

  return {
    request() {
      if (disposed) return;
      if (running) {
        again = true;
        return;
      }
      void loop();
    },
    dispose() {
      disposed = true;
    },
  };
}
