/**
 * One stack of clean-up steps for a program that starts many parts: each part registers how it stops right after it
 * started, and the whole stack runs in reverse order — on shutdown, and the same way when the start fails half-way
 * (only what started is stopped). Replaces hand-written partial clean-ups that must be kept in step with the start.
 */

/** A stack of named clean-up steps. */
export interface Closers {
  /**
   * Registers a step to run at close, after every step registered later. Returns `value` (the started part), so a
   * start can read `const db = closers.add('database', await open(), (d) => d.close())`.
   */
  add<T>(name: string, value: T, close: (value: T) => unknown): T;
  /** Registers a step that holds no value. */
  defer(name: string, close: () => unknown): void;
  /**
   * Runs every step, newest first, each awaited before the next. A step that throws is reported to `onError` and the
   * others still run. Later calls return the same promise; steps added after closing started run at once.
   */
  close(): Promise<void>;
  /** True once {@link Closers.close} was called. */
  readonly closing: boolean;
}

/**
 * Creates an empty stack. `onError` hears about steps that failed (their name and error); `onStep`, when given, hears
 * each step's name just before it runs — how a test checks the order a program stops in (never its timing).
 */
export function createClosers(onError: (name: string, err: unknown) => void, onStep?: (name: string) => void): Closers {
  const steps: { name: string; run: () => unknown }[] = [];
  let closing: Promise<void> | undefined;
  const runOne = async (step: { name: string; run: () => unknown }) => {
    try {
      onStep?.(step.name);
      await step.run();
    } catch (err) {
      onError(step.name, err);
    }
  };
  const closers: Closers = {
    add(name, value, close) {
      closers.defer(name, () => close(value));
      return value;
    },
    defer(name, close) {
      const step = { name, run: close };
      if (closing) void closing.then(() => runOne(step));
      else steps.push(step);
    },
    close() {
      closing ??= (async () => {
        while (steps.length > 0) await runOne(steps.pop()!);
      })();
      return closing;
    },
    get closing() {
      return closing !== undefined;
    },
  };
  return closers;
}
