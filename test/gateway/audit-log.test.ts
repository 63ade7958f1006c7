/**
 * The audit log over both drivers: recorded entries are listed newest first with filters and paging, bad filters are
 * INVALID_ARGUMENT, every entry has a JSON log line at once (metadata only), the retention purge deletes only entries
 * past it (clock injected) in bounded batches, and a database that is down never blocks or fails `record` — the
 * queue stays bounded and what it drops is counted.
 */
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createAuditLog, type AuditLog } from '../../src/gateway/audit/audit-log.js';
import { createAuditPurge } from '../../src/gateway/audit/audit-purge.js';
import { createAuditStore, type StoredEntryFields } from '../../src/gateway/audit/audit-store.js';
import { createLogger, createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';

const T0 = new Date('2026-03-01T12:00:00.000Z');

function entry(over: Partial<StoredEntryFields> = {}): StoredEntryFields {
  return {
    kind: 'kube',
    stage: 'completed',
    requestId: 'req-1',
    principal: 'token:alice',
    groups: ['platform'],
    account: 'prod',
    verb: 'get',
    apiGroup: 'apps',
    resource: 'deployments',
    subresource: '',
    namespace: 'default',
    name: 'web',
    path: '/apis/apps/v1/namespaces/default/deployments/web',
    status: 200,
    bytesIn: 0,
    bytesOut: 1234,
    durationMs: 12,
    impersonatedUser: 'alice@example.com',
    impersonatedGroups: ['devs'],
    gatewayId: '',
    operationId: '',
    error: '',
    startedAt: T0,
    ...over,
  };
}

async function rejectsWith(promise: Promise<unknown>, code: Code, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ConnectError, String(err));
    assert.equal(err.code, code, err.message);
    assert.match(err.rawMessage, pattern);
    return true;
  });
}

for (const driver of testDrivers()) {
  describe(`audit log (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let audit: AuditLog;
    const lines: Record<string, unknown>[] = [];
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
      const destination = new Writable({
        write(chunk, _enc, done) {
          for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
          done();
        },
      });
      audit = createAuditLog({ database, gatewayId: 'gw-a', logger: createLogger({ destination, level: 'info', pretty: false }) });
    });
    after(async () => {
      await audit.close();
      await database.close();
      await testDb.drop();
    });

    test('recorded entries are listed newest first, filtered by account, principal, kind and time, page by page', async () => {
      for (let i = 0; i < 7; i++) {
        audit.record(
          entry({
            account: i % 2 === 0 ? 'prod' : 'staging',
            principal: i < 4 ? 'token:alice' : 'token:bob',
            kind: i === 6 ? 'operation' : 'kube',
            verb: i === 6 ? 'scale' : 'get',
            operationId: i === 6 ? 'op-6' : '',
            startedAt: new Date(T0.getTime() + i * 1000),
          }),
        );
      }
      // Two entries with the same start time: the id breaks the tie, and paging neither skips nor repeats one.
      audit.record(entry({ name: 'twin-1', startedAt: new Date(T0.getTime() + 10_000) }));
      audit.record(entry({ name: 'twin-2', startedAt: new Date(T0.getTime() + 10_000) }));
      await eventually('9 entries stored', async () => (await audit.list({ pageSize: 100 })).entries.length === 9);

      const all = (await audit.list({})).entries;
      assert.deepEqual(
        all.map((e) => (e.name === 'web' ? e.startedAt.getTime() - T0.getTime() : e.name)),
        ['twin-2', 'twin-1', 6000, 5000, 4000, 3000, 2000, 1000, 0],
      );
      const first = all.at(-1)!;
      assert.deepEqual(
        { ...first, id: undefined },
        { ...entry(), gatewayId: 'gw-a', id: undefined },
        'every field is stored; the log fills in its own replica id',
      );

      const prod = await audit.list({ account: 'prod' });
      assert.ok(prod.entries.length > 0 && prod.entries.every((e) => e.account === 'prod'));
      const bob = await audit.list({ principal: 'token:bob' });
      assert.deepEqual(
        bob.entries.map((e) => e.startedAt.getTime() - T0.getTime()),
        [6000, 5000, 4000],
      );
      const ops = await audit.list({ kind: 'operation' });
      assert.deepEqual(
        ops.entries.map((e) => [e.verb, e.operationId]),
        [['scale', 'op-6']],
      );
      const window = await audit.list({ since: new Date(T0.getTime() + 2000), until: new Date(T0.getTime() + 5000) });
      assert.deepEqual(
        window.entries.map((e) => e.startedAt.getTime() - T0.getTime()),
        [4000, 3000, 2000],
      );

      const seen: string[] = [];
      let token = '';
      let pages = 0;
      do {
        const page = await audit.list({ pageSize: 2, pageToken: token });
        assert.ok(page.entries.length <= 2);
        seen.push(...page.entries.map((e) => e.id));
        token = page.nextPageToken;
        pages++;
      } while (token);
      assert.equal(pages, 5);
      assert.deepEqual(
        seen,
        all.map((e) => e.id),
      );
    });

    test('every entry has a JSON log line at once, with the metadata and no body', () => {
      const audited = lines.filter((l) => l.msg === 'audit');
      assert.ok(audited.length >= 9);
      const line = audited[0]!;
      assert.equal(line.component, 'audit');
      const logged = line.audit as Record<string, unknown>;
      assert.deepEqual(Object.keys(logged).sort(), Object.keys(entry()).sort());
      assert.equal(logged.principal, 'token:alice');
      assert.equal(logged.startedAt, new Date(T0.getTime()).toISOString());
    });

    test('bad filters and page tokens are INVALID_ARGUMENT', async () => {
      await rejectsWith(audit.list({ pageSize: -1 }), Code.InvalidArgument, /page_size/);
      await rejectsWith(audit.list({ pageSize: 1.5 }), Code.InvalidArgument, /page_size/);
      await rejectsWith(audit.list({ kind: 'secrets' }), Code.InvalidArgument, /kind must be one of kube, operation, session/);
      await rejectsWith(audit.list({ since: new Date(T0.getTime() + 1), until: T0 }), Code.InvalidArgument, /since/);
      await rejectsWith(audit.list({ since: new Date(Number.NaN) }), Code.InvalidArgument, /since/);
      await rejectsWith(audit.list({ pageToken: 'not a token' }), Code.InvalidArgument, /page_token is malformed/);
      const page = await audit.list({ pageSize: 1 });
      assert.ok(page.nextPageToken);
      await rejectsWith(
        audit.list({ pageSize: 1, pageToken: page.nextPageToken, account: 'prod' }),
        Code.InvalidArgument,
        /different filters/,
      );
    });

    test('text a column cannot hold is cleaned, numbers clamped: one odd entry never fails its batch', async () => {
      audit.record(entry({ account: 'odd', name: 'a\u0000b', path: 'x'.repeat(5000), durationMs: Number.NaN, status: -3, bytesOut: 1e30 }));
      const [stored] = await eventually('the odd entry stored', async () => {
        const { entries } = await audit.list({ account: 'odd' });
        assert.equal(entries.length, 1);
        return entries;
      });
      assert.equal(stored!.name, 'ab');
      assert.equal(stored!.path.length, 2048);
      assert.deepEqual([stored!.durationMs, stored!.status, stored!.bytesOut], [0, 0, Number.MAX_SAFE_INTEGER]);
    });

    test("one insert statement stores every column of every entry of a batch, ids in the entries' order", async () => {
      const store = createAuditStore(database);
      const batch = [
        entry({ account: 'batch-cols', name: 'b-0', kind: 'operation', operationId: 'op-1', error: 'refused: "x"\n', bytesIn: 2 ** 40 }),
        entry({
          account: 'batch-cols',
          name: 'b-1',
          impersonatedGroups: ['a', 'b c'],
          groups: ['corp:sre', 'corp:on call'],
          startedAt: new Date(T0.getTime() + 1234),
          stage: 'started',
        }),
        entry({ account: 'batch-cols', name: 'b-2', subresource: 'status', status: 404, durationMs: 7, gatewayId: 'gw-z' }),
      ];
      await store.insertMany(batch);
      const rows = await store.list({ account: 'batch-cols', principal: '', kind: '', limit: 10 });
      const byName = new Map(rows.map((r) => [r.name, r]));
      for (const e of batch) {
        const { id, ...stored } = byName.get(e.name)!;
        assert.deepEqual(stored, e);
      }
      const ids = batch.map((e) => BigInt(byName.get(e.name)!.id));
      assert.ok(ids[0]! < ids[1]! && ids[1]! < ids[2]!, `ids follow the batch order: ${ids.join(', ')}`);
    });

    test('the purge deletes only entries past the retention, in bounded batches (clock injected)', async () => {
      const store = createAuditStore(database);
      const now = new Date('2026-06-01T00:00:00.000Z');
      const day = 86_400_000;
      const ages = [40, 31, 30.5, 29, 1];
      await store.insertMany(
        ages.map((d) => ({
          ...entry({ account: 'retention', name: `age-${d}` }),
          gatewayId: 'gw-a',
          startedAt: new Date(now.getTime() - d * day),
        })),
      );
      const calls: number[] = [];
      const purge = createAuditPurge({
        store: {
          deleteOlderThan: async (cutoff, limit) => {
            const n = await store.deleteOlderThan(cutoff, limit);
            calls.push(n);
            return n;
          },
        },
        retentionDays: 30,
        batchSize: 2,
        intervalMs: 3_600_000,
        logger: createSilentLogger(),
        now: () => now,
      });
      // Entries of the other tests (March 2026) are past the retention too.
      const before = (await audit.list({ pageSize: 500 })).entries.filter((e) => e.account !== 'retention').length;
      const deleted = await purge.purge();
      assert.equal(deleted, before + 3);
      assert.ok(
        calls.every((n) => n <= 2),
        `batches of at most 2: ${calls.join(',')}`,
      );
      assert.equal(calls.at(-1)! < 2, true);
      const left = (await audit.list({ pageSize: 500 })).entries;
      assert.deepEqual(
        left.map((e) => e.name),
        ['age-1', 'age-29'],
      );
      assert.equal(await purge.purge(), 0);
    });
  });

  describe(`audit log with the database down (${driver})`, () => {
    test('record returns at once and never throws; the queue stays bounded, drops are counted, close does not hang', async () => {
      const testDb = await createTestDatabase(driver);
      const database = await openDatabase(testDb.url);
      await database.close();
      let dropped = 0;
      const audit = createAuditLog({
        database,
        gatewayId: 'gw-down',
        logger: createSilentLogger(),
        metrics: { auditDropped: (n) => (dropped += n) },
        maxPending: 5,
        retryMs: 10,
        closeTimeoutMs: 2000,
      });
      try {
        for (let i = 0; i < 20; i++) assert.equal(audit.record(entry({ name: `down-${i}` })), undefined);
        assert.equal(dropped, 15, 'beyond 5 pending, every entry is dropped and counted at once');
        // Retries run in the background and fail; recording goes on answering at once.
        await new Promise((resolve) => setTimeout(resolve, 100));
        audit.record(entry({ name: 'later' }));
        assert.equal(dropped, 16);
      } finally {
        await audit.close();
        await testDb.drop();
      }
      assert.equal(dropped, 21, 'what was still pending at close is counted too');
      audit.record(entry({ name: 'after close' }));
      assert.equal(dropped, 22);
    });
  });
}
