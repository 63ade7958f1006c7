/**
 * Trust in operation results and forwarded operations comes from the connection, not from ids inside a message:
 * a result counts only when it arrives on the stream session the operation was sent on (or on the session that
 * resumed it with its token, as the same identity) — a stream that merely announces the same agent id, or a restarted
 * agent without the session token, is ignored and counted; an operation forwarded over the replica route runs only
 * when it is an open operation the origin stored, as stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { PatchType, type Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { FORWARD_PATH } from '../../src/gateway/replicas/dispatch.js';
import { testDrivers } from '../../testkit/databases.js';
import { connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { gate, okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';
import { eventually } from '../../testkit/eventually.js';

const TOKENS = { one: 'agent-one-token-0123456789', two: 'agent-two-token-0123456789', ops: 'operator-token-0123456789' };
/** A stored operation (reads are not stored): a merge patch of ConfigMap cm. */
const patchSpec = {
  case: 'patch' as const,
  value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm', type: PatchType.MERGE, patch: '{"data":{}}' },
};
/** A well-formed answer to patchSpec (the result rules hold), so only who sends it decides. */
const validPatch = {
  success: true,
  statusCode: 200,
  objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }],
};

/** The value of `outpost_gateway_operation_results_ignored_total{reason}` on the gateway's /metrics. */
async function ignoredResults(httpUrl: string, reason: string, bearer?: string): Promise<number> {
  const res = await fetch(`${httpUrl}/metrics`, { headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`outpost_gateway_operation_results_ignored_total{reason="${reason}"}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

for (const driver of testDrivers()) {
  describe(`operation results come only from the session the operation was sent on (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof OperationService>;
    const agents: OperationAgent[] = [];
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        insecure: false,
        operations: { agentWaitSeconds: 2, sweepIntervalMs: 100, defaultTimeoutSeconds: 10 },
        auth: {
          tokens: [
            { subject: 'agent-one', token: TOKENS.one },
            { subject: 'agent-two', token: TOKENS.two },
            { subject: 'operator', token: TOKENS.ops },
          ],
        },
        authorization: {
          rules: [
            { kind: 'token' as const, subject: '^agent-(one|two)$', roles: ['agent'], accounts: ['trust-*'] },
            { kind: 'token' as const, subject: '^operator$', roles: ['read', 'write'], accounts: ['*'] },
          ],
        },
      });
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const s of streams) s.abort();
      for (const a of agents) await a.close().catch(() => {});
      await t?.close();
    });
    const asOperator = { headers: { authorization: `Bearer ${TOKENS.ops}` } };
    const row = async (id: string) => (await t.query<Record<string, any>>(`select * from operations where id = '${id}'`))[0]!;
    const ignored = (reason: string) => ignoredResults(t.gateway.httpUrl, reason, TOKENS.ops);

    test('a stream of another identity announcing the same agent id cannot answer the operation', async () => {
      const release = gate();
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-x', ['trust-1'], {
        bearer: TOKENS.one,
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      agents.push(a);
      const impostor = openAgentStream(t.gateway.grpcUrl, { bearer: TOKENS.two });
      streams.push(impostor);
      await connectAgent(impostor, 'agent-x', [{ name: 'trust-1' }]);

      const { operation: sent } = await client.submitOperation({ account: 'trust-1', spec: patchSpec }, asOperator);
      assert.equal(sent!.state, OperationState.SENT);
      await a.waitReceived(sent!.id);
      const before = (await ignored('wrong_session')) + (await ignored('account_not_served'));
      impostor.send({
        case: 'operationResult',
        value: { ...validPatch, id: sent!.id, account: 'trust-1', message: 'forged by the impostor' },
      });
      await eventually(
        'the forged result to be counted',
        async () => (await ignored('wrong_session')) + (await ignored('account_not_served')) > before,
      );
      assert.equal((await row(sent!.id)).state, 'SENT', 'the forged result changed nothing');

      release.open();
      const { operation } = await client.submitOperation({ account: 'trust-1', id: sent!.id, spec: patchSpec, wait: true }, asOperator);
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.doesNotMatch(JSON.stringify((await row(sent!.id)).result), /forged/);
    });

    test('a restarted agent (no session token) neither gets nor answers an operation sent on its old session', async () => {
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-r', ['trust-2'], {
        bearer: TOKENS.one,
        answer: () => new Promise(() => {}),
      });
      agents.push(a);
      const { operation: sent } = await client.submitOperation(
        { account: 'trust-2', spec: patchSpec, timeout: { seconds: 4n } },
        asOperator,
      );
      await a.waitReceived(sent!.id);
      const oldSession = a.session.id;
      await a.cut();
      await a.reconnect(undefined, { resume: false });
      assert.notEqual(a.session.id, oldSession);
      const before = await ignored('wrong_session');
      a.sendResult({ ...validPatch, id: sent!.id, account: 'trust-2', message: 'from the new session' });
      await eventually('the result of the new session to be counted', async () => (await ignored('wrong_session')) > before);
      const { operation } = await client.submitOperation(
        { account: 'trust-2', id: sent!.id, spec: patchSpec, timeout: { seconds: 4n }, wait: true },
        asOperator,
      );
      assert.equal(operation!.state, OperationState.TIMED_OUT, 'not answered by another session');
      assert.equal(a.received.filter((o) => o.id === sent!.id).length, 1, 'not redelivered to a session that did not resume the old one');
      assert.equal((await row(sent!.id)).session_id, oldSession);
    });

    test('the session that resumed the old one with its token answers it', async () => {
      const release = gate();
      const a = await startOperationAgent(t.gateway.grpcUrl, 'agent-s', ['trust-3'], {
        bearer: TOKENS.one,
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
      agents.push(a);
      const { operation: sent } = await client.submitOperation({ account: 'trust-3', spec: patchSpec }, asOperator);
      await a.waitReceived(sent!.id);
      await a.cut();
      await a.reconnect();
      assert.equal((await row(sent!.id)).session_id, a.session.id, 'the open operation moved to the resuming session');
      release.open();
      const { operation } = await client.submitOperation({ account: 'trust-3', id: sent!.id, spec: patchSpec, wait: true }, asOperator);
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.equal(a.runs.get(sent!.id), 1);
    });
  });

  describe(`a redelivered operation goes only to the session it was sent on (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof OperationService>;
    const agents: OperationAgent[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        operations: { agentWaitSeconds: 2, sweepIntervalMs: 100, defaultTimeoutSeconds: 20 },
        replicas: { standbyCheckIntervalSeconds: 0.1 },
      });
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const a of agents) await a.close().catch(() => {});
      await t?.close();
    });
    const owner = async (account: string) =>
      (await t.query<{ session_id: string; state: string }>(`select session_id, state from accounts where name = '${account}'`))[0];

    test('an agent that resumes as STANDBY gets its operation back; the agent now caching the account never does', async () => {
      const release = gate();
      const answer = async (op: Operation) => {
        await release.promise;
        return okResult(op);
      };
      const first = await startOperationAgent(t.gateway.grpcUrl, 'agent-first', ['handover'], { answer });
      agents.push(first);
      const second = await startOperationAgent(t.gateway.grpcUrl, 'agent-second', ['handover'], { answer });
      agents.push(second);
      const { operation: sent } = await client.submitOperation({ account: 'handover', spec: patchSpec });
      await first.waitReceived(sent!.id);
      await first.cut();
      // The standby agent takes the account over, then the first one resumes its session (now as STANDBY).
      await eventually(
        'the second agent caching',
        async () => (await owner('handover'))?.session_id === second.session.id && (await owner('handover'))?.state === 'ACTIVE',
      );
      await first.reconnect();
      await first.waitReceived(sent!.id, 2);
      // A later operation is sent to the caching agent: the redelivery, which came before it, did not go there.
      const { operation: later } = await client.submitOperation({ account: 'handover', spec: patchSpec });
      await second.waitReceived(later!.id);
      assert.deepEqual(
        second.received.map((o) => o.id),
        [later!.id],
        'the caching agent never got the first operation',
      );
      release.open();
      const { operation } = await client.submitOperation({ account: 'handover', id: sent!.id, spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      assert.equal(first.runs.get(sent!.id), 1);
      assert.equal(second.runs.get(sent!.id), undefined);
    });
  });

  describe(`forwarded operations must match a stored operation (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: Client<typeof OperationService>;
    let agent: OperationAgent;
    const release = gate();
    before(async () => {
      t = await startTestGateway(driver, { operations: { agentWaitSeconds: 2, sweepIntervalMs: 100, defaultTimeoutSeconds: 10 } });
      client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-f', ['fwd-1'], {
        answer: async (op) => {
          await release.promise;
          return okResult(op);
        },
      });
    });
    after(async () => {
      release.open();
      await agent?.close().catch(() => {});
      await t?.close();
    });
    const forward = async (origin: string, operation: Record<string, unknown>) => {
      const res = await fetch(`${t.gateway.httpUrl}${FORWARD_PATH}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ origin, operation }),
      });
      return { status: res.status, body: (await res.json()) as { error?: string; message?: string } };
    };
    const wire = (id: string, name = 'cm') => ({
      id,
      account: 'fwd-1',
      timeout: '5s',
      patch: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name, type: 'PATCH_TYPE_MERGE', patch: '{"data":{}}' },
    });

    test('no stored row, another spec, another origin or an ended operation: refused, nothing reaches the agent', async () => {
      const unknown = await forward('gw-test', wire('never-stored-1'));
      assert.equal(unknown.status, 404);
      assert.equal(unknown.body.error, 'not_found');

      const { operation: sent } = await client.submitOperation({ account: 'fwd-1', spec: patchSpec });
      await agent.waitReceived(sent!.id);
      const tampered = await forward('gw-test', wire(sent!.id, 'another-object'));
      assert.deepEqual([tampered.status, tampered.body.error], [403, 'permission_denied']);
      const elsewhere = await forward('gw-elsewhere', wire(sent!.id));
      assert.deepEqual([elsewhere.status, elsewhere.body.error], [403, 'permission_denied']);
      const otherAccount = await forward('gw-test', { ...wire(sent!.id), account: 'fwd-2' });
      assert.equal(otherAccount.status, 403);

      // As stored, by its origin: sent again (the agent de-duplicates on the id).
      const same = await forward('gw-test', wire(sent!.id));
      assert.equal(same.status, 200);
      await agent.waitReceived(sent!.id, 2);
      assert.deepEqual(
        agent.received.map((o) => o.id),
        [sent!.id, sent!.id],
        'the refused forwards sent nothing (the accepted one, sent after them, is the only other message)',
      );

      release.open();
      const { operation } = await client.submitOperation({ account: 'fwd-1', id: sent!.id, spec: patchSpec, wait: true });
      assert.equal(operation!.state, OperationState.SUCCEEDED);
      const ended = await forward('gw-test', wire(sent!.id));
      assert.deepEqual([ended.status, ended.body.error], [409, 'failed_precondition']);
      assert.equal(agent.runs.get(sent!.id), 1);
    });
  });
}
