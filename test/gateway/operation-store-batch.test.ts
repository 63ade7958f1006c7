import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createOperationStore, type NewOperationRow, type OperationStore } from '../../src/gateway/operations/operation-store.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

function newRow(id: string, account = 'acc'): NewOperationRow {
  const now = new Date();
  return {
    id,
    account,
    type: 'get',
    request: { id, account },
    state: 'PENDING',
    gatewayId: 'gw-1',
    timeoutMs: 30_000,
    receivedAt: now,
    storedAt: now,
    deadlineAt: new Date(now.getTime() + 30_000),
    requestHash: `h-${id}`,
  };
}

for (const driver of testDrivers()) {
  describe(`operation store batch writes (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    let store: OperationStore;
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
      store = createOperationStore(database);
    });
    after(async () => {
      await database.close();
      await testDb.drop();
    });

    it('insertMany inserts once per id: a taken id and a repeat within the batch are reported not inserted', async () => {
      assert.deepEqual(await store.insertMany([newRow('i-1')]), [true]);
      assert.deepEqual(await store.insertMany([newRow('i-2'), newRow('i-1'), newRow('i-3'), newRow('i-2')]), [true, false, true, false]);
      assert.equal((await store.get('i-3'))?.state, 'PENDING');
      assert.deepEqual(await store.insertMany([]), []);
    });

    it('markSentMany marks open operations SENT with their own target, keeps the first sent_at, skips terminal ones', async () => {
      await store.insertMany([newRow('s-1'), newRow('s-2'), newRow('s-3')]);
      await store.finish('s-3', { state: 'FAILED', error: 'gone', at: new Date() });
      const t1 = new Date('2026-01-01T00:00:01Z');
      const t2 = new Date('2026-01-01T00:00:02Z');
      const changed = await store.markSentMany([
        { id: 's-1', agentId: 'a-1', sessionId: 'x-1', sentAt: t1 },
        { id: 's-2', agentId: 'a-2', sessionId: 'x-2', sentAt: t2 },
        { id: 's-3', agentId: 'a-3', sessionId: 'x-3', sentAt: t2 },
      ]);
      assert.deepEqual(changed, [true, true, false]);
      const s1 = await store.get('s-1');
      assert.deepEqual([s1?.state, s1?.agentId, s1?.sessionId, s1?.sentAt?.toISOString()], ['SENT', 'a-1', 'x-1', t1.toISOString()]);
      assert.equal((await store.get('s-2'))?.agentId, 'a-2');
      assert.equal((await store.get('s-3'))?.state, 'FAILED');
      await store.markSentMany([{ id: 's-1', agentId: 'a-9', sessionId: 'x-9', sentAt: t2 }]);
      assert.equal((await store.get('s-1'))?.sentAt?.toISOString(), t1.toISOString(), 'the first sent_at stays');
    });

    it('finishMany records each outcome once, only for the right account and open operations', async () => {
      await store.insertMany([newRow('f-1'), newRow('f-2'), newRow('f-3', 'other'), newRow('f-4')]);
      await store.finish('f-4', { state: 'FAILED', error: 'timed out', at: new Date() });
      const at = new Date('2026-01-01T00:00:05Z');
      const sentAt = new Date('2026-01-01T00:00:04Z');
      const rows = await store.finishMany([
        {
          id: 'f-1',
          account: 'acc',
          outcome: { state: 'SUCCEEDED', result: { id: 'f-1', success: true }, at, agentId: 'a-1', sessionId: 'x-1', sentAt },
          vouched: true,
        },
        { id: 'f-2', account: 'acc', outcome: { state: 'FAILED', result: { id: 'f-2' }, at, agentId: 'a-1' } },
        { id: 'f-3', account: 'acc', outcome: { state: 'SUCCEEDED', result: { id: 'f-3' }, at } },
        { id: 'f-4', account: 'acc', outcome: { state: 'SUCCEEDED', result: { id: 'f-4' }, at } },
        { id: 'f-1', account: 'acc', outcome: { state: 'FAILED', result: { id: 'f-1', again: true }, at } },
        { id: 'f-missing', account: 'acc', outcome: { state: 'SUCCEEDED', at } },
      ]);
      assert.deepEqual(
        rows.map((r) => r?.state),
        ['SUCCEEDED', 'FAILED', undefined, undefined, undefined, undefined],
      );
      const f1 = rows[0]!;
      assert.deepEqual(f1.result, { id: 'f-1', success: true });
      assert.deepEqual(
        [f1.agentId, f1.sessionId, f1.sentAt?.toISOString(), f1.resultAt?.toISOString(), f1.finishedAt?.toISOString()],
        ['a-1', 'x-1', sentAt.toISOString(), at.toISOString(), at.toISOString()],
      );
      assert.equal(rows[1]!.sentAt, null);
      assert.equal(rows[1]!.sessionId, '');
      assert.equal((await store.get('f-3'))?.state, 'PENDING', 'another account changes nothing');
      assert.deepEqual((await store.get('f-4'))?.error, 'timed out', 'a terminal operation stays as it was');
    });

    it('finishMany takes a result only from the session the operation was sent on, whatever agent id it names', async () => {
      await store.insertMany([newRow('g-1'), newRow('g-2'), newRow('g-3')]);
      const at = new Date('2026-01-01T00:00:05Z');
      await store.markSentMany([{ id: 'g-1', agentId: 'a-1', sessionId: 'x-1', sentAt: at }]);
      const forged = await store.finishMany([
        // Another stream announcing the same agent id: the agent id proves nothing.
        { id: 'g-1', account: 'acc', outcome: { state: 'SUCCEEDED', result: { id: 'g-1' }, at, agentId: 'a-1', sessionId: 'x-2' } },
        // Not marked sent yet, and nobody vouches for the session: refused.
        { id: 'g-2', account: 'acc', outcome: { state: 'SUCCEEDED', result: { id: 'g-2' }, at, agentId: 'a-2', sessionId: 'x-2' } },
      ]);
      assert.deepEqual(forged, [undefined, undefined]);
      assert.deepEqual([(await store.get('g-1'))?.state, (await store.get('g-1'))?.sessionId], ['SENT', 'x-1']);
      assert.equal((await store.get('g-2'))?.state, 'PENDING');
      const rows = await store.finishMany([
        { id: 'g-1', account: 'acc', outcome: { state: 'SUCCEEDED', result: { id: 'g-1' }, at, agentId: 'a-1', sessionId: 'x-1' } },
        // Not marked sent yet (the SENT write may trail the result): the replica that sent it vouches for the session.
        {
          id: 'g-2',
          account: 'acc',
          outcome: { state: 'SUCCEEDED', result: { id: 'g-2' }, at, agentId: 'a-2', sessionId: 'x-2' },
          vouched: true,
        },
      ]);
      assert.deepEqual(
        rows.map((r) => [r?.state, r?.sessionId]),
        [
          ['SUCCEEDED', 'x-1'],
          ['SUCCEEDED', 'x-2'],
        ],
      );
    });

    it('repointSession hands the open operations of a resumed session to the resuming one', async () => {
      await store.insertMany([newRow('h-1'), newRow('h-2')]);
      const at = new Date('2026-01-01T00:00:05Z');
      await store.markSentMany([
        { id: 'h-1', agentId: 'a-1', sessionId: 'old', sentAt: at },
        { id: 'h-2', agentId: 'a-1', sessionId: 'old', sentAt: at },
      ]);
      await store.finish('h-2', { state: 'FAILED', error: 'timed out', at });
      assert.deepEqual(await store.repointSession('old', 'new'), ['h-1'], 'only open operations move');
      assert.deepEqual(
        await store.finishMany([{ id: 'h-1', account: 'acc', outcome: { state: 'SUCCEEDED', at, agentId: 'a-1', sessionId: 'old' } }]),
        [undefined],
      );
      const [done] = await store.finishMany([
        { id: 'h-1', account: 'acc', outcome: { state: 'SUCCEEDED', at, agentId: 'a-1', sessionId: 'new' } },
      ]);
      assert.equal(done?.state, 'SUCCEEDED');
      assert.equal((await store.get('h-2'))?.sessionId, 'old');
    });

    it('concurrent sent marks, results and the sweeper over the same rows in different orders never deadlock', async () => {
      const ids = Array.from({ length: 120 }, (_, i) => `dl-${String(i).padStart(3, '0')}`);
      await store.insertMany(ids.map((id) => newRow(id)));
      const shuffled = () => [...ids].sort(() => Math.random() - 0.5);
      const at = new Date();
      const rounds = Array.from({ length: 12 }, (_, r) =>
        r % 3 === 0
          ? store.markSentMany(shuffled().map((id) => ({ id, agentId: 'a', sessionId: 's', sentAt: at })))
          : r % 3 === 1
            ? store.markSentMany([...ids].reverse().map((id) => ({ id, agentId: 'b', sessionId: 't', sentAt: at })))
            : store.finishMany(
                shuffled()
                  .slice(0, 40)
                  .map((id) => ({ id, account: 'acc', outcome: { state: 'SUCCEEDED' as const, at } })),
              ),
      );
      rounds.push(store.expire(new Date(Date.now() + 60_000), { gatewayId: 'gw-1', limit: 30 }) as Promise<never>);
      const settled = await Promise.allSettled(rounds);
      const failures = settled.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
      assert.deepEqual(failures, [], 'no statement failed (a deadlock would)');
    });
  });
}
