/**
 * Runs hostile cases against a target in batches of concurrent cases. Around every batch: a snapshot of every table
 * before and after (rows the batch's accepted inputs own set aside) — a difference means a refused input changed the
 * database, and the batch's refused cases are replayed one at a time to find which — and a health check (`/health`
 * and gRPC health) that must pass, or the run stops. Tallies every verdict per category. Records the RSS of the
 * process the gateway runs in when the run starts and its peak during the run (the kernel's high-water mark, reset at
 * the start, so it misses no spike and is right even if the event loop was blocked) and, given a bound, stops the run
 * with a failure after the first batch whose peak passed it.
 */
import { HOSTILE_CATEGORIES, type CaseResult, type CaseVerdict, type HostileCategory } from './hostile-case.js';
import type { IndexedCase } from './hostile-cases.js';
import { snapshotDifferences, takeSnapshot } from './db-snapshot.js';
import type { HostileTarget } from './hostile-target.js';
import { readPeakRss, resetPeakRss } from '../../testkit/proc-stats.js';
import { runPool } from '../../testkit/run-pool.js';

/** Counts of one category. */
interface CategoryTally {
  cases: number;
  typed: number;
  accepted: number;
  failures: number;
}

/** One failed case. */
interface CaseFailure {
  index: number;
  /** A case's category, or the check that failed after a batch: the database snapshot and health, or the RSS bound. */
  category: HostileCategory | 'database' | 'memory';
  name: string;
  detail: string;
}

/** What a run found. */
export interface HostileReport {
  seed: number;
  driver: string;
  cases: number;
  batches: number;
  tallies: Map<HostileCategory, CategoryTally>;
  /** Typed errors by code (`INVALID_ARGUMENT`, `HTTP 400`, `AgentConfigError`…). */
  codes: Map<string, number>;
  failures: CaseFailure[];
  /** Every case's verdict by its index (after any replay that found it changed the database). */
  verdicts: Map<number, CaseVerdict>;
  durationMs: number;
  /**
   * RSS of this process — the in-process gateway (and PGlite), the sandbox API server and the runner together, so an
   * upper bound on the gateway's — when the run started (the gateway started and seeded), in bytes.
   */
  startRssBytes: number;
  /** Peak RSS of this process during the run, in bytes. */
  peakRssBytes: number;
  /** The batch (1-based) during which the peak was reached, and its first and last case. */
  peakRssBatch: { batch: number; first: number; last: number };
  /** False where the kernel's peak could not be reset: the peak then counts from the start of the process. */
  peakRssWindowed: boolean;
  /** The bound on the peak the run was held to, if any. */
  rssBoundBytes?: number;
}

/** Options of {@link runHostile}. */
export interface HostileRunOptions {
  seed: number;
  /** Cases run at once within a batch. */
  concurrency?: number;
  /** Cases between two database snapshots. */
  batchSize?: number;
  /** Fail (and stop) the run once the peak RSS of the process exceeds this many bytes. */
  rssBoundBytes?: number;
  /**
   * Fail (and stop) the run once the peak RSS grows this many bytes above the RSS at its start: for a run inside a
   * process that already holds other work (a test shard), where only the growth is the run's own.
   */
  rssGrowthBoundBytes?: number;
  /** Called after each batch (progress of long runs). */
  onBatch?: (done: number, total: number, failures: number) => void;
}

/**
 * The bound on the peak RSS of the gateway's process during a hostile run, which `npm run hostile` and the test hold
 * every run to (docs/hostile-input.md gives the measurements it was chosen from).
 */
export const RSS_BOUND_BYTES = 1280 * 2 ** 20;

/**
 * The bound on the growth of the process's RSS during the in-suite run (the test shares its process with the other
 * files of its shard, whose memory is not the run's): the seed 638696507 finding grew it by more than 800 MiB.
 */
export const RSS_GROWTH_BOUND_BYTES = 512 * 2 ** 20;

/** Longest a single case may take in all, whatever its own deadlines say. */
const CASE_DEADLINE_MS = 30_000;

/** Runs `cases` against `target`; never throws for a case's sake (every problem is a failure in the report). */
export async function runHostile(target: HostileTarget, cases: readonly IndexedCase[], options: HostileRunOptions): Promise<HostileReport> {
  const started = performance.now();
  const concurrency = options.concurrency ?? 8;
  const batchSize = options.batchSize ?? 48;
  const tallies = new Map<HostileCategory, CategoryTally>(
    (Object.keys(HOSTILE_CATEGORIES) as HostileCategory[]).map((c) => [c, { cases: 0, typed: 0, accepted: 0, failures: 0 }]),
  );
  const codes = new Map<string, number>();
  const failures: CaseFailure[] = [];
  const allVerdicts = new Map<number, CaseVerdict>();
  const owned = new Set<string>();
  let batches = 0;
  const peakRssWindowed = resetPeakRss();
  const startRssBytes = process.memoryUsage.rss();
  let peakRssBytes = readPeakRss();
  let peakRssBatch = { batch: 0, first: cases[0]?.index ?? 0, last: cases[0]?.index ?? 0 };
  let before = await takeSnapshot(target.query);
  for (let start = 0; start < cases.length; start += batchSize) {
    const batch = cases.slice(start, start + batchSize);
    batches++;
    const results = await runPool(batch, concurrency, (c) => withDeadline(c.hostileCase.run(target), CASE_DEADLINE_MS));
    const verdicts = new Map<number, CaseResult>(batch.map((c, i) => [c.index, results[i]!]));
    for (const result of results) for (const name of result.owned ?? []) owned.add(name);
    let after = await takeSnapshot(target.query);
    if (snapshotDifferences(before, after, owned).length > 0) {
      after = await attributeChanges(target, batch, verdicts, owned, before, after, failures);
    }
    for (const c of batch) {
      const { verdict } = verdicts.get(c.index)!;
      allVerdicts.set(c.index, verdict);
      const tally = tallies.get(c.hostileCase.category)!;
      tally.cases++;
      if (verdict.kind === 'typed') {
        tally.typed++;
        const code = verdict.code ?? 'other';
        codes.set(code, (codes.get(code) ?? 0) + 1);
      } else if (verdict.kind === 'accepted') tally.accepted++;
      else {
        tally.failures++;
        failures.push({ index: c.index, category: c.hostileCase.category, name: c.hostileCase.name, detail: verdict.detail });
      }
    }
    before = after;
    const peak = readPeakRss();
    if (peak > peakRssBytes) {
      peakRssBytes = peak;
      peakRssBatch = { batch: batches, first: batch[0]!.index, last: batch[batch.length - 1]!.index };
    }
    const bound = options.rssBoundBytes;
    // Growth is judged only where the kernel's peak was reset at the start (otherwise it holds earlier work's peak).
    const growthBound = peakRssWindowed ? options.rssGrowthBoundBytes : undefined;
    const overBound = bound !== undefined && peakRssBytes > bound;
    const overGrowth = growthBound !== undefined && peakRssBytes - startRssBytes > growthBound;
    if (overBound || overGrowth) {
      failures.push({
        index: batch[0]!.index,
        category: 'memory',
        name: `batch ${batches}`,
        detail:
          `the RSS of the gateway's process reached ${mb(peakRssBytes)} (${mb(startRssBytes)} at the start) in batch ${batches} ` +
          `(cases ${batch[0]!.index}–${batch[batch.length - 1]!.index}), over ` +
          (overBound ? `the bound of ${mb(bound!)}` : `the bound of ${mb(growthBound!)} of growth`),
      });
      break;
    }
    const unhealthy = await target.unhealthy();
    if (unhealthy) {
      failures.push({
        index: batch[0]!.index,
        category: 'database',
        name: `after batch ${batches}`,
        detail: `the gateway stopped answering: ${unhealthy}`,
      });
      break;
    }
    options.onBatch?.(Math.min(start + batchSize, cases.length), cases.length, failures.length);
  }
  return {
    seed: options.seed,
    driver: target.driver,
    cases: cases.length,
    batches,
    tallies,
    codes,
    failures,
    verdicts: allVerdicts,
    durationMs: performance.now() - started,
    startRssBytes,
    peakRssBytes,
    peakRssBatch,
    peakRssWindowed,
    rssBoundBytes: options.rssBoundBytes,
  };
}

/** Bytes as whole mebibytes ("612 MiB"). */
export function mb(bytes: number): string {
  return `${Math.round(bytes / 2 ** 20)} MiB`;
}

/**
 * A batch changed rows nobody owns: replays its refused cases one at a time with a snapshot around each, marking
 * those that change the database again as failures. A change no replay reproduces is reported for the batch. Returns
 * the snapshot to compare the next batch with.
 */
async function attributeChanges(
  target: HostileTarget,
  batch: readonly IndexedCase[],
  verdicts: Map<number, CaseResult>,
  owned: Set<string>,
  before: Awaited<ReturnType<typeof takeSnapshot>>,
  after: Awaited<ReturnType<typeof takeSnapshot>>,
  failures: CaseFailure[],
): Promise<Awaited<ReturnType<typeof takeSnapshot>>> {
  const changes = snapshotDifferences(before, after, owned);
  let found = false;
  let current = after;
  for (const c of batch) {
    if (verdicts.get(c.index)!.verdict.kind !== 'typed') continue;
    const replay = await withDeadline(c.hostileCase.run(target), CASE_DEADLINE_MS);
    for (const name of replay.owned ?? []) owned.add(name);
    const next = await takeSnapshot(target.query);
    const diff = snapshotDifferences(current, next, owned);
    current = next;
    if (replay.verdict.kind === 'typed' && diff.length > 0) {
      found = true;
      verdicts.set(c.index, {
        verdict: {
          kind: 'failure',
          detail: `${c.hostileCase.name}: refused (${replay.verdict.detail}) but changed the database: ${diff.slice(0, 3).join('; ')}`,
        },
      });
    }
  }
  if (!found)
    failures.push({
      index: batch[0]!.index,
      category: 'database',
      name: `batch starting at case ${batch[0]!.index}`,
      detail: `rows changed and no replay reproduced it: ${changes.slice(0, 5).join('; ')}`,
    });
  return current;
}

function withDeadline(run: Promise<CaseResult>, ms: number): Promise<CaseResult> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<CaseResult>((resolve) => {
    timer = setTimeout(() => resolve({ verdict: { kind: 'failure', detail: `the case did not finish within ${ms} ms` } }), ms);
  });
  return Promise.race([run, deadline]).finally(() => clearTimeout(timer));
}
