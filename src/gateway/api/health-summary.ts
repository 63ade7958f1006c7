/**
 * ObjectService.SummarizeHealth: per account, how many cached workloads are in each health state.
 *
 * How it stays cheap with thousands of objects: only rows of kinds with status rules are read (`kind in (…)`, a
 * prefix of the primary key after the account), each reduced in SQL to the few fields the rules read
 * (cache/object-reads.ts: no pod specs, no templates), in keyset-ordered batches of BATCH rows so memory stays bounded
 * however large the cache; the health is then computed in the gateway by the one status model (the rules are code,
 * not SQL, so they cannot drift from what the Spinnaker API answers). Cost is linear in the number of workloads,
 * a few hundred bytes each.
 */
import type { AccountHealth, SummarizeHealthResponse } from '../../gen/outpost/api/v1/object_service_pb.js';
import type { Database } from '../../db/database.js';
import type { ObjectKey } from '../cache/object-key-order.js';
import { readStatusInputPage } from '../cache/object-reads.js';
import { STATUS_RULE_KINDS } from '../status/manifest-status.js';
import { workloadHealth } from '../status/workload-health.js';

/** Rows read per query. */
const BATCH = 2000;

/** Counts the workloads of `account` (every account when empty), one entry per account with any, by name. */
export async function summarizeHealth(database: Database, account: string): Promise<SummarizeHealthResponse> {
  const { db } = database;
  const counts = new Map<string, AccountHealth>();
  let after: ObjectKey | undefined;
  for (;;) {
    const rows = await readStatusInputPage(db, { kinds: STATUS_RULE_KINDS, account, after, limit: BATCH });
    for (const row of rows) {
      const health = workloadHealth(row.input);
      if (!health) continue; // a kind name shared with a custom group (example.com/v1 Pod)
      let entry = counts.get(row.account);
      if (!entry) {
        entry = {
          $typeName: 'outpost.api.v1.AccountHealth',
          account: row.account,
          healthy: 0,
          progressing: 0,
          degraded: 0,
          paused: 0,
          unknown: 0,
        };
        counts.set(row.account, entry);
      }
      const field = health.health.toLowerCase() as 'healthy' | 'progressing' | 'degraded' | 'paused' | 'unknown';
      entry[field] += 1;
    }
    if (rows.length < BATCH) break;
    const last = rows[rows.length - 1]!;
    after = [last.account, last.kind, last.apiVersion, last.namespace, last.name];
  }
  const accounts = [...counts.values()].sort((a, b) => (a.account < b.account ? -1 : a.account > b.account ? 1 : 0));
  return { $typeName: 'outpost.api.v1.SummarizeHealthResponse', accounts };
}
