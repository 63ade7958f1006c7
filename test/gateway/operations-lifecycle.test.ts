/**
 * Operations end to end over real sockets (gateway + a test agent on a gRPC stream): stored before sent, results
 * recorded once, no agent → bounded wait then FAILED, late agents, redelivery after a cut stream (run once),
 * deadlines, late/duplicate results, idempotent client ids.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, type ConnectError, connectAgent, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';
import { gate, okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const patchSpec = {
  case: 'patch' as const,
  value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm', type: PatchType.MERGE, patch: '{}' },
};
/** What a get of patchSpec returns (the result rules: exactly the target object). */
const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } };

for (const driver of testDrivers()) {
  describe(`operations lifecycle (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof OperationService>;
    const agents: OperationAgent[] = [];
    before(async () => {
      // agentWaitSeconds: long enough for an agent to connect during the wait on a loaded machine; the default timeout
      // long enough for an operation's round trip there.
      t = await startTestGateway(driver, { operations: { agentWaitSeconds: 3, sweepIntervalMs: 100, defaultTimeoutSeconds: 30 } });
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const a of agents) await a.close().catch(() => {});
      await t?.close();
    });
    const agent = async (...args: Parameters<typeof startOperationAgent> extends [string, ...infer R] ? R : never) => {
      const a = await startOperationAgent(t.gateway.grpcUrl, ...args);
      agents.push(a);
      return a;
    };
    const row = async (id: string) => (await t.query<Record<string, any>>(`select * from operations where id = '${id}'`))[0];
    /** Registers the account with a short-lived agent, so it exists with nobody serving it. */
    const registerOnly = async (account: string) => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, `reg-${account}`, [{ name: account }]);
      s.end();
      await s.ended;
    };

    test('stored before sent, then SUCCEEDED with the result and every timestamp', async () => {
      const seenRows: Record<string, any>[] = [];
      const release = gate();
      const a = await agent('agent-ok', ['acc-ok'], {
        onOperation: async (op) => void seenRows.push(await row(op.id)),
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      const { operation: submitted } = await client.submitOperation({ account: 'acc-ok', spec: patchSpec });
      assert.ok(submitted);
      assert.equal(submitted.state, OperationState.SENT);
      assert.equal(submitted.type, 'patch');
      assert.equal(submitted.agentId, 'agent-ok');
      await a.waitReceived(submitted.id);
      // The agent saw the row in the database when the operation reached it.
      await eventually('the agent saw the row', async () => seenRows.length > 0);
      assert.equal(seenRows.length, 1);
      assert.equal(seenRows[0]!.id, submitted.id);
      const sent = await row(submitted.id);
      assert.equal(sent.state, 'SENT');
      assert.equal(sent.gateway_id, 'gw-test');
      assert.equal(sent.timeout_ms, 30_000);
      assert.equal(sent.request.patch.name, 'cm');
      assert.ok(new Date(sent.received_at) <= new Date(sent.stored_at));
      assert.ok(new Date(sent.stored_at) <= new Date(sent.sent_at));
      assert.equal(sent.result, null);
      const delivered = a.received[0]!;
      assert.equal(delivered.account, 'acc-ok');
      assert.ok(
        delivered.timeout && Number(delivered.timeout.seconds) * 1000 + delivered.timeout.nanos / 1e6 <= 30_000,
        'remaining timeout',
      );

      release.open();
      const { operation: done } = await client.submitOperation({
        account: 'acc-ok',
        id: submitted.id,
        spec: patchSpec,
        timeout: { seconds: 30n },
        wait: true,
      });
      assert.equal(done!.state, OperationState.SUCCEEDED);
      assert.equal(done!.result?.statusCode, 200);
      assert.equal(done!.result?.objects[0]?.metadata && (done!.result.objects[0].metadata as any).name, 'cm', 'the target object');
      for (const f of ['receivedAt', 'storedAt', 'sentAt', 'resultAt', 'totalDuration'] as const) assert.ok(done![f], f);
      assert.equal(done!.error, '');
      const final = await row(submitted.id);
      assert.ok(new Date(final.sent_at) <= new Date(final.result_at));
      assert.ok(final.finished_at);
      assert.equal(a.runs.get(submitted.id), 1);
    });

    test('a failed result → FAILED with the Kubernetes status', async () => {
      await agent('agent-fail', ['acc-fail'], {
        answer: (op) => ({
          id: op.id,
          account: op.account,
          success: false,
          statusCode: 404,
          reason: 'NotFound',
          message: 'configmaps "cm" not found',
        }),
      });
      const { operation } = await client.submitOperation({ account: 'acc-fail', spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.FAILED);
      assert.equal(operation!.result?.statusCode, 404);
      assert.equal(operation!.result?.reason, 'NotFound');
      assert.equal(operation!.result?.message, 'configmaps "cm" not found');
      assert.ok(operation!.resultAt && operation!.totalDuration);
    });

    test('no agent: waits agentWaitSeconds, then FAILED "no agent connected for account X"', async () => {
      await registerOnly('acc-none');
      const started = Date.now();
      const { operation: pending } = await client.submitOperation({ account: 'acc-none', spec: patchSpec });
      assert.equal(pending!.state, OperationState.PENDING);
      assert.equal((await row(pending!.id)).state, 'PENDING');
      const { operation } = await client.submitOperation({ account: 'acc-none', id: pending!.id, spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.FAILED);
      assert.equal(operation!.error, 'no agent connected for account acc-none');
      assert.equal(operation!.sentAt, undefined);
      assert.ok(Date.now() - started >= 2900, 'waited for an agent first');
    });

    test('unknown account → NOT_FOUND at once, nothing stored', async () => {
      await assert.rejects(client.submitOperation({ account: 'nobody', spec: patchSpec }), (err: ConnectError) => {
        assert.equal(err.code, Code.NotFound);
        assert.match(err.rawMessage, /unknown account "nobody"/);
        return true;
      });
      assert.equal((await t.query(`select id from operations where account = 'nobody'`)).length, 0);
    });

    test('an agent connecting during the wait gets the operation', async () => {
      await registerOnly('acc-late');
      const waiting = client.submitOperation({ account: 'acc-late', spec: patchSpec, wait: true });
      await new Promise((r) => setTimeout(r, 150));
      await agent('agent-late', ['acc-late']);
      const { operation } = await waiting;
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.equal(operation!.agentId, 'agent-late');
    });

    test('stream cut after SENT: redelivered (same id) on reconnect, run once, result recorded', async () => {
      const release = gate();
      const a = await agent('agent-cut', ['acc-cut'], {
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      const { operation: sent } = await client.submitOperation({ account: 'acc-cut', spec: patchSpec, timeout: { seconds: 30n } });
      assert.equal(sent!.state, OperationState.SENT);
      await a.waitReceived(sent!.id, 1);
      await a.cut();
      await a.reconnect();
      const again = await a.waitReceived(sent!.id, 2);
      assert.equal(again.id, sent!.id);
      assert.ok(Number(again.timeout!.seconds) < 30 || again.timeout!.nanos > 0, 'redelivered with the remaining timeout');
      release.open();
      const { operation } = await client.submitOperation({
        account: 'acc-cut',
        id: sent!.id,
        spec: patchSpec,
        timeout: { seconds: 30n },
        wait: true,
      });
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.equal(a.runs.get(sent!.id), 1);
    });

    test('result finished while the stream was down is sent after reconnect', async () => {
      const release = gate();
      const a = await agent('agent-outbox', ['acc-outbox'], {
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      const { operation: sent } = await client.submitOperation({ account: 'acc-outbox', spec: patchSpec });
      await a.waitReceived(sent!.id);
      await a.cut();
      release.open();
      await new Promise((r) => setTimeout(r, 50));
      assert.equal((await row(sent!.id)).state, 'SENT');
      await a.reconnect();
      const { operation } = await client.submitOperation({ account: 'acc-outbox', id: sent!.id, spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.equal(a.runs.get(sent!.id), 1);
    });

    test('deadline → TIMED_OUT saying how long and that it was sent; a late result is ignored', async () => {
      const hold = gate<never>();
      const a = await agent('agent-slow', ['acc-slow'], { answer: () => hold.promise });
      const { operation } = await client.submitOperation({
        account: 'acc-slow',
        spec: patchSpec,
        timeout: { nanos: 300_000_000 },
        wait: true,
      });
      assert.equal(operation!.state, OperationState.TIMED_OUT);
      assert.equal(operation!.error, 'operation timed out after 300ms waiting for the result from agent agent-slow');
      assert.ok(operation!.sentAt && !operation!.resultAt);
      a.sendResult(okResult(a.received[0]!));
      await new Promise((r) => setTimeout(r, 150));
      const r = await row(operation!.id);
      assert.equal(r.state, 'TIMED_OUT');
      assert.equal(r.result, null);
    });

    test('deadline before any agent came → TIMED_OUT "before it was sent"', async () => {
      await registerOnly('acc-never');
      const { operation } = await client.submitOperation({
        account: 'acc-never',
        spec: patchSpec,
        timeout: { nanos: 200_000_000 },
        wait: true,
      });
      assert.equal(operation!.state, OperationState.TIMED_OUT);
      assert.equal(operation!.error, 'operation timed out after 200ms before it was sent to an agent');
    });

    test('a duplicate result changes nothing; results for unknown ids and from agents not serving the account are ignored', async () => {
      const a = await agent('agent-dup', ['acc-dup']);
      const other = await agent('agent-other', ['acc-other'], { answer: () => new Promise(() => {}) });
      const { operation } = await client.submitOperation({ account: 'acc-dup', spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      a.sendResult({ id: operation!.id, account: 'acc-dup', success: false, statusCode: 500, message: 'second' });
      a.sendResult({ id: 'no-such-operation', account: 'acc-dup', success: true });
      const { operation: held } = await client.submitOperation({ account: 'acc-other', spec: patchSpec });
      await other.waitReceived(held!.id);
      // agent-dup does not serve acc-other: its result for acc-other's operation is ignored, whatever it claims.
      a.sendResult({ id: held!.id, account: 'acc-other', success: false, statusCode: 403, message: 'not yours' });
      a.sendResult({ id: held!.id, account: 'acc-dup', success: false, statusCode: 403, message: 'not yours' });
      await new Promise((r) => setTimeout(r, 150));
      const r = await row(operation!.id);
      assert.equal(r.state, 'SUCCEEDED');
      assert.equal(r.result.statusCode, 200);
      assert.equal((await row(held!.id)).state, 'SENT');
      assert.equal((await t.query(`select id from operations where id = 'no-such-operation'`)).length, 0);
      other.sendResult({ id: held!.id, account: 'acc-other', success: true, statusCode: 200, objects: [cm] });
      const { operation: finished } = await client.submitOperation({ account: 'acc-other', id: held!.id, spec: patchSpec, wait: true });
      assert.equal(finished!.state, OperationState.SUCCEEDED);
      assert.equal(finished!.agentId, 'agent-other');
    });

    test('a result from a STANDBY agent the operation was not sent to is ignored; the agent it was sent to records it', async () => {
      const caching = await agent('agent-sent-to', ['acc-standby'], { answer: () => new Promise(() => {}) });
      const standby = await agent('agent-standby', ['acc-standby']);
      const { operation } = await client.submitOperation({ account: 'acc-standby', spec: patchSpec });
      await caching.waitReceived(operation!.id);
      assert.equal(standby.received.length, 0, 'the STANDBY agent never got it');
      // The STANDBY stream serves the account, but forging the result of another agent's operation changes nothing.
      standby.sendResult({ id: operation!.id, account: 'acc-standby', success: true, statusCode: 200, message: 'forged' });
      await new Promise((r) => setTimeout(r, 150));
      const r = await row(operation!.id);
      assert.deepEqual([r.state, r.agent_id, r.result], ['SENT', 'agent-sent-to', null]);
      caching.sendResult({ id: operation!.id, account: 'acc-standby', success: true, statusCode: 200, message: 'real', objects: [cm] });
      const { operation: done } = await client.submitOperation({ account: 'acc-standby', id: operation!.id, spec: patchSpec, wait: true });
      assert.deepEqual([done!.state, done!.agentId, done!.result?.message], [OperationState.SUCCEEDED, 'agent-sent-to', 'real']);
    });

    test('a result that breaks the rules of its type (a scale answered with the Deployment) → FAILED InvalidResult, counted', async () => {
      const deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'default' },
        spec: { replicas: 3 },
      };
      await agent('agent-shape', ['acc-shape'], {
        answer: (op) => ({
          id: op.id,
          account: op.account,
          success: true,
          statusCode: 200,
          message: 'deployment/web scaled to 3',
          objects: [deployment],
        }),
      });
      const scale = {
        case: 'scale' as const,
        value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', replicas: 3 },
      };
      const { operation } = await client.submitOperation({ account: 'acc-shape', spec: scale, wait: true });
      assert.equal(operation!.state, OperationState.FAILED);
      assert.equal(operation!.result?.reason, 'InvalidResult');
      assert.equal(operation!.result?.statusCode, 200);
      assert.match(
        operation!.result!.message,
        /a scale returns the autoscaling\/v1 Scale of the target, not apps\/v1 Deployment.*it reported success 200: deployment\/web scaled to 3\. The operation may have been applied/,
      );
      assert.deepEqual(operation!.result?.objects, [], 'the invalid payload is not stored');
      const metrics = await (await fetch(`${t.gateway.httpUrl}/metrics`)).text();
      assert.match(metrics, /^outpost_gateway_operation_results_invalid_total\{type="scale"\} 1$/m);
    });

    test('a client id: same request → same record; different request → ALREADY_EXISTS', async () => {
      const a = await agent('agent-idem', ['acc-idem']);
      const req = { account: 'acc-idem', id: 'deploy-42.retry_1', spec: patchSpec, timeout: { seconds: 30n } };
      const first = await client.submitOperation({ ...req, wait: true });
      assert.equal(first.operation!.id, 'deploy-42.retry_1');
      const second = await client.submitOperation(req);
      assert.equal(second.operation!.state, OperationState.SUCCEEDED);
      assert.deepEqual(second.operation!.receivedAt, first.operation!.receivedAt);
      assert.equal(a.runs.get('deploy-42.retry_1'), 1);
      assert.equal(a.received.filter((o) => o.id === 'deploy-42.retry_1').length, 1);
      await assert.rejects(
        client.submitOperation({
          ...req,
          spec: { case: 'patch', value: { ...patchSpec.value, name: 'other', type: PatchType.MERGE, patch: '{}' } },
        }),
        (err: ConnectError) => err.code === Code.AlreadyExists && /already used for a different request/.test(err.rawMessage),
      );
      await assert.rejects(
        client.submitOperation({ ...req, timeout: { seconds: 31n } }),
        (err: ConnectError) => err.code === Code.AlreadyExists,
      );
    });
  });
}
