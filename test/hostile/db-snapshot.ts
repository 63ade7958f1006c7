/**
 * A comparable picture of every gateway table, to prove that refused input changed nothing: one digest per row,
 * with the row's key names (account name, agent id, operation id) so rows an accepted input legitimately touched can
 * be set aside. Columns that move by themselves (lease renewals, liveness touches, replica heartbeats) are left out
 * of the digest; nothing else is.
 */

/** One row: its table, the names it belongs to, and a digest of everything else in it. */
export interface SnapshotRow {
  table: string;
  keys: string[];
  digest: string;
}

/** Runs SQL, returning plain rows (the test gateway's `query`). */
export type Query = <T = Record<string, unknown>>(text: string) => Promise<T[]>;

/** Every table the gateway writes, how a row is keyed, and which self-moving columns its digest skips. */
const TABLES: readonly { table: string; keys: string[]; volatile: string[] }[] = [
  { table: 'accounts', keys: ['name'], volatile: ['lease_expires_at'] },
  { table: 'account_transitions', keys: ['account'], volatile: [] },
  { table: 'agent_sessions', keys: ['agent_id'], volatile: ['last_seen_at'] },
  { table: 'objects', keys: ['account'], volatile: [] },
  { table: 'watch_states', keys: ['account'], volatile: [] },
  { table: 'operations', keys: ['account', 'id'], volatile: [] },
  { table: 'replicas', keys: ['id'], volatile: ['last_heartbeat_at'] },
];

/** Reads every row of every table (digests computed by the database). */
export async function takeSnapshot(query: Query): Promise<SnapshotRow[]> {
  const parts = await Promise.all(
    TABLES.map(async ({ table, keys, volatile }) => {
      const minus = volatile.map((c) => ` - '${c}'`).join('');
      const rows = await query<Record<string, string>>(
        `select ${keys.map((k, i) => `${k}::text as k${i}`).join(', ')}, md5((to_jsonb(t)${minus})::text) as digest from ${table} t`,
      );
      return rows.map((r) => ({ table, keys: keys.map((_, i) => r[`k${i}`] ?? ''), digest: r.digest! }));
    }),
  );
  return parts.flat();
}

/**
 * What changed between two snapshots, ignoring rows keyed by any name in `ignored`: a description per added, removed
 * or changed row (empty when nothing did).
 */
export function snapshotDifferences(before: SnapshotRow[], after: SnapshotRow[], ignored: ReadonlySet<string>): string[] {
  const kept = (rows: SnapshotRow[]) => rows.filter((r) => !r.keys.some((k) => ignored.has(k)));
  const count = (rows: SnapshotRow[]) => {
    const m = new Map<string, { row: SnapshotRow; n: number }>();
    for (const row of kept(rows)) {
      const id = `${row.table}\u0000${row.keys.join('\u0000')}\u0000${row.digest}`;
      const entry = m.get(id);
      if (entry) entry.n++;
      else m.set(id, { row, n: 1 });
    }
    return m;
  };
  const was = count(before);
  const now = count(after);
  const out: string[] = [];
  for (const [id, { row, n }] of was) {
    const left = n - (now.get(id)?.n ?? 0);
    if (left > 0) out.push(`${row.table} row ${JSON.stringify(row.keys)} changed or removed`);
  }
  for (const [id, { row, n }] of now) {
    const added = n - (was.get(id)?.n ?? 0);
    if (added > 0) out.push(`${row.table} row ${JSON.stringify(row.keys)} added or changed`);
  }
  return out;
}
