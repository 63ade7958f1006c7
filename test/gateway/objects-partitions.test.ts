/**
 * The object cache is partitioned by hash of account (migration 0016, src/db/object-partitions.ts), on each driver:
 * a fresh database gets the default 16 partitions or the configured count; a database of the version before (up to
 * migration 0015) with a cache keeps every row, generated columns included, and gets a table that differs from the
 * old one only by its partitioning (same columns, defaults, generated expressions, primary key and index names); the
 * migration refuses a count out of range; the start-up warning names a configured count the table does not have.
 * The plans of the cache's queries: objects-query-plans.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import { sql } from 'drizzle-orm';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import { drizzle as drizzlePostgres } from 'drizzle-orm/postgres-js';
import { migrate as migratePostgres } from 'drizzle-orm/postgres-js/migrator';
import postgres from 'postgres';
import { type Database, type Db, openDatabase } from '../../src/db/database.js';
import { countObjectPartitions, DEFAULT_OBJECT_PARTITIONS, objectPartitionsSettingSql } from '../../src/db/object-partitions.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import * as schema from '../../src/db/schema.js';
import { emptyDecodedBatch } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { objectPartitionsProblem } from '../../src/gateway/modules/setup-warnings.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';
import { migrationsUntil } from '../../testkit/migrations-until.js';
import { seedRows } from './objects-seed.js';

const migrationsFolder = fileURLToPath(new URL('../../drizzle', import.meta.url));

/** The rows of a raw query as plain objects (postgres-js answers an array subclass). */
async function query(database: Database, text: string): Promise<Record<string, unknown>[]> {
  return (await createRawQuery(database)(text, [])).map((r) => ({ ...r }));
}

/** How `objects` is partitioned: strategy, key column, and each partition with its bound and index count. */
async function layoutOf(database: Database) {
  const run = (text: string, _params: []) => query(database, text);
  const [key] = await run(
    `select p.partstrat as strategy, p.partnatts::int as columns, a.attname as column
     from pg_partitioned_table p join pg_attribute a on a.attrelid = p.partrelid and a.attnum = p.partattrs[0]
     where p.partrelid = 'objects'::regclass`,
    [],
  );
  const partitions = await run(
    `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound,
            (select count(*)::int from pg_index x where x.indrelid = c.oid) as indexes
     from pg_inherits i join pg_class c on c.oid = i.inhrelid
     where i.inhparent = 'objects'::regclass order by c.relname`,
    [],
  );
  return { key, partitions };
}

/** Partition names and bounds as migration 0016 creates them for `n` partitions, in name order. */
function expectedPartitions(n: number) {
  return Array.from({ length: n }, (_, i) => ({
    name: `objects_p${i}`,
    bound: `FOR VALUES WITH (modulus ${n}, remainder ${i})`,
    indexes: 6,
  })).sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** What drizzle's schema and every query rely on: columns, defaults, generated expressions, constraints, indexes. */
async function definitionOf(database: Database) {
  const run = (text: string, _params: []) => query(database, text);
  return {
    columns: await run(
      `select a.attname as name, format_type(a.atttypid, a.atttypmod) as type, a.attnotnull as not_null,
              a.attgenerated as generated, a.attstorage as storage, pg_get_expr(d.adbin, d.adrelid) as expression
       from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
       where a.attrelid = 'objects'::regclass and a.attnum > 0 and not a.attisdropped order by a.attnum`,
      [],
    ),
    constraints: await run(
      `select conname as name, pg_get_constraintdef(oid) as definition from pg_constraint where conrelid = 'objects'::regclass order by 1`,
      [],
    ),
    // a partitioned table's own index is defined ON ONLY the parent; otherwise the same statement
    indexes: await run(
      `select c.relname as name, replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON ') as definition
       from pg_index i join pg_class c on c.oid = i.indexrelid where i.indrelid = 'objects'::regclass order by 1`,
      [],
    ),
    options: await run(`select reloptions from pg_class where oid = 'objects'::regclass`, []),
  };
}

/** Every row, generated columns included, as JSON text in primary-key order. */
async function rowsOf(database: Database): Promise<string[]> {
  const rows = await createRawQuery(database)(
    'select row_to_json(o)::text as j from objects o order by account, kind, api_version, namespace, name',
    [],
  );
  return rows.map((r) => String(r.j));
}

/** A copy of drizzle/ whose journal ends at migration 0015: the schema of the version before partitioning. */
function migrationsBeforePartitioning(): { folder: string; remove(): void } {
  const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta', '_journal.json'), 'utf8')) as {
    entries: { idx: number; tag: string }[];
  };
  assert.equal(journal.entries.find((e) => e.idx === 16)?.tag, '0016_objects_partitioned');
  return migrationsUntil(15);
}

/**
 * Opens the database at `url` (a PGlite directory, `memory://`, or a Postgres URL) migrated only up to 0015, as the version before
 * this one left it. The caller closes it.
 */
async function openBeforePartitioning(driver: 'pglite' | 'postgres', url: string, folder: string): Promise<Database> {
  if (driver === 'pglite') {
    const client = url === 'memory://' ? new PGlite() : new PGlite(url);
    await client.waitReady;
    const db = drizzlePglite({ client, schema });
    await migratePglite(db, { migrationsFolder: folder });
    return { db: db as unknown as Db, driver, client, displayUrl: url, close: () => client.close() };
  }
  const client = postgres(url, { max: 1, onnotice: () => {} });
  const db = drizzlePostgres({ client, schema });
  await migratePostgres(db, { migrationsFolder: folder });
  return { db: db as unknown as Db, driver, client, displayUrl: url, close: () => client.end({ timeout: 5 }) };
}

for (const driver of testDrivers()) {
  describe(`the object cache is partitioned by account (${driver})`, { concurrency: false }, () => {
    const dropAfter: TestDatabase[] = [];
    const removeAfter: string[] = [];
    /** A fresh, empty place for a database: a Postgres database, or a PGlite directory (memory:// has no second open). */
    const freshUrl = async (): Promise<string> => {
      if (driver === 'pglite') {
        const dir = mkdtempSync(join(tmpdir(), 'outpost-partitions-'));
        removeAfter.push(dir);
        return dir;
      }
      const created = await createTestDatabase(driver, undefined, { empty: true });
      dropAfter.push(created);
      return created.url;
    };
    after(async () => {
      for (const d of dropAfter) await d.drop();
      for (const dir of removeAfter) rmSync(dir, { recursive: true, force: true });
    });

    test(`a new database has ${DEFAULT_OBJECT_PARTITIONS} hash partitions by account, each with every index`, async () => {
      const testDb = await createTestDatabase(driver, undefined, { empty: true });
      const database = await openDatabase(testDb.url, { maxConnections: 1 });
      try {
        const { key, partitions } = await layoutOf(database);
        assert.deepEqual(key, { strategy: 'h', columns: 1, column: 'account' });
        assert.deepEqual(partitions, expectedPartitions(DEFAULT_OBJECT_PARTITIONS));
        assert.equal(await countObjectPartitions(database.db), DEFAULT_OBJECT_PARTITIONS);
        // a partition's indexes are the table's, named with its suffix (what plans show)
        const names = await query(
          database,
          `select c.relname as name, p.relname as parent from pg_index x join pg_class c on c.oid = x.indexrelid
           join pg_inherits i on i.inhrelid = x.indexrelid join pg_class p on p.oid = i.inhparent
           where x.indrelid = 'objects_p3'::regclass order by 1`,
        );
        assert.deepEqual(
          names,
          [
            'objects_account_kind_api_version_namespace_name_pk',
            'objects_account_ns_idx',
            'objects_labels_idx',
            'objects_multi_owner_idx',
            'objects_owner_uid_idx',
            'objects_spinnaker_app_idx',
          ].map((parent) => ({ name: `${parent}_p3`, parent })),
        );
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    test('a configured count gives that many partitions, and rows spread over them by account', async () => {
      const testDb = await createTestDatabase(driver, undefined, { empty: true });
      const database = await openDatabase(testDb.url, { maxConnections: 1, objectPartitions: 5 });
      try {
        assert.deepEqual((await layoutOf(database)).partitions, expectedPartitions(5));
        await createObjectWriter(database).write({ ...emptyDecodedBatch(), upserts: seedRows(20) });
        const spread = await createRawQuery(database)(
          'select tableoid::regclass::text as partition, count(distinct account)::int as accounts from objects group by 1 order by 1',
          [],
        );
        assert.ok(spread.length >= 3, `20 accounts land in several of the 5 partitions: ${JSON.stringify(spread)}`);
        const homes = await createRawQuery(database)('select account, count(distinct tableoid)::int as n from objects group by 1', []);
        assert.ok(
          homes.every((r) => r.n === 1),
          'all of an account is in one partition',
        );
      } finally {
        await database.close();
        await testDb.drop();
      }
    });

    test('the upgrade from migration 0015 keeps every row and the table definition, partitioned as configured', async () => {
      const old = migrationsBeforePartitioning();
      try {
        const url = await freshUrl();
        const before = await openBeforePartitioning(driver, url, old.folder);
        let rowsBefore: string[];
        let definitionBefore: Awaited<ReturnType<typeof definitionOf>>;
        try {
          assert.equal(await countObjectPartitions(before.db), 0, 'not partitioned before 0016');
          await createObjectWriter(before).write({ ...emptyDecodedBatch(), upserts: seedRows(25) });
          rowsBefore = await rowsOf(before);
          definitionBefore = await definitionOf(before);
        } finally {
          await before.close();
        }
        assert.equal(rowsBefore.length, 25 * 27);
        const upgraded = await openDatabase(url, { maxConnections: 1, objectPartitions: 8 });
        try {
          assert.deepEqual((await layoutOf(upgraded)).partitions, expectedPartitions(8));
          assert.deepEqual(await rowsOf(upgraded), rowsBefore, 'every row, generated columns included');
          assert.deepEqual(await definitionOf(upgraded), definitionBefore);
          // the copied rows are reachable through the indexes built after the copy
          const [one] = await createRawQuery(upgraded)(
            "select count(*)::int as n from objects where account = 'acct-07' and kind = 'Pod' and owner_uid is not null",
            [],
          );
          assert.equal(one!.n, 10);
        } finally {
          await upgraded.close();
        }
        // opened again with another count: nothing changes, and the warning says so
        const again = await openDatabase(url, { maxConnections: 1, objectPartitions: 32 });
        try {
          const actual = await countObjectPartitions(again.db);
          assert.equal(actual, 8);
          assert.match(objectPartitionsProblem(actual, 32) ?? '', /cache\.objectPartitions is 32 but the objects table has 8 partitions/);
          assert.equal(objectPartitionsProblem(actual, 8), undefined);
        } finally {
          await again.close();
        }
      } finally {
        old.remove();
      }
    });

    test('the migration refuses a partition count out of range, and so does openDatabase', async () => {
      // checked before anything is opened
      await assert.rejects(openDatabase('memory://', { objectPartitions: 0 }), /from 1 to 1024, not 0/);
      await assert.rejects(openDatabase('postgres://127.0.0.1:1/none', { objectPartitions: 2.5 }), /from 1 to 1024, not 2.5/);
      // a migration run by hand with a bad setting: the DO block's own check
      const old = migrationsBeforePartitioning();
      const database = await openBeforePartitioning(driver, driver === 'pglite' ? 'memory://' : await freshUrl(), old.folder);
      try {
        await database.db.execute(sql`select set_config('outpost.object_partitions', '2000', false)`);
        await assert.rejects(migrateAll(database), (err: Error) =>
          /outpost\.object_partitions must be a whole number from 1 to 1024, not "2000"/.test(
            String((err.cause as Error | undefined)?.message),
          ),
        );
        assert.equal(await countObjectPartitions(database.db), 0, 'the failed migration left the old table');
        await database.db.execute(objectPartitionsSettingSql(3));
        await migrateAll(database);
        assert.equal(await countObjectPartitions(database.db), 3);
      } finally {
        await database.close();
        old.remove();
      }
    });
  });
}

/** Applies every migration of drizzle/ with the setting already on the database's connection. */
async function migrateAll(database: Database): Promise<void> {
  if (database.driver === 'pglite') await migratePglite(database.db as never, { migrationsFolder });
  else await migratePostgres(database.db as never, { migrationsFolder });
}
