/**
 * Deployment status as Clouddriver's status model reads it: Progressing/Available conditions, the progress deadline
 * (ProgressDeadlineExceeded with a short spec.progressDeadlineSeconds), spec.paused (DeploymentPaused, nothing new
 * rolled), and ScalingReplicaSet Events. Waits only bound a hang; nothing asserts on how long a step took.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch, useSandbox } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'progress';
let sb: Sandbox;

useSandbox(NS, {}, (started) => (sb = started));

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface DeployStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  conditions?: Condition[];
}

function deployment(name: string, spec: Record<string, unknown> = {}, annotations: Record<string, string> = {}): KubeObject {
  return sb.store.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name }, annotations }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
      ...spec,
    },
  });
}

const get = (name: string) => sb.store.get('apps/v1', 'Deployment', NS, name)!;
const status = (name: string) => (get(name).status ?? {}) as DeployStatus;
const cond = (name: string, type: string) => status(name).conditions?.find((c) => c.type === type);

async function patch(name: string, body: unknown): Promise<void> {
  const res = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`, {
    body,
    contentType: 'application/strategic-merge-patch+json',
  });
  assert.equal(res.status, 200, res.text);
}

describe('deployment progress', () => {
  test('a healthy rollout: Available True, Progressing True NewReplicaSetAvailable, counts complete', async () => {
    deployment('fine');
    await eventually('complete', () => cond('fine', 'Progressing')?.reason === 'NewReplicaSetAvailable', { timeoutMs: 30_000 });
    const st = status('fine');
    assert.equal(st.observedGeneration, get('fine').metadata.generation);
    assert.deepEqual([st.replicas, st.updatedReplicas, st.readyReplicas, st.availableReplicas], [2, 2, 2, 2]);
    const available = cond('fine', 'Available')!;
    assert.deepEqual([available.status, available.reason], ['True', 'MinimumReplicasAvailable']);
    const rs = sb.store.list('apps/v1', 'ReplicaSet', NS).find((r) => r.metadata.ownerReferences?.[0]?.name === 'fine')!;
    assert.equal(cond('fine', 'Progressing')!.message, `ReplicaSet "${rs.metadata.name}" has successfully progressed.`);
    const scaling = sb.store
      .list('v1', 'Event', NS)
      .find((e) => e.reason === 'ScalingReplicaSet' && (e.involvedObject as { name: string }).name === 'fine');
    assert.equal(scaling?.message, `Scaled up replica set ${rs.metadata.name} to 2`);
    assert.equal((scaling?.source as { component?: string } | undefined)?.component, 'deployment-controller');
  });

  test('pods that never become ready: ProgressDeadlineExceeded after progressDeadlineSeconds', async () => {
    deployment('late', { progressDeadlineSeconds: 1 }, { 'sandbox.outpost.dev/never-ready': 'true' });
    const rs = await eventually(
      'replica set',
      () => sb.store.list('apps/v1', 'ReplicaSet', NS).find((r) => r.metadata.ownerReferences?.[0]?.name === 'late'),
      { timeoutMs: 30_000 },
    );
    const progressing = await eventually(
      'deadline exceeded',
      () => {
        const c = cond('late', 'Progressing');
        return c?.reason === 'ProgressDeadlineExceeded' ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(progressing.status, 'False');
    assert.equal(progressing.message, `ReplicaSet "${rs.metadata.name}" has timed out progressing.`);
    const st = status('late');
    assert.equal(st.updatedReplicas, 2);
    assert.equal(st.availableReplicas ?? 0, 0);
    assert.equal(st.readyReplicas ?? 0, 0);
    assert.equal(cond('late', 'Available')!.status, 'False');
    assert.equal(cond('late', 'Available')!.reason, 'MinimumReplicasUnavailable');
  });

  test('slow but in time: ReplicaSetUpdated while waiting, then complete', async () => {
    const watch = await openWatch(sb, `/apis/apps/v1/namespaces/${NS}/deployments?watch=true&fieldSelector=metadata.name%3Dslowish`);
    try {
      deployment('slowish', { progressDeadlineSeconds: 600 }, { 'sandbox.outpost.dev/ready-after-ms': '300' });
      await eventually('complete', () => cond('slowish', 'Progressing')?.reason === 'NewReplicaSetAvailable', { timeoutMs: 30_000 });
      assert.equal(cond('slowish', 'Progressing')!.status, 'True');
      const progressing = (e: { object: KubeObject }) =>
        ((e.object.status ?? {}) as DeployStatus).conditions?.find((c) => c.type === 'Progressing');
      await watch.waitFor((events) => events.some((e) => progressing(e)?.reason === 'NewReplicaSetAvailable'), 20000);
      const waiting = watch.events.map(progressing).find((c) => c?.reason === 'ReplicaSetUpdated');
      assert.equal(waiting?.status, 'True');
      assert.match(waiting!.message, /^ReplicaSet "slowish-[a-z0-9]+" is progressing\.$/);
    } finally {
      watch.close();
    }
  });

  test('paused: Progressing Unknown DeploymentPaused, no new ReplicaSet until resumed', async () => {
    deployment('held');
    await eventually('complete', () => cond('held', 'Progressing')?.reason === 'NewReplicaSetAvailable', { timeoutMs: 30_000 });
    await patch('held', { spec: { paused: true } });
    await eventually('paused condition', () => cond('held', 'Progressing')?.reason === 'DeploymentPaused', { timeoutMs: 30_000 });
    assert.equal(cond('held', 'Progressing')!.status, 'Unknown');
    await patch('held', { spec: { template: { spec: { containers: [{ name: 'c', image: 'img:2' }] } } } });
    await eventually('generation observed', () => status('held').observedGeneration === get('held').metadata.generation, {
      timeoutMs: 30_000,
    });
    const owned = () => sb.store.list('apps/v1', 'ReplicaSet', NS).filter((r) => r.metadata.ownerReferences?.[0]?.name === 'held');
    assert.equal(owned().length, 1);
    await patch('held', { spec: { paused: false } });
    await eventually(
      'rolled after resume',
      () => owned().length === 2 && cond('held', 'Progressing')?.reason === 'NewReplicaSetAvailable',
      { timeoutMs: 30_000 },
    );
  });

  test('a fixed template after a timeout makes progress again', async () => {
    deployment('fixed', { progressDeadlineSeconds: 1 }, { 'sandbox.outpost.dev/never-ready': 'true' });
    await eventually('deadline exceeded', () => cond('fixed', 'Progressing')?.reason === 'ProgressDeadlineExceeded', { timeoutMs: 30_000 });
    await patch('fixed', { spec: { template: { metadata: { annotations: { 'sandbox.outpost.dev/never-ready': 'false' } } } } });
    await eventually('complete', () => cond('fixed', 'Progressing')?.reason === 'NewReplicaSetAvailable', { timeoutMs: 30_000 });
    assert.equal(cond('fixed', 'Available')!.status, 'True');
  });
});
