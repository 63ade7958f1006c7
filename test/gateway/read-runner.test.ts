/**
 * The read runner alone (read-runner.ts), over fake sessions: only the session a read went out on answers it, a
 * late answer of an ended read is taken quietly, anything else is left to the operations feature, and closing ends
 * every pending read.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { GetSpecSchema, OperationResultSchema, type Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { createReadRunner, type ReadSession } from '../../src/gateway/operations/read-runner.js';
import { createSilentLogger } from '../../src/shared/logger.js';

function fakeSession(id: string): ReadSession & { sent: Operation[]; end(): void } {
  let end!: () => void;
  const done = new Promise<void>((r) => (end = r));
  return { id, agentId: `agent-of-${id}`, done, sent: [], end };
}

const getSpec = { case: 'get' as const, value: create(GetSpecSchema, { kind: 'ConfigMap', namespace: 'default', name: 'cm' }) };
const ok = (id: string) =>
  create(OperationResultSchema, {
    id,
    account: 'acct',
    success: true,
    statusCode: 200,
    objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }],
  });

describe('read runner', () => {
  const setup = (session: ReturnType<typeof fakeSession> | undefined) =>
    createReadRunner({
      gatewayId: 'gw',
      sendLocal: (_account, operation) => {
        session?.sent.push(operation);
        return session;
      },
      accountExists: async (name) => name === 'acct',
      agentWaitMs: 0,
      logger: createSilentLogger(),
    });

  test('only the session it went out on answers a read; other results are left to the operations feature', async () => {
    const session = fakeSession('s1');
    const runner = setup(session);
    const local = runner.startLocal({ account: 'acct', spec: getSpec, timeoutMs: 30_000, requestedBy: 'me' })!;
    const id = session.sent[0]!.id;
    assert.match(id, /^read-/);
    assert.equal(runner.takeResult({ id: 's2' }, ok(id)), false, 'another session: not the read’s answer');
    assert.equal(runner.takeResult({ id: 's1' }, ok('some-stored-operation')), false, 'not a read: left alone');
    assert.equal(runner.takeResult({ id: 's1' }, ok(id)), true);
    const row = await local.row;
    assert.equal(row.state, 'SUCCEEDED');
    assert.equal(row.sessionId, 's1');
    assert.equal(row.agentId, 'agent-of-s1');
    assert.equal(row.storedAt, null);
    assert.equal(runner.takeResult({ id: 's2' }, ok(id)), true, 'a late answer of an ended read is taken quietly, from any session');
  });

  test('a stream that ends, and closing the runner, end pending reads FAILED; a closed runner takes none', async () => {
    const session = fakeSession('s1');
    const runner = setup(session);
    const first = runner.startLocal({ account: 'acct', spec: getSpec, timeoutMs: 30_000, requestedBy: '' })!;
    session.end();
    assert.equal((await first.row).state, 'FAILED');
    const second = runner.startLocal({ account: 'acct', spec: getSpec, timeoutMs: 30_000, requestedBy: '' })!;
    runner.close();
    const closed = await second.row;
    assert.equal(closed.state, 'FAILED');
    assert.match(closed.error, /shutting down/);
    assert.equal(runner.startLocal({ account: 'acct', spec: getSpec, timeoutMs: 30_000, requestedBy: '' }), undefined);
  });

  test('no stream: FAILED for a known account, NOT_FOUND for an unknown one', async () => {
    const runner = setup(undefined);
    const caller = { principal: { subject: 'x', method: 'token' as const, roles: new Set<never>(), accounts: {} }, role: 'write' as const };
    const row = await runner.run({ account: 'acct', spec: getSpec, timeoutMs: 1000, requestedBy: '' }, caller);
    assert.equal(row.state, 'FAILED');
    assert.match(row.error, /no agent connected for account acct/);
    await assert.rejects(
      runner.run({ account: 'other', spec: getSpec, timeoutMs: 1000, requestedBy: '' }, caller),
      /unknown account "other"/,
    );
  });
});
