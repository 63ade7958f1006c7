/**
 * Groups database writes issued close together into one statement (one round trip, one commit). Batching is
 * "natural": a write issued while fewer than `concurrency` batches are in flight goes out after the current I/O
 * phase (setImmediate) with whatever else was issued in it, so a lone write waits for nothing; under load, writes
 * queue while earlier batches run and go out together. Each write's promise settles when its batch committed.
 */

/** Runs one batch; returns one answer per item, in the items' order. */
export type BatchRunner<T, R> = (items: T[]) => Promise<R[]>;

/** Options of {@link createWriteBatcher}. */
export interface WriteBatcherOptions {
  /** Largest batch (statement parameters grow with it); default 200. */
  maxBatch?: number;
  /** Batches in flight at once (each holds a pool connection); default 2. */
  concurrency?: number;
  /**
   * Errors after which a batch is run again, whole (the runner's statement must be safe to repeat when it failed,
   * e.g. a deadlock or serialization failure, which roll the statement back). Default: none.
   */
  retryOn?: (err: unknown) => boolean;
  /** Attempts in all for a batch whose errors match `retryOn`; default 5, with a short jittered pause between. */
  maxAttempts?: number;
}

/** See the module comment. */
export interface WriteBatcher<T, R> {
  /**
   * Queues `item`; resolves with its answer once its batch committed, rejects with the batch's error (every item of
   * a failed batch gets the same error — the runner must make a batch all-or-nothing, as one statement is).
   */
  add(item: T): Promise<R>;
  /** Items queued or in flight. */
  readonly size: number;
}

interface Entry<T, R> {
  item: T;
  resolve: (answer: R) => void;
  reject: (err: unknown) => void;
}

/** Creates a batcher over `run`. */
export function createWriteBatcher<T, R>(run: BatchRunner<T, R>, options: WriteBatcherOptions = {}): WriteBatcher<T, R> {
  const maxBatch = options.maxBatch ?? 200;
  const concurrency = options.concurrency ?? 2;
  const maxAttempts = options.retryOn ? (options.maxAttempts ?? 5) : 1;
  let queue: Entry<T, R>[] = [];
  let inFlight = 0;
  let inFlightItems = 0;
  let scheduled = false;

  const flush = () => {
    scheduled = false;
    while (inFlight < concurrency && queue.length > 0) {
      const batch = queue.length <= maxBatch ? queue : queue.slice(0, maxBatch);
      queue = queue.length <= maxBatch ? [] : queue.slice(maxBatch);
      inFlight++;
      inFlightItems += batch.length;
      void execute(batch);
    }
  };

  const schedule = () => {
    if (scheduled || inFlight >= concurrency) return;
    scheduled = true;
    setImmediate(flush);
  };

  async function execute(batch: Entry<T, R>[]): Promise<void> {
    try {
      const items = batch.map((e) => e.item);
      let answers: R[];
      for (let attempt = 1; ; attempt++) {
        try {
          answers = await run(items);
          break;
        } catch (err) {
          if (attempt >= maxAttempts || !options.retryOn?.(err)) throw err;
          await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 20 * attempt));
        }
      }
      batch.forEach((e, i) => e.resolve(answers[i] as R));
    } catch (err) {
      for (const e of batch) e.reject(err);
    } finally {
      inFlight--;
      inFlightItems -= batch.length;
      if (queue.length > 0) schedule();
    }
  }

  return {
    add(item) {
      return new Promise<R>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        schedule();
      });
    },
    get size() {
      return queue.length + inFlightItems;
    },
  };
}
