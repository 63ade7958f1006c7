/**
 * Reads through a replica that does not hold the account's stream (two in-process gateways on one Postgres, tokens):
 * passed one hop to the holder with the caller described, admitted again there with the holder's OWN rules, run on its
 * stream and answered on the same call — nothing stored on either replica. The internal route refuses what is not a
 * read, a caller description it cannot read, and any credential but a replica's.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import { encodeDescription } from '../../src/gateway/auth/vouched-principal.js';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import { testDrivers } from '../../testkit/databases.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { okResult, startOperationAgent, type OperationAgent } from './operations-helpers.js';

const pg = testDrivers().includes('postgres');
const AGENT = 'agent-token-0123456789abcdef';
const WRITER = 'writer-token-0123456789abcdef';
/** Reaches every account on the receiving replica, only `other-*` on the holder. */
const NARROW = 'narrow-token-0123456789abcdef';
const cm = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' };

describe('reads forwarded to the replica holding the stream (postgres)', {
  skip: pg ? false : 'needs OUTPOST_TEST_POSTGRES',
  concurrency: false,
}, () => {
  let dir: string;
  let a: TestGateway;
  let b: TestGateway;
  let agent: OperationAgent;

  const config = (narrowAccounts: string[]): GatewayConfigInput => ({
    ...tokenGateway(
      [
        { subject: 'agent', token: AGENT, roles: ['agent'], accounts: ['*'] },
        { subject: 'writer', token: WRITER, roles: ['read', 'write'], accounts: ['*'] },
        { subject: 'narrow', token: NARROW, roles: ['read', 'write'], accounts: narrowAccounts },
      ],
      'authenticated',
      join(dir, 'replica-secret'),
    ),
    replicas: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 2, leaseSeconds: 30 },
  });
  const submit = async (gw: TestGateway, token: string, body: Record<string, unknown>) => {
    const res = await fetch(`${gw.gateway.httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const count = async () => Number((await a.query<{ n: string }>('select count(*) as n from operations'))[0]!.n);
  const forwardedReads = async (gw: TestGateway) => {
    const text = await (await fetch(`${gw.gateway.httpUrl}/metrics`, { headers: { authorization: `Bearer ${WRITER}` } })).text();
    const line = text.split('\n').find((l) => l.startsWith('outpost_gateway_reads_total{type="get",via="forwarded",state="SUCCEEDED"}'));
    return Number(line?.split(' ').at(-1) ?? 0);
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-reads-fwd-'));
    writeFileSync(join(dir, 'replica-secret'), 'replica-secret-0123456789-0123456789-abcdef');
    a = await startTestGateway('postgres', { id: 'gw-a', ...config(['other-*']) });
    // Its own throwaway database is left unused: B runs on A's.
    b = await startTestGateway('postgres', { id: 'gw-b', database: a.testDb.url, ...config(['*']) });
    for (;;) {
      const res = await fetch(`${b.gateway.httpUrl}/armory/clouddrivers`, { headers: { authorization: `Bearer ${WRITER}` } });
      if (((await res.json()) as unknown[]).length === 2) break;
      await sleep(100);
    }
    agent = await startOperationAgent(a.gateway.grpcUrl, 'agent-fwd', ['remote'], { bearer: AGENT });
  });
  after(async () => {
    await agent?.close();
    await b?.close();
    await a?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a read through the other replica runs on the holding stream, answered on the same call, stored nowhere', async () => {
    const before = await count();
    const res = await submit(b, WRITER, { account: 'remote', get: cm, id: 'fwd-read' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const record = res.body.operation;
    assert.equal(record.state, 'OPERATION_STATE_SUCCEEDED');
    assert.equal(record.id, 'fwd-read');
    assert.equal(record.gatewayId, 'gw-b', 'the replica that received it');
    assert.equal(record.agentId, 'agent-fwd');
    assert.equal(record.requestedBy, 'token:writer');
    assert.equal(record.storedAt, undefined);
    assert.deepEqual(record.result.objects, okResult(agent.received.at(-1)!).objects);
    assert.match(agent.received.at(-1)!.id, /^read-/, 'the holder gave it a fresh agent id');
    assert.equal(await count(), before, 'no operation row on either replica (one database)');
    assert.equal(await forwardedReads(b), 1);
  });

  test('the holder admits the caller again with its own rules: refused there, refused here, nothing runs', async () => {
    const ran = agent.received.length;
    const res = await submit(b, NARROW, { account: 'remote', get: cm });
    assert.equal(res.status, 403, JSON.stringify(res.body));
    assert.equal(res.body.code, 'permission_denied');
    assert.match(res.body.message, /narrow may not read account "remote" \(authorization\.rules of replica gw-a/);
    assert.equal(agent.received.length, ran);
  });

  test('the internal route: replica credentials only, reads only, a readable caller; a bad body runs nothing', async () => {
    const signer = createReplicaTokenSigner(join(dir, 'replica-secret'), 'gw-b');
    const replicaToken = await signer.token();
    const caller = encodeDescription({ method: 'token', subject: 'writer', groups: [] });
    const operation = { id: 'direct-1', account: 'remote', timeout: '5s', get: cm };
    const post = async (token: string, body: unknown) => {
      const res = await fetch(`${a.gateway.httpUrl}/armory/agent/forwardedreads`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify(body),
      });
      return { status: res.status, text: await res.text() };
    };
    const ran = agent.received.length;
    assert.equal((await post(WRITER, { operation, caller, role: 'write', requestedBy: 'x' })).status, 403, 'a writer is not a replica');
    for (const [body, message] of [
      [
        {
          operation: { ...operation, get: undefined, scale: { kind: 'Deployment', name: 'web', replicas: 0 } },
          caller,
          role: 'write',
          requestedBy: '',
        },
        /only reads/,
      ],
      [{ operation, caller: 'not-base64-json', role: 'write', requestedBy: '' }, /caller is not a well-formed/],
      [{ operation, caller, role: 'admin', requestedBy: '' }, /role must be/],
      [{ operation: { ...operation, timeout: '0s' }, caller, role: 'write', requestedBy: '' }, /timeout must be greater than 0/],
      [{ operation: { ...operation, id: 'bad id' }, caller, role: 'write', requestedBy: '' }, /operation\.id must be/],
      [[], /JSON object/],
    ] as const) {
      const res = await post(replicaToken, body);
      assert.equal(res.status, 400, res.text);
      assert.match(res.text, message);
    }
    // A replica vouching for a caller the holder's rules do not let reach the account: refused.
    const narrow = encodeDescription({ method: 'token', subject: 'narrow', groups: [] });
    assert.equal((await post(replicaToken, { operation, caller: narrow, role: 'write', requestedBy: '' })).status, 403);
    assert.equal(agent.received.length, ran, 'nothing reached the agent');
    const ok = await post(replicaToken, { operation, caller, role: 'write', requestedBy: 'token:writer' });
    assert.equal(ok.status, 200);
    const [head, tail] = ok.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(head, { agentId: 'agent-fwd', sessionId: agent.session.id, gatewayId: 'gw-a' });
    assert.equal(tail.row.state, 'SUCCEEDED');
    assert.equal(tail.row.id, 'direct-1');
  });
});
