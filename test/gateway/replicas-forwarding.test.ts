/**
 * Operation forwarding between replicas (two in-process gateways sharing one Postgres, authenticated with replica
 * tokens and static tokens, not insecure): an operation submitted to the replica without the agent's stream is
 * forwarded to the one holding it and its result comes back and is recorded once; an operation waiting for an agent
 * is delivered by whichever replica the agent connects to; the internal routes refuse bad input and wrong session
 * tokens with a JSON error and change nothing. Forwarding has its own path; its earlier one (a POST beside the GET of
 * the operation history) is still served, the same way, for replicas of earlier versions during a rolling upgrade.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { loadGatewayConfig, startGateway, type GatewayConfigInput, type RunningGateway } from '../../src/gateway/index.js';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import { ANSWER_WITH_ROW, FORWARD_PATH, LEGACY_FORWARD_PATH } from '../../src/gateway/replicas/dispatch.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { gate, okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const pg = testDrivers().includes('postgres');
const AGENT_TOKEN = 'agent-token-0123456789abcdef';
const CLIENT_TOKEN = 'client-token-0123456789abcdef';
const REPLICA_SECRET = 'replica-secret-0123456789-0123456789-abcdef';

describe('operation forwarding between replicas (postgres)', {
  skip: pg ? false : 'needs OUTPOST_TEST_POSTGRES',
  concurrency: false,
}, () => {
  let dir: string;
  let a: TestGateway;
  let b: RunningGateway;
  let replicaToken: string;
  const agents: OperationAgent[] = [];
  let n = 0;

  const secure = (): GatewayConfigInput => ({
    ...tokenGateway(
      [
        { subject: 'agent', token: AGENT_TOKEN, roles: ['agent'], accounts: ['*'] },
        { subject: 'client', token: CLIENT_TOKEN, roles: ['read', 'write'], accounts: ['*'] },
      ],
      'authenticated',
      join(dir, 'replica-secret'),
    ),
    replicas: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 10, leaseSeconds: 30 },
    operations: { agentWaitSeconds: 5 },
  });
  const client = (gw: RunningGateway) =>
    createClient(
      OperationService,
      createConnectTransport({
        baseUrl: gw.httpUrl,
        httpVersion: '1.1',
        interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${CLIENT_TOKEN}`), next(req))],
      }),
    );
  const post = async (gw: RunningGateway, path: string, body: unknown, opts: { token?: string; type?: string; raw?: string } = {}) => {
    const res = await fetch(`${gw.httpUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': opts.type ?? 'application/json', authorization: `Bearer ${opts.token ?? replicaToken}` },
      body: opts.raw ?? JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { error?: string; message?: string; agentId?: string } };
  };
  const agentOn = async (gw: RunningGateway, id: string, accounts: string[]) => {
    const agent = await startOperationAgent(gw.grpcUrl, id, accounts, { bearer: AGENT_TOKEN });
    agents.push(agent);
    return agent;
  };

  /** The open operation of `account` once one is stored. */
  const eventuallyOpenOperation = async (account: string) => {
    for (;;) {
      const rows = await a.query<{ id: string }>(`select id from operations where account = '${account}' and state in ('PENDING', 'SENT')`);
      if (rows[0]) return rows[0];
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-forward-'));
    writeFileSync(join(dir, 'replica-secret'), REPLICA_SECRET);
    replicaToken = await createReplicaTokenSigner(join(dir, 'replica-secret'), 'gw-test-client').token();
    a = await startTestGateway('postgres', { id: 'gw-a', ...secure() });
    b = await startGateway(
      loadGatewayConfig({
        env: {},
        overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: a.testDb.url, id: 'gw-b', ...secure() },
      }),
      { logger: createSilentLogger() },
    );
    // Both replicas know each other (database heartbeats).
    for (;;) {
      const res = await fetch(`${b.httpUrl}/armory/clouddrivers`, { headers: { authorization: `Bearer ${CLIENT_TOKEN}` } });
      const list = (await res.json()) as { id: string }[];
      if (list.length === 2) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  after(async () => {
    for (const agent of agents) agent.stream.abort();
    await b?.close();
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('an operation submitted where the agent is not connected is forwarded to the replica holding its stream, and its result comes back once', async () => {
    const account = `fwd-${++n}`;
    const agent = await agentOn(a.gateway, 'agent-1', [account]);
    const op = await client(b).submitOperation({
      account,
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
    });
    assert.equal(op.operation?.state, OperationState.SUCCEEDED);
    assert.equal(agent.runs.get(op.operation!.id), 1);
    const rows = await a.query<{ gateway_id: string; agent_id: string; state: string }>(
      `select gateway_id, agent_id, state from operations where id = '${op.operation!.id}'`,
    );
    assert.deepEqual(rows, [{ gateway_id: 'gw-b', agent_id: 'agent-1', state: 'SUCCEEDED' }]);
    // Counted, and the metrics need the read role like every read route.
    const metrics = await fetch(`${b.httpUrl}/metrics`, { headers: { authorization: `Bearer ${CLIENT_TOKEN}` } });
    assert.match(await metrics.text(), /outpost_gateway_forwarded_operations_total\{result="taken"\} [1-9]/);
    assert.equal((await fetch(`${b.httpUrl}/metrics`)).status, 401);
    // Submitted on the replica holding the stream it runs locally too.
    const local = await client(a.gateway).submitOperation({
      account,
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'y', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
    });
    assert.equal(local.operation?.state, OperationState.SUCCEEDED);
  });

  test('an operation waiting for an agent reaches it when it connects to another replica (the receiving replica dispatches it again), and its result reaches the submitter', async () => {
    const account = `fwd-${++n}`;
    // The account exists (an agent registered it earlier) but no agent serves it now.
    const first = await agentOn(a.gateway, 'agent-2', [account]);
    await first.close();
    const pending = client(b).submitOperation({
      account,
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
    });
    await new Promise((r) => setTimeout(r, 300));
    const agent = await agentOn(a.gateway, 'agent-2', [account]);
    const op = await pending;
    assert.equal(op.operation?.state, OperationState.SUCCEEDED);
    assert.equal(agent.runs.get(op.operation!.id), 1);
  });

  test('with no agent anywhere the operation fails clearly after the agent wait', async () => {
    const account = `fwd-${++n}`;
    const first = await agentOn(a.gateway, 'agent-3', [account]);
    await first.close();
    const op = await client(b).submitOperation({
      account,
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
    });
    assert.equal(op.operation?.state, OperationState.FAILED);
    assert.match(op.operation!.error, new RegExp(`no agent connected for account ${account}`));
  });

  test('POST /armory/agent/forwardedoperations and its earlier path: 404 for an operation nobody stored, 409 when no local stream serves the account; bad bodies are 4xx JSON errors; only replicas may call them', async () => {
    assert.equal(FORWARD_PATH, '/armory/agent/forwardedoperations');
    assert.equal(LEGACY_FORWARD_PATH, '/armory/agent/operations');
    const operation = { id: 'op-direct-1', account: 'nobody-here', timeout: '5s', get: { kind: 'ConfigMap', name: 'x' } };
    for (const path of [FORWARD_PATH, LEGACY_FORWARD_PATH]) {
      const unstored = await post(b, path, { operation, origin: 'gw-a' });
      assert.deepEqual([unstored.status, unstored.body.error], [404, 'not_found'], path);
    }
    // Stored by gw-a (as its submit would), for an account no stream of b serves.
    const { timeout: _, ...request } = operation;
    await a.query(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash)
      values ('op-direct-1', 'nobody-here', 'get', '${JSON.stringify(request)}', 'PENDING', 'gw-a', 60000, now(), now(), now() + interval '60 seconds', 'h')`);
    for (const path of [FORWARD_PATH, LEGACY_FORWARD_PATH]) {
      const none = await post(b, path, { operation, origin: 'gw-a' });
      assert.equal(none.status, 409, path);
      assert.equal(none.body.error, 'no_stream');
      // The reference's body form: the operation serialized as text.
      assert.equal((await post(b, path, { operation: JSON.stringify(operation), origin: 'gw-a' })).status, 409);
      const cases: [unknown, number, RegExp][] = [
        [[], 400, /JSON object/],
        [{ operation }, 400, /origin/],
        [{ operation: 'not json', origin: 'gw-a' }, 400, /operation is not valid JSON/],
        [{ operation: { id: 'x', account: 'a', nope: 1 }, origin: 'gw-a' }, 400, /not a valid Operation/],
        [{ operation: { id: 'x', account: 'a' }, origin: 'gw-a' }, 400, /spec is empty/],
        [{ operation: { account: 'a', get: {} }, origin: 'gw-a' }, 400, /operation.id/],
        [{ operation: { id: 'x', get: {} }, origin: 'gw-a' }, 400, /operation.account/],
        [{ operation: { id: 'x', account: 'a', get: {} }, origin: 'gw-a' }, 400, /operation.timeout/],
        [{ operation: { id: 'x', account: 'a', timeout: '0s', get: {} }, origin: 'gw-a' }, 400, /operation.timeout/],
        [{ operation, origin: 'x'.repeat(300) }, 400, /origin/],
      ];
      for (const [body, status, message] of cases) {
        const res = await post(b, path, body);
        assert.equal(res.status, status, `${path} ${JSON.stringify(body).slice(0, 80)}`);
        assert.equal(res.body.error, 'bad_request');
        assert.match(res.body.message!, message);
      }
      assert.equal((await post(b, path, null, { raw: '{"operation":' })).status, 400);
      assert.equal((await post(b, path, null, { raw: 'x', type: 'text/plain' })).status, 415);
      assert.equal((await post(b, path, null, { raw: `{"origin":"${'x'.repeat(5 * 1024 * 1024)}"}` })).status, 413);
      // Without a replica token (a client token lacks the replica role) nothing is accepted.
      assert.equal((await post(b, path, { operation, origin: 'gw-a' }, { token: CLIENT_TOKEN })).status, 403, path);
      assert.equal((await post(b, path, { operation, origin: 'gw-a' }, { token: 'wrong-token-0123456789' })).status, 401, path);
      const anonymous = await fetch(`${b.httpUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ operation, origin: 'gw-a' }),
      });
      assert.equal(anonymous.status, 401, path);
    }
    assert.equal((await a.query(`select 1 from operations where id = 'x'`)).length, 0);
    assert.deepEqual(await a.query(`select state, agent_id from operations where id = 'op-direct-1'`), [
      { state: 'PENDING', agent_id: '' },
    ]);
  });

  test('a forward on either path runs the stored operation on the local stream, and its result goes back to the origin once', async () => {
    const account = `fwd-${++n}`;
    const agent = await agentOn(a.gateway, 'agent-paths', [account]);
    for (const path of [FORWARD_PATH, LEGACY_FORWARD_PATH]) {
      // Stored by gw-b (as its submit would), forwarded to gw-a by a replica of this version or of an earlier one.
      const id = `op-path-${path === FORWARD_PATH ? 'new' : 'old'}`;
      const operation = { id, account, timeout: '30s', get: { kind: 'ConfigMap', name: 'x', namespace: 'default' } };
      const { timeout: _, ...request } = operation;
      await a.query(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash)
        values ('${id}', '${account}', 'get', '${JSON.stringify(request)}', 'PENDING', 'gw-b', 30000, now(), now(), now() + interval '30 seconds', 'h')`);
      const taken = await post(a.gateway, path, { operation, origin: 'gw-b' });
      assert.deepEqual([taken.status, taken.body.agentId], [200, 'agent-paths'], path);
      await agent.waitReceived(id);
      // Its result is relayed to the origin, which records it; any replica reads the row.
      let state: OperationState | undefined;
      for (let i = 0; i < 100; i++) {
        state = (await client(b).getOperation({ id })).operation?.state;
        if (state === OperationState.SUCCEEDED) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(state, OperationState.SUCCEEDED, path);
      assert.equal(agent.runs.get(id), 1, path);
    }
  });

  test('one hop: a forward asking for the row is answered on the same call, first with the stream that took it, then with the terminal row once committed', async () => {
    const account = `fwd-${++n}`;
    const release = gate();
    const agent = await startOperationAgent(a.gateway.grpcUrl, 'agent-one-hop', [account], {
      bearer: AGENT_TOKEN,
      answer: async (op) => (await release.promise, okResult(op)),
    });
    agents.push(agent);
    const id = 'op-one-hop';
    const operation = { id, account, timeout: '30s', get: { kind: 'ConfigMap', name: 'x', namespace: 'default' } };
    const { timeout: _, ...request } = operation;
    await a.query(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash)
      values ('${id}', '${account}', 'get', '${JSON.stringify(request)}', 'PENDING', 'gw-b', 30000, now(), now(), now() + interval '30 seconds', 'h')`);
    const res = await fetch(`${a.gateway.httpUrl}${FORWARD_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${replicaToken}` },
      body: JSON.stringify({ operation, origin: 'gw-b', answer: ANSWER_WITH_ROW }),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    const nextLine = async () => {
      for (;;) {
        const nl = text.indexOf('\n');
        if (nl >= 0) {
          const line = text.slice(0, nl);
          text = text.slice(nl + 1);
          return JSON.parse(line) as Record<string, any>;
        }
        const { done, value } = await reader.read();
        if (done) return undefined;
        text += value;
      }
    };
    // The first part comes while the agent still holds its answer.
    const head = await nextLine();
    assert.deepEqual(head, { agentId: 'agent-one-hop', sessionId: agent.session.id, gatewayId: 'gw-a' });
    await agent.waitReceived(id);
    release.open();
    const tail = await nextLine();
    assert.equal(tail?.id, id);
    assert.equal(tail?.row.state, 'SUCCEEDED');
    assert.equal(tail?.row.sessionId, agent.session.id);
    assert.equal(tail?.row.result.success, true);
    assert.equal(await nextLine(), undefined, 'two parts, then the end');
    // Committed before it was answered: the row says so already, recorded once, run once.
    const rows = await a.query<{ state: string; session_id: string }>(`select state, session_id from operations where id = '${id}'`);
    assert.deepEqual(rows, [{ state: 'SUCCEEDED', session_id: agent.session.id }]);
    assert.equal(agent.runs.get(id), 1);

    // Submitted to gw-b and forwarded: the submitter gets the row from the forward's answer — recorded (and counted)
    // by gw-a, not relayed to gw-b to be recorded there.
    const succeeded = async (gw: RunningGateway) => {
      const text = await (await fetch(`${gw.httpUrl}/metrics`, { headers: { authorization: `Bearer ${CLIENT_TOKEN}` } })).text();
      return Number(/^outpost_gateway_operations_total\{type="patch",state="SUCCEEDED"\} (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const before = [await succeeded(a.gateway), await succeeded(b)];
    const op = await client(b).submitOperation({
      account,
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'y', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
    });
    assert.equal(op.operation?.state, OperationState.SUCCEEDED);
    assert.equal(op.operation?.agentId, 'agent-one-hop');
    assert.equal(agent.runs.get(op.operation!.id), 1);
    assert.deepEqual([await succeeded(a.gateway), await succeeded(b)], [before[0]! + 1, before[1]]);
  });

  test('the replica holding the stream goes away mid-forward: the agent resumes its session on the origin, and the submitter gets the result, run once', async () => {
    const account = `fwd-${++n}`;
    const c = await startGateway(
      loadGatewayConfig({
        env: {},
        overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: a.testDb.url, id: 'gw-c', ...secure() },
      }),
      { logger: createSilentLogger() },
    );
    let cClosed = false;
    try {
      for (;;) {
        const res = await fetch(`${b.httpUrl}/armory/clouddrivers`, { headers: { authorization: `Bearer ${CLIENT_TOKEN}` } });
        const list = (await res.json()) as { id: string }[];
        if (list.some((r) => r.id === 'gw-c')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const release = gate();
      const agent = await startOperationAgent(c.grpcUrl, 'agent-mid-forward', [account], {
        bearer: AGENT_TOKEN,
        answer: async (op) => (await release.promise, okResult(op)),
      });
      agents.push(agent);
      const pending = client(b).submitOperation({
        account,
        wait: true,
        timeout: { seconds: 30n },
        spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
      });
      const received = await agent.waitReceived((await eventuallyOpenOperation(account)).id);
      // gw-c goes away while its forward waits for the agent's answer; the agent resumes its session on gw-b.
      await c.close();
      cClosed = true;
      await agent.reconnect(b.grpcUrl);
      release.open();
      const op = await pending;
      assert.equal(op.operation?.state, OperationState.SUCCEEDED, op.operation?.error);
      assert.equal(op.operation?.id, received.id);
      assert.equal(agent.runs.get(received.id), 1, 'run once');
    } finally {
      if (!cClosed) await c.close();
    }
  });

  test('POST /armory/agent/operationresults needs the session token of a stream serving the account; a right one records once', async () => {
    const account = `fwd-${++n}`;
    const stream = openAgentStream(a.gateway.grpcUrl, { bearer: AGENT_TOKEN });
    stream.send({
      case: 'hello',
      value: {
        agentId: 'agent-r',
        zone: 't',
        version: 't',
        replicas: 1,
        accounts: [{ name: account, apiHost: 'https://r:6443', caFingerprint: 'cd'.repeat(32) }],
      },
    });
    const welcome = (await stream.next()).message.value as { sessionId: string; sessionToken: string };
    try {
      // An operation waiting for its result, submitted on gw-b and sent to this stream.
      const submitted = await client(b).submitOperation({
        account,
        spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', namespace: 'default', type: PatchType.MERGE, patch: '{}' } },
      });
      const id = submitted.operation!.id;
      const result = {
        id,
        account,
        success: true,
        statusCode: 200,
        message: 'ok',
        objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } }],
      };
      const wrong = await post(b, '/armory/agent/operationresults', {
        result,
        sessionId: welcome.sessionId,
        sessionToken: 'not-the-token',
      });
      assert.equal(wrong.status, 401);
      assert.match(wrong.body.message!, /invalid session token/);
      const otherAccount = await post(b, '/armory/agent/operationresults', {
        result: { ...result, account: 'someone-else' },
        sessionId: welcome.sessionId,
        sessionToken: welcome.sessionToken,
      });
      assert.equal(otherAccount.status, 403);
      assert.equal((await a.query<{ state: string }>(`select state from operations where id = '${id}'`))[0]!.state, 'SENT');
      for (const bad of [
        {},
        { result, sessionId: welcome.sessionId },
        { result: { success: true }, sessionId: 's', sessionToken: 't' },
        { result: 5, sessionId: 's', sessionToken: 't' },
      ]) {
        assert.equal((await post(b, '/armory/agent/operationresults', bad)).status, 400, JSON.stringify(bad));
      }
      const ok = await post(b, '/armory/agent/operationresults', {
        result,
        sessionId: welcome.sessionId,
        sessionToken: welcome.sessionToken,
      });
      assert.equal(ok.status, 200);
      const again = await post(b, '/armory/agent/operationresults', {
        result: { ...result, success: false, message: 'late' },
        sessionId: welcome.sessionId,
        sessionToken: welcome.sessionToken,
      });
      assert.equal(again.status, 200);
      const rows = await a.query<{ state: string; result: { message: string } }>(`select state, result from operations where id = '${id}'`);
      assert.deepEqual([rows[0]!.state, rows[0]!.result.message], ['SUCCEEDED', 'ok']);
    } finally {
      stream.abort();
    }
  });
});
