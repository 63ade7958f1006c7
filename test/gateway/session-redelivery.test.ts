/**
 * Which open operations a session that starts serving accounts is given again, over the real operation store: a
 * PENDING one this replica alone dispatches, a SENT one only when the session took it over from the session it
 * resumed, and that one once. One sent on the session itself is never sent on it again (a stream that adds accounts
 * or is promoted would otherwise receive it twice).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import type { LiveSession } from '../../src/gateway/agents/session-registry.js';
import { createOperationContext, type OperationManagerDeps } from '../../src/gateway/operations/operation-context.js';
import type { Deliver } from '../../src/gateway/operations/operation-delivery.js';
import { createOperationStore, type NewOperationRow, type OperationStore } from '../../src/gateway/operations/operation-store.js';
import { createSessionRedelivery, type SessionRedelivery } from '../../src/gateway/operations/session-redelivery.js';
import { createLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

function newRow(id: string, account: string): NewOperationRow {
  const now = new Date();
  return {
    id,
    account,
    type: 'patch',
    request: { id, account },
    state: 'PENDING',
    gatewayId: 'gw-1',
    timeoutMs: 60_000,
    receivedAt: now,
    storedAt: now,
    deadlineAt: new Date(now.getTime() + 60_000),
    requestHash: `h-${id}`,
  };
}

/** A session as the hooks see it: only its id is read. */
const session = (id: string) => ({ id, agentId: 'agent-1' }) as LiveSession;

for (const driver of testDrivers()) {
  describe(`session redelivery (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    let store: OperationStore;
    let hooks: SessionRedelivery;
    let locals: ReturnType<typeof createOperationContext>['locals'];
    const delivered: { id: string; via?: string }[] = [];
    let openForDone: Promise<unknown> = Promise.resolve();

    /** Runs `sessionStarted` and waits until its deliveries were started (they start on the turn its query returns). */
    async function start(s: LiveSession, accounts: string[]) {
      hooks.sessionStarted(s, accounts);
      await openForDone;
      await new Promise((resolve) => setImmediate(resolve));
    }

    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
      store = createOperationStore(database);
      const watched: OperationStore = {
        ...store,
        openFor: (names, now) => {
          const rows = store.openFor(names, now);
          openForDone = rows;
          return rows;
        },
      };
      const ctx = createOperationContext({
        gatewayId: 'gw-1',
        store: watched,
        config: { defaultTimeoutSeconds: 60, agentWaitSeconds: 1, sweepIntervalMs: 1000, maxManifestBytes: 1 << 20 },
        logger: createLogger({ level: 'silent' }),
      } as OperationManagerDeps);
      locals = ctx.locals;
      const deliver: Deliver = async (row, _operation, _durable, via) => {
        delivered.push({ id: row.id, via: via?.id });
        return undefined;
      };
      hooks = createSessionRedelivery(ctx, deliver);
    });
    after(async () => {
      await database.close();
      await testDb.drop();
    });

    it('a SENT operation is not sent again on the session it was sent on when that session starts an account again', async () => {
      await store.insertMany([newRow('own-1', 'acc-own')]);
      await store.markSentMany([{ id: 'own-1', agentId: 'agent-1', sessionId: 's-own', sentAt: new Date() }]);
      delivered.length = 0;
      await start(session('s-own'), ['acc-own']);
      assert.deepEqual(delivered, []);
    });

    it('a SENT operation taken over by resuming goes once to the resuming session, not to another one', async () => {
      await store.insertMany([newRow('res-1', 'acc-res'), newRow('res-2', 'acc-res')]);
      await store.markSentMany([
        { id: 'res-1', agentId: 'agent-1', sessionId: 's-old', sentAt: new Date() },
        { id: 'res-2', agentId: 'agent-1', sessionId: 's-old', sentAt: new Date() },
      ]);
      const resumed = session('s-new');
      await hooks.sessionResumed('s-old', resumed);
      delivered.length = 0;
      await start(session('s-other'), ['acc-res']);
      assert.equal(delivered.length, 0, 'another session never gets a SENT operation');
      await start(resumed, ['acc-res']);
      assert.deepEqual(
        delivered.map((d) => `${d.id}@${d.via}`).sort(),
        ['res-1@s-new', 'res-2@s-new'],
        'sent again on the resuming session itself',
      );
      delivered.length = 0;
      await start(resumed, ['acc-res']);
      assert.deepEqual(delivered, [], 'and only once');
    });

    it('a PENDING operation goes to dispatch when this replica holds it and nothing is sending it', async () => {
      const row = (await store.insert(newRow('pend-1', 'acc-pend')))!;
      await store.insertMany([newRow('pend-other', 'acc-pend')]);
      const local = { row, account: 'acc-pend', deadlineAt: row.deadlineAt.getTime(), waitUntil: Date.now() + 1000, delivering: 0 };
      locals.set('pend-1', local);
      delivered.length = 0;
      await start(session('s-pend'), ['acc-pend']);
      assert.deepEqual(delivered, [{ id: 'pend-1', via: undefined }], "another replica's PENDING row is its own to dispatch");
      local.delivering = 1;
      delivered.length = 0;
      await start(session('s-pend'), ['acc-pend']);
      assert.deepEqual(delivered, [], 'not while a delivery of it is under way');
      locals.delete('pend-1');
    });
  });
}
