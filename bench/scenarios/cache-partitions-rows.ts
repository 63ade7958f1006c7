/**
 * Table rows of the cache-partitions scenario (one run: its percentiles are over the requests of that run, each
 * request asked of both layouts). No target: the figures compare the two layouts of the same rows (docs/scaling.md
 * reads them).
 */
import { figureRow, type Row } from '../rows.js';
import { LAYOUTS, LIST_FORMS, type CachePartitionsParams, type CachePartitionsResult } from './cache-partitions.js';

/** How the run was set up (printed above the table). */
export function cachePartitionsNote(p: Omit<CachePartitionsParams, 'postgresUrl'>): string {
  return (
    `Cache partitions: two Postgres databases, objects hash-partitioned by account (the default count) and one table (migration 0015), ` +
    `each filled by the server-side generator with ${p.accounts.toLocaleString('en-US')} accounts × 200 objects (Deployments, ` +
    'ReplicaSets, Pods, Services, ConfigMaps with labels, namespaces, owner references), then VACUUM ANALYZE. ' +
    `${p.requests} ListObjects of each form (the object service's query path, first page of 100) and ${p.requests} write batches ` +
    '(the object writer, 10 accounts × 10 changed pods) on each, the same request on both in alternating order. Last, migration 0016 ' +
    'converts the one-table database (timed). Both databases are dropped.'
  );
}

/** The rows of a run. */
export function cachePartitionsRows(r: CachePartitionsResult): Row[] {
  const s = `cache partitions (${r.rows.toLocaleString('en-US')} rows)`;
  const ms = (measure: string, value: number) => figureRow(s, measure, [value], { digits: value < 10 ? 2 : 1 });
  const mib = (measure: string, bytes: number) => figureRow(s, measure, [bytes / 2 ** 20], { digits: 0 });
  const rows: Row[] = [];
  for (const layout of LAYOUTS) {
    const l = r.layouts[layout];
    const name = layout === 'partitioned' ? `${l.partitions} partitions` : 'one table';
    for (const form of LIST_FORMS) {
      rows.push(
        ms(`${name}: ListObjects by ${form}, p50 ms`, l.list[form].p50),
        ms(`${name}: ListObjects by ${form}, p99 ms`, l.list[form].p99),
      );
    }
    rows.push(
      ms(`${name}: write batch (10 accounts × 10 pods), p50 ms`, l.write.p50),
      ms(`${name}: write batch, p99 ms`, l.write.p99),
      mib(`${name}: table (heap + TOAST), MiB`, l.tableBytes),
      mib(`${name}: indexes, MiB`, l.indexBytes),
      figureRow(s, `${name}: generated load (both layouts loading side by side), rows/s`, [r.rows / l.loadSeconds], { digits: 0 }),
    );
  }
  rows.push(
    figureRow(s, 'migration 0016 on the one table, s', [r.upgrade.seconds], { digits: 1 }),
    mib('database before migration 0016, MiB', r.upgrade.bytesBefore),
    mib('database after migration 0016, MiB', r.upgrade.bytesAfter),
  );
  return rows;
}
