/**
 * Reads of `watch_states`, the cache's list bookkeeping (one row per watched account, kind and namespace): whether a
 * kind was ever watched, the kinds watched, the sync state account views show and the metrics' sync gauges. They live
 * here, with the table's writes (sync-state.ts), so a column change reaches only the cache (docs/architecture.md,
 * "One owner per table"). Callers must not read the rows for anything but display and checks: resume points are
 * sync-state.ts's.
 */
import { and, eq, inArray, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { watchStates } from '../../db/schema.js';

/** Whether a watch of `kind` was recorded for `account` (any account when empty): one index probe. */
export async function watchRecorded(db: Db, account: string, kind: string): Promise<boolean> {
  const where = and(...(account ? [eq(watchStates.account, account)] : []), eq(watchStates.kind, kind));
  const rows = await db.select({ one: sql<number>`1` }).from(watchStates).where(where).limit(1);
  return rows.length > 0;
}

/** The distinct kinds watched for `account` (every account when empty): a listing, for error messages only. */
export async function watchedKinds(db: Db, account: string): Promise<{ kind: string }[]> {
  return account
    ? await db.selectDistinct({ kind: watchStates.kind }).from(watchStates).where(eq(watchStates.account, account))
    : await db.selectDistinct({ kind: watchStates.kind }).from(watchStates);
}

/** One watch scope's row, as account views show it. */
export type WatchStateRow = typeof watchStates.$inferSelect;

/** Every watch scope of the named accounts. */
export async function watchStatesOf(db: Db, accounts: string[]): Promise<WatchStateRow[]> {
  return db.select().from(watchStates).where(inArray(watchStates.account, accounts));
}

/** Watch scopes by sync state, `listing` (a list running) or `synced`, for the `outpost_gateway_sync_scopes` gauge. */
export async function syncScopeCounts(db: Db): Promise<{ state: string; n: number }[]> {
  const result = await db.execute(
    sql`select case when synced then 'synced' else 'listing' end as state, count(*)::int as n from watch_states group by 1`,
  );
  return rowsOf(result).map((row) => ({ state: String(row.state), n: Number(row.n) }));
}

/** Objects listed so far by the lists still running, for the `outpost_gateway_sync_objects_listed` gauge. */
export async function objectsListedWhileListing(db: Db): Promise<number> {
  const result = await db.execute(sql`select coalesce(sum(listed), 0)::bigint as n from watch_states where not synced`);
  return Number(rowsOf(result)[0]?.n ?? 0);
}
