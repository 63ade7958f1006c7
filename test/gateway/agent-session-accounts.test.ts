/**
 * AccountsChanged over real HTTP/2 streams: added accounts are admitted like a Hello's (verdicts in order, ACTIVE
 * rows, the session row's lists), removed ones are released (INACTIVE, later events dropped, no more operations),
 * pending operations reach an account once it is added, and a malformed change ends the stream with
 * INVALID_ARGUMENT having changed nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Verdict, type AccountVerdicts, type ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import {
  Code,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

const patchSpec = {
  case: 'patch' as const,
  value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm', type: PatchType.MERGE, patch: '{}' },
};

/** An AccountInfo on cluster `https://cluster-<name>:6443` unless given otherwise. */
function info(name: string, apiHost = `https://cluster-${name}:6443`) {
  return {
    name,
    apiHost,
    caFingerprint: 'ab'.repeat(32),
    kubernetesVersion: 'v1.30.0',
    kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
  };
}

function changed(changeId: number, removed: string[], added: ReturnType<typeof info>[]) {
  return { case: 'accountsChanged' as const, value: { changeId: BigInt(changeId), removed, added } };
}

/** The next message that is not an ack. */
async function nextNonAck(s: TestAgentStream): Promise<ConnectResponse> {
  for (;;) {
    const m = await s.next();
    if (m.message.case !== 'ack') return m;
  }
}

async function verdictsOf(s: TestAgentStream): Promise<AccountVerdicts> {
  const m = await nextNonAck(s);
  if (m.message.case !== 'verdicts') throw new Error(`expected verdicts, got ${m.message.case}`);
  return m.message.value;
}

for (const driver of testDrivers()) {
  describe(`agent AccountsChanged (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let ops: Client<typeof OperationService>;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 5 },
        // agentWaitSeconds: long enough for an account added during the wait to arrive on a loaded machine.
        operations: { agentWaitSeconds: 3, sweepIntervalMs: 100, defaultTimeoutSeconds: 30 },
      });
      ops = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
    });
    const open = () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      streams.push(s);
      return s;
    };
    const account = async (name: string) =>
      (await t.query<{ state: string; session_id: string }>(`select state, session_id from accounts where name = '${name}'`))[0];
    const session = async (id: string) =>
      (
        await t.query<{ caching: string[]; standby: string[]; refused: string[] }>(
          `select caching, standby, refused from agent_sessions where id = '${id}'`,
        )
      )[0];
    const objectNames = async (acc: string) =>
      (await t.query<{ name: string }>(`select name from objects where account = '${acc}' order by name`)).map((r) => r.name);

    test('added accounts get verdicts in order, removed ones are released; events of a removed account end the stream PERMISSION_DENIED', async () => {
      // gamma is bound to another cluster first.
      const other = open();
      await connectAgent(other, 'agent-other', [{ name: 'gamma', apiHost: 'https://elsewhere:6443' }]);
      other.end();
      await other.ended;

      const s = open();
      const w = await connectAgent(s, 'agent-ch', [{ name: 'alpha' }]);
      s.send(changed(7, [], [info('beta'), info('gamma')]));
      const v = await verdictsOf(s);
      assert.equal(v.changeId, 7n);
      assert.deepEqual(
        v.accounts.map((a) => [a.account, a.verdict]),
        [
          ['beta', Verdict.CACHING],
          ['gamma', Verdict.REFUSED],
        ],
      );
      assert.match(v.accounts[1]!.reason, /bound to cluster https:\/\/elsewhere:6443/);
      assert.deepEqual(await account('beta'), { state: 'ACTIVE', session_id: w.sessionId });
      assert.deepEqual(await session(w.sessionId), { caching: ['alpha', 'beta'], standby: [], refused: ['gamma'] });

      s.send(events(1, [event('beta', EventType.ADDED, configMap('b1', 5)), event('alpha', EventType.ADDED, configMap('a1', 5))]));
      // The change is applied after the batch before it commits: a1 is stored although alpha is removed next.
      s.send(changed(8, ['alpha'], []));
      const v2 = await verdictsOf(s);
      assert.equal(v2.changeId, 8n);
      assert.deepEqual(v2.accounts, []);
      assert.deepEqual(await objectNames('beta'), ['b1']);
      assert.deepEqual(await objectNames('alpha'), ['a1']);
      assert.equal((await account('alpha'))!.state, 'INACTIVE');
      assert.deepEqual(await session(w.sessionId), { caching: ['beta'], standby: [], refused: ['gamma'] });

      s.send(events(2, [event('beta', EventType.ADDED, configMap('b2', 6))]));
      await s.waitForAck(2);
      assert.deepEqual(await objectNames('beta'), ['b1', 'b2']);

      // Removed and re-added in one change (a changed configuration): served again.
      s.send(changed(9, ['alpha'], [info('alpha')]));
      // alpha was already removed: removing it again is a no-op, adding it is allowed.
      const v3 = await verdictsOf(s);
      assert.deepEqual(
        v3.accounts.map((a) => [a.account, a.verdict]),
        [['alpha', Verdict.CACHING]],
      );
      assert.deepEqual(await account('alpha'), { state: 'ACTIVE', session_id: w.sessionId });

      // Once the agent removed an account, nothing of it may follow (the agent drops what it had not sent yet).
      s.send(changed(10, ['alpha'], []));
      await verdictsOf(s);
      s.send(events(3, [event('beta', EventType.ADDED, configMap('b3', 7)), event('alpha', EventType.ADDED, configMap('a2', 7))]));
      const err = await s.ended;
      assert.equal(err?.code, Code.PermissionDenied);
      assert.match(
        err!.rawMessage,
        /account "alpha" is not cached by this stream \(the agent has not announced it on this stream, or removed it\)/,
      );
      assert.deepEqual(await objectNames('alpha'), ['a1']);
      assert.deepEqual(await objectNames('beta'), ['b1', 'b2'], 'nothing of the refused batch is written');
    });

    test('operations reach only the accounts the stream serves; a pending one is delivered once its account is added', async () => {
      const s = open();
      await connectAgent(s, 'agent-op', [{ name: 'op-a' }, { name: 'op-b' }]);
      const received: string[] = [];
      const collect = (async () => {
        for (;;) {
          let m;
          try {
            m = await s.next(60_000);
          } catch {
            return;
          }
          if (m.message.case === 'operation') {
            received.push(m.message.value.account);
            const objects = [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }];
            s.send({
              case: 'operationResult',
              value: { id: m.message.value.id, account: m.message.value.account, success: true, statusCode: 200, objects },
            });
          }
        }
      })();
      s.send(changed(1, ['op-b'], []));
      // The change is applied when its verdicts are sent.
      await eventually('the verdicts of change 1', async () =>
        s.received.some((m) => m.message.case === 'verdicts' && m.message.value.changeId === 1n),
      );
      const okA = await ops.submitOperation({ account: 'op-a', spec: patchSpec, wait: true });
      assert.equal(okA.operation!.state, OperationState.SUCCEEDED);
      const failB = await ops.submitOperation({ account: 'op-b', spec: patchSpec, wait: true });
      assert.equal(failB.operation!.state, OperationState.FAILED, 'op-b is no longer served by any stream');
      assert.deepEqual(received, ['op-a']);

      // Submitted while nobody serves op-b; the stream adds it during the wait and gets the operation.
      const waiting = ops.submitOperation({ account: 'op-b', spec: patchSpec, wait: true });
      await eventually(
        'one PENDING operation of op-b',
        async () => (await t.query(`select id from operations where account = 'op-b' and state = 'PENDING'`)).length === 1,
      );
      s.send(changed(2, [], [info('op-b')]));
      const late = await waiting;
      assert.equal(late.operation!.state, OperationState.SUCCEEDED);
      assert.deepEqual(received, ['op-a', 'op-b']);
      s.end();
      await s.ended;
      await collect;
    });

    const bad: [string, (s: TestAgentStream) => void, RegExp][] = [
      ['an account added twice', (s) => s.send(changed(1, [], [info('bad-x'), info('bad-x')])), /lists account "bad-x" twice/],
      ['an account removed twice', (s) => s.send(changed(1, ['bad-served', 'bad-served'], [])), /removed lists account "bad-served" twice/],
      [
        'an added account already served',
        (s) => s.send(changed(1, [], [info('bad-served'), info('bad-x')])),
        /already served on this stream/,
      ],
      ['an invalid account name', (s) => s.send(changed(1, [], [info('Bad_Name!')])), /account name "Bad_Name!" is invalid/],
      ['an added account without api_host', (s) => s.send(changed(1, [], [{ ...info('bad-x'), apiHost: '' }])), /has no api_host/],
      ['an empty change', (s) => s.send(changed(1, [], [])), /lists no account/],
    ];
    for (const [name, send, message] of bad) {
      test(`${name} → INVALID_ARGUMENT, nothing changed`, async () => {
        const s = open();
        const w = await connectAgent(s, 'agent-bad', [{ name: 'bad-served' }]);
        const before = await session(w.sessionId);
        send(s);
        const err = await s.ended;
        assert.equal(err?.code, Code.InvalidArgument);
        assert.match(err!.rawMessage, message);
        assert.deepEqual(await session(w.sessionId), before);
        assert.equal(await account('bad-x'), undefined, 'no account row for a refused change');
      });
    }
  });
}
