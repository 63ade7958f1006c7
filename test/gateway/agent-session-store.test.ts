/**
 * Touches of `agent_sessions` rows are gathered: the touches of many streams within TOUCH_BATCH_MS become one write
 * (thousands of idle agents must not cost a statement each per heartbeat), ended rows are never touched, and batches
 * larger than one statement's parameters are split. A session's transport round-trips, and accounts are given the
 * transport of the live session that caches them only.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import {
  createAgentSessionStore,
  listLiveSessions,
  liveCachingTransports,
  TOUCH_BATCH_MS,
  type AgentSessionStore,
} from '../../src/gateway/agents/agent-session-store.js';
import type { AgentTransport } from '../../src/gateway/agents/agent-transport.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';
import { recordQueries } from '../../testkit/query-plans.js';

for (const driver of testDrivers()) {
  describe(`agent session touches (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    let store: AgentSessionStore;
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
      store = createAgentSessionStore(database);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });
    const lastSeen = async () =>
      Object.fromEntries(
        (await createRawQuery(database)('select id, extract(epoch from now() - last_seen_at)::float8 as age from agent_sessions', [])).map(
          (r) => [r.id as string, Number(r.age)],
        ),
      );

    /** Starts a session row `id` of agent `agent-<id>` (no accounts). */
    const startSession = (id: string) =>
      store.start(
        {
          id,
          agentId: `agent-${id}`,
          zone: 'z',
          version: 'v',
          subject: 'x',
          identity: 'token:x',
          gatewayId: 'gw',
          transport: 'grpc',
          caching: [],
          standby: [],
          refused: [],
        },
        'f'.repeat(64),
      );

    test('touches within the batch window are written together; an ended session is left alone', async () => {
      for (const id of ['s1', 's2', 's3']) await startSession(id);
      await store.end('s3');
      await createRawQuery(database)("update agent_sessions set last_seen_at = now() - interval '1 hour'", []);
      const started = Date.now();
      const touches = [store.touch('s1'), store.touch('s2'), store.touch('s3')];
      assert.equal(touches[0], touches[1], 'one batch, one promise');
      await Promise.all(touches);
      assert.ok(Date.now() - started >= TOUCH_BATCH_MS - 50, 'written after the batch window');
      const ages = await lastSeen();
      assert.ok(ages.s1! < 600 && ages.s2! < 600, JSON.stringify(ages)); // just touched, unlike the hour-old s3
      assert.ok(ages.s3! > 3000, 'the ended session was not touched');
      // The next touch starts a new batch.
      assert.notEqual(store.touch('s1'), touches[0]);
    });

    test('a batch of more sessions than one statement takes is split, not refused', async () => {
      // One statement binds at most 65,534 parameters, one per session: the count is 16 bits in the wire protocol, and
      // postgres.js refuses more (PGlite wraps the count and fails on the mismatch).
      const MAX_BIND_PARAMETERS = 65_534;
      const ids = Array.from({ length: MAX_BIND_PARAMETERS + 5_000 }, (_, i) => `bulk-${i}`);
      for (const id of [ids[0]!, ids.at(-1)!]) await startSession(id);
      await createRawQuery(database)("update agent_sessions set last_seen_at = now() - interval '1 hour' where id like 'bulk-%'", []);
      // The store's statements, as it sends them (same connection, a recording drizzle handle).
      const recording = recordQueries(database);
      const recorded = createAgentSessionStore(recording.database);
      // A refusal is reported by the driver's message alone: its error repeats the statement and its 70,000 parameters.
      const refused = await Promise.all(ids.map((id) => recorded.touch(id))).then(
        () => undefined,
        (err: Error) => String((err.cause as Error | undefined)?.message ?? err.message).slice(0, 300),
      );
      assert.equal(refused, undefined, `the touch of ${ids.length} sessions was refused: ${refused}`);

      const touches = recording.queries.filter((q) => /^update "agent_sessions" set "last_seen_at"/.test(q.text));
      assert.equal(touches.length, recording.queries.length, 'the touch sends nothing else');
      assert.ok(touches.length > 1, `${ids.length} sessions in ${touches.length} statement(s)`);
      for (const q of touches) assert.ok(q.params.length <= MAX_BIND_PARAMETERS, `a statement with ${q.params.length} parameters`);
      // Every session in exactly one statement (compared by count, not printed: a failure would print 70,000 ids).
      const sent = touches.flatMap((q) => q.params);
      const sentOnce = new Set(sent);
      assert.equal(sent.length, ids.length, 'as many parameters as sessions');
      assert.equal(ids.filter((id) => sentOnce.has(id)).length, ids.length, 'every session was sent');
      // And the statements ran: the first and the last session were both touched.
      const ages = await lastSeen();
      assert.ok(ages[ids[0]!]! < 600 && ages[ids.at(-1)!]! < 600, JSON.stringify([ages[ids[0]!], ages[ids.at(-1)!]]));
    });

    test("a session's transport is stored and listed; accounts get the transport of the live session caching them", async () => {
      const session = (id: string, transport: AgentTransport, caching: string[], standby: string[] = []) =>
        store.start(
          {
            id,
            agentId: `agent-${id}`,
            zone: '',
            version: '',
            subject: 'x',
            identity: 'token:x',
            gatewayId: 'gw',
            transport,
            caching,
            standby,
            refused: [],
          },
          'f'.repeat(64),
        );
      await session('t-ws', 'websocket', ['acct-ws'], ['acct-grpc']);
      await session('t-grpc', 'grpc', ['acct-grpc']);
      await session('t-ended', 'websocket', ['acct-ended']);
      await store.end('t-ended');
      await session('t-stale', 'websocket', ['acct-stale']);
      await createRawQuery(database)("update agent_sessions set last_seen_at = now() - interval '1 hour' where id = 't-stale'", []);

      const live = await listLiveSessions(database, { staleAfterSeconds: 60 });
      assert.deepEqual(
        live.filter((s) => s.id.startsWith('t-')).map((s) => [s.id, s.transport]),
        [
          ['t-grpc', 'grpc'],
          ['t-ws', 'websocket'],
        ],
      );
      const transports = await liveCachingTransports(
        database.db,
        [
          { account: 'acct-ws', sessionId: 't-ws' },
          { account: 'acct-grpc', sessionId: 't-grpc' },
          // t-ws only stands by for it
          { account: 'acct-standby', sessionId: 't-ws' },
          { account: 'acct-ended', sessionId: 't-ended' },
          { account: 'acct-stale', sessionId: 't-stale' },
          { account: 'acct-none', sessionId: '' },
        ],
        60,
      );
      assert.deepEqual(Object.fromEntries(transports), { 'acct-ws': 'websocket', 'acct-grpc': 'grpc' });
    });
  });
}
