/**
 * The cache at fleet scale, partitioned and not (issue 36; docs/scaling.md, "The object cache's partitions"): two
 * Postgres databases — one as migrated (objects hash-partitioned by account, the default count), one with the table of
 * migration 0015 (one table) — are filled side by side by the server-side generator (bench/cache-generator.ts:
 * `accounts` × 200 objects), vacuumed and analyzed; then, alternating between the two request by request, ListObjects (the object
 * service's own query path, through drizzle on postgres-js) by account, by account and kind, by account, kind and
 * namespace, by account and label selector, and by a rare label across all accounts; the object writer's statement
 * for batches of 10 accounts × 10 changed pods (as the write coalescer groups them); the table's and its indexes'
 * sizes. Last, the partitioned database is dropped and the one-table database is upgraded by migration 0016 (timed):
 * the cost of converting today's table, which needs room for a second copy of it. Both databases are dropped.
 */
import { create } from '@bufbuild/protobuf';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres, { type Sql } from 'postgres';
import { type Database, type Db, openDatabase } from '../../src/db/database.js';
import { DEFAULT_OBJECT_PARTITIONS } from '../../src/db/object-partitions.js';
import * as schema from '../../src/db/schema.js';
import { ListObjectsRequestSchema } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { createObjectService } from '../../src/gateway/api/object-service.js';
import { emptyDecodedBatch, type ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { createTestDatabase, type TestDatabase } from '../../testkit/databases.js';
import { migrationsUntil } from '../../testkit/migrations-until.js';
import { createRng } from '../../testkit/rng.js';
import { generateCache, generatedAccount, generatedPod, generatedPodTemplateHash, OBJECTS_PER_ACCOUNT } from '../cache-generator.js';
import { summarize } from '../machine.js';

/** Parameters of the scenario. */
export interface CachePartitionsParams {
  postgresUrl: string;
  /** Generated accounts (200 objects each). */
  accounts: number;
  /** Requests of each ListObjects form, and write batches, per layout. */
  requests: number;
}

/** The two layouts compared. */
export const LAYOUTS = ['partitioned', 'one table'] as const;
type Layout = (typeof LAYOUTS)[number];

/** The ListObjects forms measured. */
export const LIST_FORMS = ['account', 'account + kind', 'account + kind + namespace', 'account + label', 'label, all accounts'] as const;
type ListForm = (typeof LIST_FORMS)[number];

/** Latency percentiles of one measured form, ms. */
interface Latency {
  n: number;
  p50: number;
  p99: number;
}

/** What one layout measured. */
interface LayoutResult {
  partitions: number;
  loadSeconds: number;
  /** Heap and TOAST of the table (all partitions), bytes. */
  tableBytes: number;
  /** Every index of the table (all partitions), bytes. */
  indexBytes: number;
  list: Record<ListForm, Latency>;
  /** The object writer's statement for one batch (10 accounts × 10 pods). */
  write: Latency;
}

/** The scenario's result. */
export interface CachePartitionsResult {
  rows: number;
  /** The two databases were loaded at the same time (each `loadSeconds` was measured while the other loaded). */
  loadedSideBySide: true;
  layouts: Record<Layout, LayoutResult>;
  /** Migration 0016 on the one-table database: seconds, and the database's size before and after. */
  upgrade: { seconds: number; bytesBefore: number; bytesAfter: number };
}

const WRITE_ACCOUNTS = 10;
const WRITE_PODS = 10;

/** A Database over `url` that runs no migration (the one-table layout must stay as it is). */
function databaseAt(url: string): Database {
  const client = postgres(url, { max: 2, onnotice: () => {} });
  return {
    db: drizzlePostgres({ client, schema }) as unknown as Db,
    driver: 'postgres',
    client,
    displayUrl: url,
    close: () => client.end({ timeout: 5 }),
  };
}

/** Bytes of the table and of its indexes, summed over its partitions when it has any. */
async function sizesOf(sql: Sql): Promise<{ tableBytes: number; indexBytes: number; partitions: number }> {
  const [row] = await sql<{ table: string; indexes: string; partitions: number }[]>`
    with parts as (
      select inhrelid as rel from pg_inherits where inhparent = 'objects'::regclass
      union all select 'objects'::regclass where not exists (select 1 from pg_inherits where inhparent = 'objects'::regclass)
    )
    select sum(pg_table_size(rel))::text as table, sum(pg_indexes_size(rel))::text as indexes,
           (select count(*)::int from pg_inherits where inhparent = 'objects'::regclass) as partitions
    from parts`;
  return { tableBytes: Number(row!.table), indexBytes: Number(row!.indexes), partitions: row!.partitions };
}

/** Creates, migrates and fills one layout's database; its load time in seconds. */
async function prepare(layout: Layout, url: string, accounts: number): Promise<number> {
  if (layout === 'partitioned') {
    const migrated = await openDatabase(url, { maxConnections: 1 });
    await migrated.close();
  } else {
    const old = migrationsUntil(15);
    const client = postgres(url, { max: 1, onnotice: () => {} });
    try {
      await migratePostgres(drizzlePostgres({ client }), { migrationsFolder: old.folder });
    } finally {
      await client.end({ timeout: 5 });
      old.remove();
    }
  }
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const t0 = performance.now();
    let reported = 0;
    await generateCache(sql, 0, accounts, {
      progress: (written) => {
        if (written - reported >= Math.max(1000, accounts / 10) || written === accounts) {
          reported = written;
          console.log(
            `cache-partitions: ${layout}: ${written}/${accounts} accounts written (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
          );
        }
      },
    });
    const seconds = (performance.now() - t0) / 1000;
    await sql.unsafe('vacuum analyze objects');
    return seconds;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Runs the scenario. */
export async function runCachePartitions(p: CachePartitionsParams): Promise<CachePartitionsResult> {
  const created: Partial<Record<Layout, TestDatabase>> = {};
  const opened: Database[] = [];
  try {
    for (const layout of LAYOUTS) created[layout] = await createTestDatabase('postgres', p.postgresUrl, { empty: true });
    // Both loads run side by side, one connection each (the server's work is CPU-bound: two cores halve the wait at
    // 20 million rows a database); each layout's load rate is its own statement's, measured while the other ran.
    const loadSeconds = Object.fromEntries(
      await Promise.all(LAYOUTS.map(async (layout) => [layout, await prepare(layout, created[layout]!.url, p.accounts)] as const)),
    ) as Record<Layout, number>;
    const databases = {} as Record<Layout, Database>;
    for (const layout of LAYOUTS) opened.push((databases[layout] = databaseAt(created[layout]!.url)));
    const rng = createRng(36);
    const account = () => rng.int(0, p.accounts - 1);
    const forms: Record<ListForm, () => Record<string, string | number>> = {
      account: () => ({ account: generatedAccount(account()) }),
      'account + kind': () => ({ account: generatedAccount(account()), kind: 'Pod' }),
      'account + kind + namespace': () => ({ account: generatedAccount(account()), kind: 'Pod', namespace: `ns-${rng.int(0, 3)}` }),
      'account + label': () => ({ account: generatedAccount(account()), labelSelector: `app=app-${rng.int(0, 9)}` }),
      'label, all accounts': () => ({ labelSelector: `pod-template-hash=${generatedPodTemplateHash(account(), rng.int(0, 19))}` }),
    };
    const timings = Object.fromEntries(
      LAYOUTS.map((l) => [l, { list: {} as Record<ListForm, number[]>, write: [] as number[] }]),
    ) as Record<Layout, { list: Record<ListForm, number[]>; write: number[] }>;
    const timed = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    for (const form of LIST_FORMS) {
      for (const layout of LAYOUTS) timings[layout].list[form] = [];
      for (let i = 0; i < p.requests; i++) {
        const fields = forms[form]();
        // the same request on both, in alternating order
        for (const layout of i % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
          const service = createObjectService(databases[layout]);
          const ms = await timed(
            () => service.listObjects!(create(ListObjectsRequestSchema, fields), undefined as never) as Promise<unknown>,
          );
          timings[layout].list[form].push(ms);
        }
      }
    }
    const writers = Object.fromEntries(LAYOUTS.map((l) => [l, createObjectWriter(databases[l])])) as Record<
      Layout,
      ReturnType<typeof createObjectWriter>
    >;
    for (let i = 0; i < p.requests; i++) {
      const batch = { ...emptyDecodedBatch(), upserts: changedPods(rng, p.accounts, i) };
      batch.accounts = [...new Set(batch.upserts.map((r) => r.account))];
      batch.eventCounts = Object.fromEntries(batch.accounts.map((a) => [a, WRITE_PODS]));
      for (const layout of i % 2 === 0 ? LAYOUTS : [...LAYOUTS].reverse()) {
        timings[layout].write.push(await timed(() => writers[layout].write(batch)));
        // each batch replaced stored pods (an update, not an insert)
        const [first] = batch.upserts;
        const [stored] = await (databases[layout].client as Sql)<{ rv: string }[]>`
          select resource_version as rv from objects
          where account = ${first!.account} and kind = 'Pod' and namespace = ${first!.namespace} and name = ${first!.name}`;
        if (stored?.rv !== first!.resource_version) {
          throw new Error(`${layout}: the write batch did not replace the stored pods (${JSON.stringify(stored)})`);
        }
      }
    }
    const layouts = {} as Record<Layout, LayoutResult>;
    for (const layout of LAYOUTS) {
      const [{ n }] = (await (databases[layout].client as Sql)`select count(*)::int as n from objects`) as unknown as [{ n: number }];
      if (n !== p.accounts * OBJECTS_PER_ACCOUNT) throw new Error(`${layout}: ${n} rows, not ${p.accounts * OBJECTS_PER_ACCOUNT}`);
      const sizes = await sizesOf(databases[layout].client as Sql);
      const latency = (xs: number[]): Latency => {
        const s = summarize(xs);
        return { n: s.n, p50: s.p50, p99: s.p99 };
      };
      layouts[layout] = {
        partitions: sizes.partitions,
        loadSeconds: loadSeconds[layout],
        tableBytes: sizes.tableBytes,
        indexBytes: sizes.indexBytes,
        list: Object.fromEntries(LIST_FORMS.map((f) => [f, latency(timings[layout].list[f])])) as Record<ListForm, Latency>,
        write: latency(timings[layout].write),
      };
    }
    if (layouts.partitioned.partitions !== DEFAULT_OBJECT_PARTITIONS) throw new Error('the partitioned database has another count');
    for (const d of opened.splice(0)) await d.close();
    // The upgrade needs room for a second copy of the one table: the partitioned database goes first (at 20 million
    // rows each database is tens of gigabytes).
    await created.partitioned!.drop();
    delete created.partitioned;
    const upgrade = await timeUpgrade(created['one table']!.url);
    return { rows: p.accounts * OBJECTS_PER_ACCOUNT, loadedSideBySide: true, layouts, upgrade };
  } finally {
    for (const d of opened) await d.close();
    for (const d of Object.values(created)) await d.drop();
  }
}

/**
 * A write batch: WRITE_PODS cached pods in each of WRITE_ACCOUNTS accounts, each with a new status and a newer
 * resourceVersion, so the writer's upsert replaces the stored rows (a MODIFIED event's path).
 */
function changedPods(rng: ReturnType<typeof createRng>, accounts: number, round: number): ObjectRow[] {
  const rows: ObjectRow[] = [];
  const chosen = new Set<number>();
  while (chosen.size < Math.min(WRITE_ACCOUNTS, accounts)) chosen.add(rng.int(0, accounts - 1));
  for (const i of chosen) {
    const first = rng.int(0, 80 - WRITE_PODS);
    for (let n = 0; n < WRITE_PODS; n++) {
      const pod = generatedPod(i, first + n);
      const resourceVersion = String(1_000_000_000 + round);
      const object = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: pod.name, namespace: pod.namespace, uid: pod.uid, labels: pod.labels, resourceVersion },
        spec: { containers: [{ name: 'main', image: 'registry.example.com/app:2.0' }] },
        status: { phase: 'Running', containerStatuses: [{ name: 'main', ready: round % 2 === 0, restartCount: round }] },
      };
      rows.push({
        account: pod.account,
        api_version: 'v1',
        kind: 'Pod',
        namespace: pod.namespace,
        name: pod.name,
        uid: pod.uid,
        resource_version: resourceVersion,
        labels: pod.labels,
        object: JSON.stringify(object),
        watch_namespace: '',
        sync_gen: 1,
      });
    }
  }
  return rows;
}

/** Migration 0016 on a database of migration 0015, timed, with the database's size before and after. */
async function timeUpgrade(url: string): Promise<CachePartitionsResult['upgrade']> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const size = async () => Number((await sql<{ n: string }[]>`select pg_database_size(current_database())::text as n`)[0]!.n);
    const bytesBefore = await size();
    const t0 = performance.now();
    const upgraded = await openDatabase(url, { maxConnections: 1 });
    const seconds = (performance.now() - t0) / 1000;
    await upgraded.close();
    return { seconds, bytesBefore, bytesAfter: await size() };
  } finally {
    await sql.end({ timeout: 5 });
  }
}
