/**
 * Reads of `operations` for the fleet summary: how many are in flight and the newest ones without their bulk. They
 * live here, with the table's store (operation-store.ts), so a column change reaches only this folder
 * (docs/architecture.md, "One owner per table"). Both are cheap enough to repeat every second: a count over the
 * open states and a bounded newest-first read.
 */
import { getTableColumns, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { operations } from '../../db/schema.js';
import { OPEN_STATES } from './operation-state.js';

/** How many operations are open (not yet in a final state). */
export async function openOperationCount(db: Db): Promise<number> {
  const rows = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(operations)
    .where(inArray(operations.state, [...OPEN_STATES]));
  return Number(rows[0]?.n ?? 0);
}

/**
 * The newest `limit` operations, newest first, without their request and without the bulky parts of results
 * (objects, logs, revisions): GetOperation has them.
 */
export async function newestOperationsSlim(db: Db, limit: number) {
  return db
    .select({
      ...getTableColumns(operations),
      request: sql<Record<string, unknown>>`'{}'::jsonb`,
      result: sql<Record<string, unknown> | null>`${operations.result} - 'objects' - 'logs' - 'revisions'`,
    })
    .from(operations)
    .orderBy(sql`${operations.receivedAt} desc`, sql`${operations.id} desc`)
    .limit(limit);
}

/** What ended in a window, for one account or (account undefined) the whole fleet. */
export interface EndedOperationStats {
  /** Undefined for the fleet's row. */
  account?: string;
  succeeded: number;
  failed: number;
  timedOut: number;
  /** Median and 99th percentile of received → finished, in ms (null when none ended). */
  p50Ms: number | null;
  p99Ms: number | null;
}

/**
 * Operations that ended in `(from, to]` (by `finished_at`, indexed): per account and for the fleet (one statement,
 * grouping sets), counts by outcome and latency percentiles. The history's sampler calls it once per step; the fleet
 * row is always there (zeros when nothing ended).
 */
export async function endedOperationStats(db: Db, from: Date, to: Date): Promise<EndedOperationStats[]> {
  const latency = sql`extract(epoch from (${operations.finishedAt} - ${operations.receivedAt})) * 1000`;
  const result = await db.execute(sql`select ${operations.account} as account, grouping(${operations.account}) as fleet,
      count(*) filter (where ${operations.state} = 'SUCCEEDED')::int as succeeded,
      count(*) filter (where ${operations.state} = 'FAILED')::int as failed,
      count(*) filter (where ${operations.state} = 'TIMED_OUT')::int as timed_out,
      percentile_cont(0.5) within group (order by ${latency}) as p50,
      percentile_cont(0.99) within group (order by ${latency}) as p99
    from ${operations}
    where ${operations.finishedAt} > ${from.toISOString()}::timestamptz and ${operations.finishedAt} <= ${to.toISOString()}::timestamptz
    group by grouping sets ((${operations.account}), ())`);
  const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return rowsOf(result).map((r) => ({
    account: Number(r.fleet) === 1 ? undefined : String(r.account),
    succeeded: Number(r.succeeded),
    failed: Number(r.failed),
    timedOut: Number(r.timed_out),
    p50Ms: num(r.p50),
    p99Ms: num(r.p99),
  }));
}
