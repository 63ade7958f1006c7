/**
 * Page section 7 (operations and results) from the agent's side: the gateway checks every result against the
 * per-type table and records one that breaks it FAILED with reason `InvalidResult` (counted per type) — a scale
 * answered with the Deployment instead of its Scale first, by the mini agent against a real cluster, then every other
 * shape rule with a scripted stream; results for unknown ids or operations that already ended are ignored and counted,
 * and the stream goes on. Operations are submitted through the gateway's OperationService.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { JsonObject } from '@bufbuild/protobuf';
import type { Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationState, type OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { helloAndWelcome, openAgentStream, type AgentStream } from './agent-stream.js';
import { helloFor, operationClient, startScenarioCluster, type ScenarioCluster, type TestGateway } from './harness.js';
import { createMiniAgent, type MiniAgent } from './mini-agent.js';
import { startH2Recorder } from './h2-recorder.js';
import type { ResultInit } from './mini-operations.js';
import { added, batch, cm } from './scripted.js';
import { eventually } from '../../testkit/eventually.js';

type Spec = Operation['spec'];

for (const driver of testDrivers()) {
  describe(`operation results (section 7) (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let cluster: ScenarioCluster;
    let mini: MiniAgent;
    const open: AgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 20 },
        operations: { agentWaitSeconds: 5, sweepIntervalMs: 100 },
      });
      cluster = await startScenarioCluster(5);
    });
    after(async () => {
      for (const s of open) s.abort();
      await mini?.close();
      await t?.close();
      await cluster?.close();
    });
    const client = () => operationClient(t.gateway.grpcUrl);
    /** The terminal record of an operation. */
    const finished = async (id: string): Promise<OperationRecord> => {
      let op: OperationRecord | undefined;
      await eventually(`operation ${id} ends`, async () => {
        op = (await client().getOperation({ id })).operation;
        return !!op && op.state !== OperationState.PENDING && op.state !== OperationState.SENT;
      });
      return op!;
    };
    /** A metric's value summed over the series whose labels contain `labels`. */
    const metric = async (name: string, labels = ''): Promise<number> => {
      const text = await (await fetch(`${t.gateway.httpUrl}/metrics`)).text();
      return text
        .split('\n')
        .filter((l) => l.startsWith(name) && l.includes(labels))
        .reduce((sum, l) => sum + Number(l.split(' ').at(-1)), 0);
    };

    test('a scale answered with the Deployment instead of its Scale is recorded FAILED with reason InvalidResult, and counted', async () => {
      mini = createMiniAgent({
        grpcUrl: t.gateway.grpcUrl,
        agentId: 'mini-invalid',
        accounts: [{ name: 'conf-invalid', kube: cluster.kube, kinds: [{ apiVersion: 'v1', kind: 'ConfigMap' }] }],
        answer: async (op, run) => {
          const result = await run();
          if (op.spec.case !== 'scale' || !result.success) return result;
          const k = await cluster.kube.resolve(op.spec.value.apiVersion, op.spec.value.kind);
          const deployment = await cluster.kube.request('GET', cluster.kube.objectPath(k, op.spec.value.namespace, op.spec.value.name));
          return { ...result, objects: [deployment.body as JsonObject] };
        },
      });
      await mini.start();
      const before = await metric('outpost_gateway_operation_results_invalid_total', 'type="scale"');
      const { operation } = await client().submitOperation({
        account: 'conf-invalid',
        spec: { case: 'scale', value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'conf', name: 'web', replicas: 2 } },
        wait: true,
      });
      assert.equal(operation!.state, OperationState.FAILED);
      assert.equal(operation!.result?.reason, 'InvalidResult');
      assert.ok((operation!.result?.message ?? '').length > 0, 'it says what was wrong');
      assert.equal(await metric('outpost_gateway_operation_results_invalid_total', 'type="scale"'), before + 1);
      // The operation may have been applied: the agent did scale.
      assert.equal((cluster.sandbox.store.get('apps/v1', 'Deployment', 'conf', 'web')!.spec as any).replicas, 2);
    });

    /** A scripted agent for `account` answering the next operation with `answer(op)`. */
    const scripted = async (account: string) => {
      const s = openAgentStream(t.gateway.grpcUrl);
      open.push(s);
      await helloAndWelcome(s, helloFor(`agent-${account}`, [account]));
      s.keepAlive(`agent-${account}`);
      return s;
    };
    /** Submits, answers as the agent, and returns the terminal record: a read's is its answer (reads are never stored). */
    const submitAndAnswer = async (s: AgentStream, account: string, spec: Spec, answer: (op: Operation) => ResultInit) => {
      const submitted = client().submitOperation({ account, spec: spec as never, timeout: { seconds: 20n } });
      const op = await s.nextOf('operation');
      s.send({ case: 'operationResult', value: answer(op) });
      const { operation } = await submitted;
      assert.equal(op.id, operation!.id);
      return ['get', 'list', 'logs', 'history'].includes(spec.case ?? '') ? operation! : finished(op.id);
    };

    const cmObj = (name: string, ns = 'default'): JsonObject => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: ns },
    });
    const get: Spec = { case: 'get', value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' } } as Spec;
    const list: Spec = { case: 'list', value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', limit: 2 } } as Spec;
    const del: Spec = { case: 'delete', value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm' } } as Spec;
    /** A stored operation whose result is the target object (reads are not stored). */
    const patch: Spec = {
      case: 'patch',
      value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'cm', type: 2, patch: '{"data":{}}' },
    } as Spec;
    const apply: Spec = { case: 'apply', value: { manifests: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n' } } as Spec;
    const history: Spec = {
      case: 'history',
      value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' },
    } as Spec;
    const ok = (op: Operation) => ({ id: op.id, account: op.account, success: true, statusCode: 200 });
    const invalid: [string, Spec, (op: Operation) => ResultInit][] = [
      ['a get with two objects', get, (op) => ({ ...ok(op), objects: [cmObj('cm'), cmObj('cm')] })],
      ['a get with another object than the target', get, (op) => ({ ...ok(op), objects: [cmObj('other')] })],
      ['a get with no object', get, (op) => ok(op)],
      [
        'an object without apiVersion',
        get,
        (op) => ({ ...ok(op), objects: [{ kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' } }] }),
      ],
      ['a get that also carries logs', get, (op) => ({ ...ok(op), objects: [cmObj('cm')], logs: 'unexpected' })],
      ['a result naming another account', get, (op) => ({ ...ok(op), account: 'conf-someone-else', objects: [cmObj('cm')] })],
      ['a failure without reason', get, (op) => ({ id: op.id, success: false, statusCode: 500, message: 'broken' })],
      [
        'a failed get that carries objects',
        get,
        (op) => ({ id: op.id, success: false, statusCode: 404, reason: 'NotFound', objects: [cmObj('cm')] }),
      ],
      ['a delete by name that names another object', del, (op) => ({ ...ok(op), deleted: ['ConfigMap/default/other'] })],
      ['a list with more items than its limit', list, (op) => ({ ...ok(op), objects: [cmObj('a'), cmObj('b'), cmObj('c')] })],
      ['a list item without kind', list, (op) => ({ ...ok(op), objects: [{ apiVersion: 'v1', metadata: { name: 'a' } }] })],
      ['an apply without objects', apply, (op) => ok(op)],
      [
        'a history whose revisions do not increase',
        history,
        (op) => ({
          ...ok(op),
          revisions: [
            { revision: 2n, name: 'web-b' },
            { revision: 1n, name: 'web-a' },
          ],
        }),
      ],
    ];

    test('every other broken shape of the per-type table is recorded FAILED InvalidResult and counted; the stream goes on', async () => {
      const s = await scripted('conf-shapes');
      const before = await metric('outpost_gateway_operation_results_invalid_total');
      for (const [what, spec, answer] of invalid) {
        const op = await submitAndAnswer(s, 'conf-shapes', spec, answer);
        assert.equal(op.state, OperationState.FAILED, `${what}: ${OperationState[op.state]}`);
        assert.equal(op.result?.reason, 'InvalidResult', what);
      }
      assert.equal(await metric('outpost_gateway_operation_results_invalid_total'), before + invalid.length);
      assert.equal(s.finished, false);
      s.end();
      await s.ended;
    });

    test('results shaped per the table are recorded as sent (get, delete, list, a failure)', async () => {
      const s = await scripted('conf-valid');
      const good = await submitAndAnswer(s, 'conf-valid', get, (op) => ({ ...ok(op), objects: [cmObj('cm')] }));
      assert.equal(good.state, OperationState.SUCCEEDED);
      const gone = await submitAndAnswer(s, 'conf-valid', del, (op) => ({ ...ok(op), deleted: ['ConfigMap/default/cm'] }));
      assert.equal(gone.state, OperationState.SUCCEEDED);
      const items = await submitAndAnswer(s, 'conf-valid', list, (op) => ({ ...ok(op), objects: [cmObj('a'), cmObj('b')] }));
      assert.equal(items.state, OperationState.SUCCEEDED);
      const notFound = await submitAndAnswer(s, 'conf-valid', get, (op) => ({
        id: op.id,
        success: false,
        statusCode: 404,
        reason: 'NotFound',
        message: 'not found',
      }));
      assert.equal(notFound.state, OperationState.FAILED);
      assert.equal(notFound.result?.reason, 'NotFound');
      s.end();
      await s.ended;
    });

    test('the gateway removes Secret data, stringData and the last-applied annotation from results before it stores them (section 8)', async () => {
      const s = await scripted('conf-leaky');
      const spec = { case: 'get', value: { apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'creds' } } as Spec;
      const secret: JsonObject = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'creds',
          namespace: 'default',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"p":"hunter2"}}', keep: 'me' },
        },
        type: 'Opaque',
        data: { p: Buffer.from('hunter2').toString('base64') },
        stringData: { p: 'hunter2' },
      };
      const op = await submitAndAnswer(s, 'conf-leaky', spec, (o) => ({ ...ok(o), objects: [secret] }));
      const stored = op.result!.objects[0] as Record<string, any>;
      assert.equal(stored.data, undefined);
      assert.equal(stored.stringData, undefined);
      assert.deepEqual(stored.metadata.annotations, { keep: 'me' });
      // A read is not stored; nothing that is holds the value.
      const dump = await t.query<{ row: string }>(`select t::text as row from operations t`);
      assert.ok(
        dump.every((d) => !d.row.includes('hunter2') && !d.row.includes(Buffer.from('hunter2').toString('base64'))),
        'no value in the database',
      );
      s.end();
      await s.ended;
    });

    test('a result for an unknown id or for an operation that already ended is ignored and counted; the stream goes on', async () => {
      const s = await scripted('conf-ignored');
      const before = await metric('outpost_gateway_operation_results_ignored_total');
      s.send({ case: 'operationResult', value: { id: 'no-such-operation', success: true } });
      const first = await submitAndAnswer(s, 'conf-ignored', patch, (op) => ({ ...ok(op), objects: [cmObj('cm')], message: 'first' }));
      assert.equal(first.state, OperationState.SUCCEEDED);
      s.send({
        case: 'operationResult',
        value: { id: first.id, account: 'conf-ignored', success: false, statusCode: 500, reason: 'InternalError', message: 'second' },
      });
      s.send(batch(1, [added('conf-ignored', cm('still-working', '1'))]));
      await s.waitForAck(1);
      await eventually(
        'both ignored results counted',
        async () => (await metric('outpost_gateway_operation_results_ignored_total')) >= before + 2,
      );
      const again = (await client().getOperation({ id: first.id })).operation!;
      assert.equal(again.state, OperationState.SUCCEEDED);
      assert.equal(again.result?.message, 'first', 'the first result stands');
      s.end();
      await s.ended;
    });

    test('the gateway redelivers an unanswered operation on the resumed session; the agent answers the stored result and never runs it twice', async () => {
      const recorder = await startH2Recorder(t.gateway.grpcUrl);
      let cut = false;
      const agent = createMiniAgent({
        grpcUrl: recorder.url,
        agentId: 'mini-redelivery',
        accounts: [{ name: 'conf-redelivery', kube: cluster.kube, kinds: [] }],
        // The result is ready only once the stream that carried the operation is gone: it waits in the outbox.
        answer: async (_op, run) => {
          const result = await run();
          recorder.cutAll();
          cut = true;
          return result;
        },
      });
      try {
        await agent.start();
        // A stored operation (reads are not stored, so never delivered again): a merge patch of one ConfigMap.
        const spec = {
          case: 'patch' as const,
          value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'cm-0001', type: 2, patch: '{"data":{"again":"yes"}}' },
        };
        const { operation } = await client().submitOperation({ account: 'conf-redelivery', spec, timeout: { seconds: 20n } });
        const id = operation!.id;
        await eventually('the stream was cut before the result went out', () => cut);
        const done = (await client().submitOperation({ account: 'conf-redelivery', id, spec, timeout: { seconds: 20n }, wait: true }))
          .operation!;
        assert.equal(done.state, OperationState.SUCCEEDED, done.error || done.result?.message);
        await eventually(
          'the operation was delivered again on the resumed session',
          () => agent.operations.filter((o) => o.id === id).length >= 2,
        );
        assert.equal(agent.runs.get(id), 1, 'run once');
        const answers = recorder.streams
          .slice(1)
          .flatMap((st) =>
            st.entries.filter(
              (e) => e.dir === 'agent' && e.message.message.case === 'operationResult' && e.message.message.value.id === id,
            ),
          );
        assert.ok(answers.length >= 1, 'answered on the resumed session');
      } finally {
        await agent.close();
        await recorder.close();
      }
    });

    test('an operation the agent never answers ends TIMED_OUT after its timeout', async () => {
      const s = await scripted('conf-timeout');
      const { operation } = await client().submitOperation({ account: 'conf-timeout', spec: patch as never, timeout: { seconds: 1n } });
      await s.nextOf('operation');
      const done = await finished(operation!.id);
      assert.equal(done.state, OperationState.TIMED_OUT);
      s.end();
      await s.ended;
    });
  });
}
