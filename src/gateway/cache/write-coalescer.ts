/**
 * Cross-stream group commit of one replica's cache writes. Every agent stream writes its event batches one at a time
 * (write-pipeline.ts), and a fleet of sparse changes makes each batch its own small transaction: one commit per
 * batch per stream, thousands a second across a replica. The coalescer puts the fenced batches of all the replica's
 * streams that are waiting into ONE statement (object-writer.ts, `writeGroup`): at most one group is written at a
 * time, and a group takes every batch that arrived while the previous one was being written, up to `maxRows` rows.
 *
 * - **No latency for a stream alone.** A batch that finds nothing being written is written at once. Only while
 *   several streams write does a group wait until `windowMs` after the previous group started, so the replica commits
 *   at most 1000 / `windowMs` groups a second whatever the number of streams (rows per group grow with the load).
 * - **Each batch on its own terms.** Each account is still fenced by its own stream's lease inside the statement: a
 *   lost lease writes nothing of that batch and rejects only it (LeaseLostError). When the statement fails as a
 *   whole (a constraint, a bad row the decoder let through), its batches are written again one by one, so only the
 *   batch that fails alone is failed: a failure of one stream never fails or loses another's batch — it costs the
 *   others one more round trip, and such failures are not expected (the decoder validates every row).
 * - **Acknowledged after commit.** Each `write` resolves only when the statement holding its batch committed; the
 *   pipeline acknowledges the batch to its agent then. A group never holds two batches of one session (a session
 *   writes in order: the second waits for the next group).
 *
 * Unfenced writes (tests, tools) and everything when `enabled` is false go straight to the writer, one statement per
 * batch, as before the coalescer (the `fleet-churn` benchmark compares both).
 */
import type { DecodedBatch } from './event-decoder.js';
import type { FencedBatch, GroupObjectWriter, ObjectWriter } from './object-writer.js';
import type { CoalesceRecorder } from '../metrics/gateway-metrics.js';
import { LeaseLostError, type WriteFence } from '../accounts/lease-fence.js';

/** `cache.coalesce` of the gateway config. */
export interface CoalesceOptions {
  enabled: boolean;
  /** Least time between the starts of two groups while several streams write, ms. */
  windowMs: number;
  /** Rows (upserts, deletes, positions) a group takes at most; a larger single batch is written alone. */
  maxRows: number;
}

/** The clock and timer of the window (tests drive them). */
export interface CoalesceClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const systemClock: CoalesceClock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

interface Pending extends FencedBatch {
  rows: number;
  resolve(): void;
  reject(err: unknown): void;
}

const rowsOf = (batch: DecodedBatch) => batch.upserts.length + batch.deletes.length + batch.scopes.length;

/** An ObjectWriter that coalesces fenced writes of many streams; see the module comment. */
export interface CoalescingWriter extends ObjectWriter {
  /** Batches waiting for a group (for tests and metrics). */
  readonly waiting: number;
}

/** Creates the coalescer over `writer`. */
export function createCoalescingWriter(
  writer: GroupObjectWriter,
  options: CoalesceOptions,
  deps: { metrics?: CoalesceRecorder; clock?: CoalesceClock } = {},
): CoalescingWriter {
  const clock = deps.clock ?? systemClock;
  const queue: Pending[] = [];
  let writing = false;
  let lastStart = Number.NEGATIVE_INFINITY;
  let lastGroupSize = 0;
  let timer: unknown;

  /** Takes the next group off the queue: in arrival order, one batch per session, within maxRows (at least one). */
  const take = (): Pending[] => {
    const group: Pending[] = [];
    const sessions = new Set<string>();
    let rows = 0;
    for (let i = 0; i < queue.length; ) {
      const entry = queue[i]!;
      if (sessions.has(entry.fence.sessionId) || (group.length > 0 && rows + entry.rows > options.maxRows)) {
        i++;
        continue;
      }
      group.push(entry);
      sessions.add(entry.fence.sessionId);
      rows += entry.rows;
      queue.splice(i, 1);
    }
    return group;
  };

  const settle = (entry: Pending, lost: string[]) => (lost.length > 0 ? entry.reject(new LeaseLostError(lost)) : entry.resolve());

  const run = async (group: Pending[]) => {
    const rows = group.reduce((n, e) => n + e.rows, 0);
    try {
      const lost = await writer.writeGroup(group);
      deps.metrics?.groupWritten(group.length, rows, false);
      group.forEach((entry, i) => settle(entry, lost[i]!));
    } catch (err) {
      deps.metrics?.groupWritten(group.length, rows, true);
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
      // Alone, each batch succeeds or fails on its own.
      for (const entry of group) {
        try {
          const [lost] = await writer.writeGroup([entry]);
          settle(entry, lost!);
        } catch (own) {
          entry.reject(own);
        }
      }
    }
  };

  const flush = () => {
    timer = undefined;
    if (writing || queue.length === 0) return;
    const group = take();
    writing = true;
    lastStart = clock.now();
    lastGroupSize = group.length;
    void run(group).finally(() => {
      writing = false;
      schedule();
    });
  };

  function schedule(): void {
    if (writing || queue.length === 0 || timer !== undefined) return;
    const crowded = lastGroupSize > 1 || queue.length > 1;
    const wait = crowded ? lastStart + options.windowMs - clock.now() : 0;
    if (wait <= 0) flush();
    else timer = clock.setTimeout(flush, wait);
  }

  return {
    get waiting() {
      return queue.length;
    },
    write(batch: DecodedBatch, fence?: WriteFence): Promise<void> {
      if (!fence || !options.enabled || batch.accounts.length === 0) return writer.write(batch, fence);
      return new Promise<void>((resolve, reject) => {
        queue.push({ batch, fence, rows: rowsOf(batch), resolve, reject });
        schedule();
      });
    },
  };
}
