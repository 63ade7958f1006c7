/**
 * Counting the Postgres writes of gateway replicas while they idle (the replica-scale scenario): renewal and touch
 * statements each stamp all the rows they update with one `now()`, so polling the rows grouped by replica and stamp
 * counts the statements and their rows; Postgres' own counters (`pg_stat_database`, `pg_stat_user_tables`) give the
 * totals.
 */
import type { ReplicaSet } from './replicas.js';

/** New `(gateway, stamp)` groups seen while polling: each is one statement; its rows are the largest count seen. */
export function countStatements(
  baseline: ReadonlySet<string>,
  polls: { gateway_id: string; t: string; n: number }[][],
): Map<string, { statements: number; rows: number }> {
  const rows = new Map<string, { gateway: string; n: number }>();
  for (const poll of polls) {
    for (const g of poll) {
      const key = `${g.gateway_id}\n${g.t}`;
      if (baseline.has(key)) continue;
      const seen = rows.get(key);
      rows.set(key, { gateway: g.gateway_id, n: Math.max(seen?.n ?? 0, g.n) });
    }
  }
  const out = new Map<string, { statements: number; rows: number }>();
  for (const { gateway, n } of rows.values()) {
    const o = out.get(gateway) ?? { statements: 0, rows: 0 };
    out.set(gateway, { statements: o.statements + 1, rows: o.rows + n });
  }
  return out;
}

/** One `(gateway, stamp)` group of a poll and its row count. */
export type Group = { gateway_id: string; t: string; n: number };
/** Lease rows grouped by holder and expiry: one group per renewal statement. */
export const LEASE_GROUPS =
  'select gateway_id, lease_expires_at::text as t, count(*)::int as n from accounts where gateway_id is not null and lease_expires_at is not null group by 1, 2';
/** Open session rows grouped by replica and last touch: one group per touch statement. */
export const TOUCH_GROUPS =
  'select gateway_id, last_seen_at::text as t, count(*)::int as n from agent_sessions where ended_at is null group by 1, 2';
/** The groups of a poll as keys, to leave out of {@link countStatements} as its baseline. */
export const keysOf = (groups: Group[]) => new Set(groups.map((g) => `${g.gateway_id}\n${g.t}`));

/** Postgres' counters of the run's database. */
export async function readCounters(
  set: ReplicaSet,
): Promise<{ xact: number; tupUpdated: number; tupInserted: number; tables: Record<string, number>; hot: Record<string, number> }> {
  const [db] = await set.sql<{ xact: string; upd: string; ins: string }>(
    'select xact_commit::text as xact, tup_updated::text as upd, tup_inserted::text as ins from pg_stat_database where datname = current_database()',
  );
  // a partition's rows count for its table (objects is partitioned by account: migration 0016)
  const tables = await set.sql<{ relname: string; n: string; hot: string }>(
    `select coalesce(p.relname, s.relname) as relname, sum(s.n_tup_upd)::text as n, sum(s.n_tup_hot_upd)::text as hot
     from pg_stat_user_tables s left join pg_inherits i on i.inhrelid = s.relid left join pg_class p on p.oid = i.inhparent
     group by 1`,
  );
  return {
    xact: Number(db!.xact),
    tupUpdated: Number(db!.upd),
    tupInserted: Number(db!.ins),
    tables: Object.fromEntries(tables.map((t) => [t.relname, Number(t.n)])),
    hot: Object.fromEntries(tables.map((t) => [t.relname, Number(t.hot)])),
  };
}
