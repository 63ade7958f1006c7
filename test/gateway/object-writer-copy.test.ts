/**
 * The COPY path of the object writer (object-writer.ts): rows of a full list whose scope held nothing are appended
 * with COPY on Postgres. It must store exactly what the single upsert statement stores, replace and prune on a
 * resync, write nothing for a stale lease epoch, and fall back to the upsert when a copied row meets a stored one.
 * On PGlite `copyable` is ignored (the upsert path), so the same expectations hold there too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../src/db/database.js';
import { rowsOf } from '../../src/db/query-helpers.js';
import type { DecodedBatch, ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter, type ObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { createSyncState, type SyncState, type WatchScope } from '../../src/gateway/cache/sync-state.js';
import { isLeaseLost, type WriteFence } from '../../src/gateway/replicas/lease-fence.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

/** Text that COPY's text format must escape, and some that it must not touch. */
const AWKWARD = 'tab\there, newline\nthere, cr\rback\\slash, quote", unicode é ✓ 😀, \\N, \\t literal';

function row(account: string, name: string, rv: string, syncGen: number, note = AWKWARD): ObjectRow {
  const object = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'ns', resourceVersion: rv, labels: { app: name, 'tier\\x': 'a\tb' } },
    data: { note, n: name },
  };
  return {
    account,
    api_version: 'v1',
    kind: 'ConfigMap',
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resource_version: rv,
    labels: object.metadata.labels,
    // Agent bytes may carry whitespace the decoder keeps as is.
    object: JSON.stringify(object, null, '\t'),
    watch_namespace: '',
    sync_gen: syncGen,
  };
}

function batch(rows: ObjectRow[], accounts = [...new Set(rows.map((r) => r.account))]): DecodedBatch {
  const last = rows.at(-1);
  return {
    upserts: rows,
    deletes: [],
    scopes: last
      ? [{ account: last.account, api_version: 'v1', kind: 'ConfigMap', watch_namespace: '', resource_version: last.resource_version }]
      : [],
    accounts,
    eventCounts: Object.fromEntries(accounts.map((a) => [a, rows.filter((r) => r.account === a).length])),
    droppedReleased: 0,
    droppedStale: 0,
    scrubbedSecrets: [],
  };
}

for (const driver of testDrivers()) {
  describe(`object writer COPY path (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let writer: ObjectWriter;
    let syncState: SyncState;
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
      writer = createObjectWriter(database);
      syncState = createSyncState(database);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });
    const q = async (text: string) => [...rowsOf(await database.db.execute(sql.raw(text)))];
    const rows = (account: string) =>
      q(`select name, uid, resource_version, labels::text as labels, object::text as object, watch_namespace, sync_gen::int as sync_gen
         from objects where account = '${account}' order by name`);
    const lease = async (account: string, session: string, epoch: number) => {
      await q(`insert into accounts (name, session_id, lease_epoch, lease_expires_at) values ('${account}', '${session}', ${epoch}, now() + interval '1 hour')
               on conflict (name) do update set session_id = excluded.session_id, lease_epoch = excluded.lease_epoch, lease_expires_at = excluded.lease_expires_at`);
    };
    const fence = (account: string, session: string, epoch: number): WriteFence => ({
      sessionId: session,
      leases: [{ name: account, epoch }],
    });
    const scope = (account: string): WatchScope => ({ account, apiVersion: 'v1', kind: 'ConfigMap', watchNamespace: '' });

    test('a fresh list stores exactly the rows the upsert statement stores, and a resync replaces and prunes them', async () => {
      await lease('copied', 's1', 1);
      await lease('upserted', 's1', 1);
      const results: unknown[][] = [];
      for (const [account, copy] of [
        ['copied', true],
        ['upserted', false],
      ] as const) {
        const first = await syncState.startList(scope(account), fence(account, 's1', 1));
        assert.equal(first.empty, true, 'nothing held yet');
        const names = ['a', 'b', 'c', 'd'];
        await writer.write(
          batch(names.slice(0, 2).map((n) => row(account, n, '10', first.generation))),
          fence(account, 's1', 1),
          copy ? () => true : undefined,
        );
        await writer.write(
          batch(names.slice(2).map((n) => row(account, n, '11', first.generation))),
          fence(account, 's1', 1),
          copy ? () => true : undefined,
        );
        assert.equal(await syncState.endList(scope(account), first.generation, '11', 4, fence(account, 's1', 1)), 0);
        // The resync (the scope is not empty now: upserts) replaces b and c at lower versions and prunes a and d.
        const second = await syncState.startList(scope(account), fence(account, 's1', 1));
        assert.equal(second.empty, false);
        await writer.write(batch(['b', 'c'].map((n) => row(account, n, '5', second.generation, `resynced ${n}`))), fence(account, 's1', 1));
        assert.equal(await syncState.endList(scope(account), second.generation, '5', 2, fence(account, 's1', 1)), 2);
        results.push(await rows(account));
      }
      assert.deepEqual(results[0], results[1]);
      assert.deepEqual(
        (results[0] as { name: string; resource_version: string }[]).map((r) => [r.name, r.resource_version]),
        [
          ['b', '5'],
          ['c', '5'],
        ],
      );
    });

    test('the copied rows keep the awkward text byte for byte', async () => {
      await lease('bytes', 's1', 1);
      const start = await syncState.startList(scope('bytes'), fence('bytes', 's1', 1));
      const written = row('bytes', 'x', '1', start.generation);
      await writer.write(batch([written]), fence('bytes', 's1', 1), () => true);
      const [stored] = (await rows('bytes')) as { object: string; labels: string }[];
      assert.deepEqual(JSON.parse(stored!.object), JSON.parse(written.object));
      assert.deepEqual(JSON.parse(stored!.labels), written.labels);
    });

    test('a writer with a stale epoch is refused and its copied rows are not written', async () => {
      await lease('fenced', 's1', 1);
      const start = await syncState.startList(scope('fenced'), fence('fenced', 's1', 1));
      await lease('fenced', 's2', 2); // taken over: a new session and epoch
      await assert.rejects(
        writer.write(batch([row('fenced', 'a', '1', start.generation)]), fence('fenced', 's1', 1), () => true),
        (err) => isLeaseLost(err) && err.accounts.join() === 'fenced',
      );
      assert.deepEqual(await rows('fenced'), []);
      // Two accounts in one batch, one of them lost: the held one's rows are copied, the other's are not.
      await lease('kept', 's2', 2);
      const kept = await syncState.startList(scope('kept'), fence('kept', 's2', 2));
      await assert.rejects(
        writer.write(
          batch([row('kept', 'k', '1', kept.generation), row('fenced', 'f', '1', start.generation)]),
          {
            sessionId: 's2',
            leases: [
              { name: 'kept', epoch: 2 },
              { name: 'fenced', epoch: 1 },
            ],
          },
          () => true,
        ),
        (err) => isLeaseLost(err) && err.accounts.join() === 'fenced',
      );
      assert.deepEqual(
        ((await rows('kept')) as { name: string }[]).map((r) => r.name),
        ['k'],
      );
      assert.deepEqual(await rows('fenced'), []);
    });

    test('a copied row that meets a stored one falls back to the upsert (newer wins, nothing doubled)', async () => {
      await lease('dup', 's1', 1);
      const start = await syncState.startList(scope('dup'), fence('dup', 's1', 1));
      await writer.write(batch([row('dup', 'a', '3', start.generation)]), fence('dup', 's1', 1), () => true);
      await writer.write(
        batch([row('dup', 'a', '4', start.generation, 'newer'), row('dup', 'b', '4', start.generation)]),
        fence('dup', 's1', 1),
        () => true,
      );
      const stored = (await rows('dup')) as { name: string; resource_version: string; object: string }[];
      assert.deepEqual(
        stored.map((r) => [r.name, r.resource_version, JSON.parse(r.object).data.note]),
        [
          ['a', '4', 'newer'],
          ['b', '4', AWKWARD],
        ],
      );
      const [counted] = await q(`select events_total::int as n from accounts where name = 'dup'`);
      assert.equal(counted!.n, 3, 'the fallback counts the batch once');
    });
  });
}
