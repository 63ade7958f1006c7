/**
 * An async iterable fed by `push()`: the request side of the bidirectional stream. Unbounded by itself; the data
 * window of the outbox is what bounds it (only heartbeats and reports bypass the window, and they are rare).
 */

/** A queue that a consumer iterates with `for await`. */
export interface Pushable<T> extends AsyncIterable<T> {
  push(value: T): void;
  /** Ends the iteration once the queued values are consumed. */
  end(): void;
  readonly ended: boolean;
}

/** Creates an empty pushable. It may be iterated once. */
export function createPushable<T>(): Pushable<T> {
  const queue: T[] = [];
  let ended = false;
  let wake: (() => void) | undefined;
  return {
    push(value) {
      if (ended) return;
      queue.push(value);
      wake?.();
    },
    end() {
      ended = true;
      wake?.();
    },
    get ended() {
      return ended;
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (ended) return;
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    },
  };
}
