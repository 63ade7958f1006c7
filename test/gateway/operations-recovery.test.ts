/**
 * Load and restarts: 200 concurrent operations across several accounts all end terminal with the right outcome; a
 * gateway restart times out its own operations past their deadline ("gateway restarted before the result arrived"),
 * the sweeper times out other replicas' stale ones, and operations still within their deadline are redelivered when
 * the agent comes back.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { sql } from 'drizzle-orm';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { queryRows, testGatewayConfig } from '../../testkit/test-gateway.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers } from '../../testkit/databases.js';
import { openDatabase } from '../../src/db/database.js';
import { gate, okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';
import { eventually } from '../../testkit/eventually.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const targetJson = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' };

async function start(url: string): Promise<RunningGateway> {
  const config = testGatewayConfig(url, {
    id: 'gw-r',
    // 200 operations at once on PGlite can take longer than the default 30 s on a loaded machine.
    operations: { agentWaitSeconds: 2, sweepIntervalMs: 100, defaultTimeoutSeconds: 300 },
  });
  return startGateway(config, { logger: createSilentLogger() });
}

const rows = <T = Record<string, any>>(gw: RunningGateway, text: string) => queryRows<T>(gw.database, text);

for (const driver of testDrivers()) {
  describe(`operations under load and across restarts (${driver})`, () => {
    const cleanups: (() => Promise<void>)[] = [];
    after(async () => {
      for (const c of cleanups.reverse()) await c().catch(() => {});
    });

    test('200 concurrent operations end terminal; a restart recovers open operations', async () => {
      const testDb = await createTestDatabase(driver);
      const dir = driver === 'pglite' ? mkdtempSync(join(tmpdir(), 'outpost-ops-')) : '';
      cleanups.push(async () => {
        await testDb.drop();
        if (dir) rmSync(dir, { recursive: true, force: true });
      });
      const url = dir || testDb.url;
      let gw = await start(url);
      cleanups.push(() => gw.close());
      const agents: OperationAgent[] = [];
      cleanups.push(async () => void (await Promise.all(agents.map((a) => a.close().catch(() => {})))));
      const answer = (op: Parameters<typeof okResult>[0]) =>
        op.spec.case === 'patch' && op.spec.value.name.endsWith('-missing')
          ? {
              id: op.id,
              account: op.account,
              success: false,
              statusCode: 404,
              reason: 'NotFound',
              message: `${op.spec.value.name} not found`,
            }
          : okResult(op);
      agents.push(await startOperationAgent(gw.grpcUrl, 'agent-load-1', ['load-0', 'load-1'], { answer }));
      agents.push(await startOperationAgent(gw.grpcUrl, 'agent-load-2', ['load-2', 'load-3'], { answer }));
      const release = gate();
      const held = await startOperationAgent(gw.grpcUrl, 'agent-held', ['held'], {
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      agents.push(held);

      let client = createClient(OperationService, createGrpcTransport({ baseUrl: gw.grpcUrl }));
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, i) => {
          const name = i % 5 === 0 ? `cm-${i}-missing` : `cm-${i}`;
          return client.submitOperation({
            account: `load-${i % 4}`,
            id: `load-${i}`,
            spec: { case: 'patch', value: { ...targetJson, name, type: PatchType.MERGE, patch: '{}' } },
            wait: true,
          });
        }),
      );
      results.forEach((r, i) => {
        assert.equal(r.operation!.id, `load-${i}`);
        assert.equal(r.operation!.account, `load-${i % 4}`);
        assert.equal(r.operation!.state, i % 5 === 0 ? OperationState.FAILED : OperationState.SUCCEEDED, `load-${i}`);
        assert.equal(r.operation!.result!.id, `load-${i}`);
      });
      const counted = await rows<{ state: string; n: string }>(
        gw,
        `select state, count(*) as n from operations group by state order by state`,
      );
      assert.deepEqual(
        counted.map((c) => [c.state, Number(c.n)]),
        [
          ['FAILED', 40],
          ['SUCCEEDED', 160],
        ],
      );
      for (const a of agents.slice(0, 2)) for (const [id, n] of a.runs) assert.equal(n, 1, id);

      // Two operations in flight when the gateway goes down; one of them will be past its deadline on restart.
      const { operation: stale } = await client.submitOperation({
        account: 'held',
        id: 'in-flight-stale',
        spec: { case: 'patch', value: { ...targetJson, type: PatchType.MERGE, patch: '{}' } },
        timeout: { seconds: 60n },
      });
      const { operation: live } = await client.submitOperation({
        account: 'held',
        id: 'in-flight-live',
        spec: { case: 'patch', value: { ...targetJson, type: PatchType.MERGE, patch: '{}' } },
        timeout: { seconds: 60n },
      });
      assert.equal(stale!.state, OperationState.SENT);
      assert.equal(live!.state, OperationState.SENT);
      await held.waitReceived('in-flight-live');
      await held.cut();
      await gw.close();
      // Changed while no gateway runs: a running sweeper would time the operation out before the restart could.
      const offline = await openDatabase(url);
      await offline.db.execute(sql`update operations set deadline_at = now() - interval '1 second' where id = 'in-flight-stale'`);
      // Another replica's operation, open and past its deadline: the sweeper's job, not this replica's recovery.
      await offline.db.execute(
        sql.raw(`insert into operations (id, account, type, request, state, gateway_id, agent_id, timeout_ms, received_at, stored_at, sent_at, deadline_at, request_hash)
         values ('foreign-1', 'held', 'get', '{"id":"foreign-1","account":"held","timeout":"1s","get":{"kind":"ConfigMap","name":"x"}}', 'SENT',
                 'gw-other', 'agent-x', 1000, now() - interval '5 seconds', now() - interval '5 seconds', now() - interval '5 seconds',
                 now() - interval '4 seconds', 'h')`),
      );
      await offline.close();

      gw = await start(url);
      cleanups.push(() => gw.close());
      client = createClient(OperationService, createGrpcTransport({ baseUrl: gw.grpcUrl }));
      const recovered = await client.getOperation({ id: 'in-flight-stale' });
      assert.equal(recovered.operation!.state, OperationState.TIMED_OUT);
      assert.equal(recovered.operation!.error, 'gateway restarted before the result arrived');
      assert.ok(recovered.operation!.totalDuration);
      await eventually(
        'operation foreign-1 TIMED_OUT',
        async () => (await client.getOperation({ id: 'foreign-1' })).operation!.state === OperationState.TIMED_OUT,
      );
      assert.equal(
        (await client.getOperation({ id: 'foreign-1' })).operation!.error,
        'operation timed out after 1s waiting for the result from agent agent-x',
      );
      assert.equal((await client.getOperation({ id: 'in-flight-live' })).operation!.state, OperationState.SENT);

      // The agent comes back (to the restarted gateway): the live operation is redelivered and completes, once.
      await held.reconnect(gw.grpcUrl);
      await held.waitReceived('in-flight-live', 2);
      release.open();
      const done = await client.submitOperation({
        account: 'held',
        id: 'in-flight-live',
        spec: { case: 'patch', value: { ...targetJson, type: PatchType.MERGE, patch: '{}' } },
        timeout: { seconds: 60n },
        wait: true,
      });
      assert.equal(done.operation!.state, OperationState.SUCCEEDED);
      assert.equal(held.runs.get('in-flight-live'), 1);
      assert.equal(held.received.filter((o) => o.id === 'in-flight-stale').length, 1, 'a timed-out operation is not redelivered');
      const open = await rows(gw, `select id from operations where state in ('PENDING', 'SENT')`);
      assert.deepEqual(open, []);
    });
  });
}
