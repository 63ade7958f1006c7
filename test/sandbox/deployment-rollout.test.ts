/**
 * Deployment rollouts paced as Kubernetes paces them: a RollingUpdate passes through states with ready pods in both
 * ReplicaSets and, on every watch event, keeps the pods within spec.replicas + maxSurge and the ready ones at least
 * spec.replicas − maxUnavailable (defaults, maxSurge 0, percentages rounded up for maxSurge and down for
 * maxUnavailable); Recreate lets no new pod exist while an old one does; a scale in the middle of a rollout
 * converges; minReadySeconds holds availability back. The pace comes from `podReadyDelayMs`; every invariant is
 * checked on the recorded sequence of watch events, and waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { call, openWatch, useSandbox } from './api-client.js';
import { countPods, type PodSnapshot, type RolloutTrace, settledOn, traceRollout } from './rollout-trace.js';

const NS = 'rollout';
let sb: Sandbox;

useSandbox(NS, { podReadyDelayMs: 150 }, (started) => (sb = started));

interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  availableReplicas?: number;
  conditions?: { type: string; reason: string }[];
}

function createDeployment(name: string, replicas: number, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): void {
  sb.store.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'img:1' }] } },
      ...spec,
    },
  });
}

async function patchDeployment(name: string, body: unknown): Promise<void> {
  const res = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/${name}`, {
    body,
    contentType: 'application/strategic-merge-patch+json',
  });
  assert.equal(res.status, 200, res.text);
}

const setImage = (name: string, image: string, annotations: Record<string, string> = {}) =>
  patchDeployment(name, { spec: { template: { metadata: { annotations }, spec: { containers: [{ name: 'web', image }] } } } });

const ownedReplicaSets = (name: string) =>
  sb.store.list('apps/v1', 'ReplicaSet', NS).filter((rs) => rs.metadata.ownerReferences?.[0]?.name === name);

/** The pod-template-hash of the ReplicaSet running `image`. */
async function hashOf(name: string, image: string): Promise<string> {
  return eventually(`${name}'s ReplicaSet for ${image}`, () => {
    const rs = ownedReplicaSets(name).find(
      (r) => (r.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image === image,
    );
    return rs?.metadata.labels?.['pod-template-hash'];
  });
}

/** Waits until the Deployment reports its rollout complete for its current generation. */
async function rolledOut(name: string): Promise<void> {
  await eventually(`${name} rolled out`, () => {
    const d = sb.store.get('apps/v1', 'Deployment', NS, name)!;
    const st = (d.status ?? {}) as DeploymentStatus;
    const desired = (d.spec as { replicas: number }).replicas;
    return (
      st.observedGeneration === d.metadata.generation &&
      st.conditions?.some((c) => c.type === 'Progressing' && c.reason === 'NewReplicaSetAvailable') &&
      st.replicas === desired &&
      st.updatedReplicas === desired &&
      (st.availableReplicas ?? 0) === desired
    );
  });
}

/** A Deployment of `replicas` pods of img:1, rolled out, with a trace started on it. */
async function readyDeployment(name: string, replicas: number, spec: Record<string, unknown> = {}): Promise<RolloutTrace> {
  createDeployment(name, replicas, spec);
  await rolledOut(name);
  return traceRollout(sb, NS, name);
}

/** Containers report started while a running pod is not ready, and ready once it is. */
function assertContainersTruthful(snapshot: PodSnapshot): void {
  for (const pod of snapshot.values()) {
    if (pod.phase !== 'Running') continue;
    assert.ok(pod.containers.length > 0, `${pod.name} has container statuses`);
    for (const c of pod.containers) assert.deepEqual(c, { started: true, ready: pod.ready }, `${pod.name}: ${JSON.stringify(c)}`);
  }
}

/** Rolls `name` to img:2 and checks the fenceposts on every recorded state; returns the pod snapshots. */
async function rollWithin(name: string, replicas: number, maxSurge: number, maxUnavailable: number, trace: RolloutTrace) {
  try {
    await setImage(name, 'img:2');
    const hash = await hashOf(name, 'img:2');
    await trace.waitForPods('every pod new and ready', (pods) => settledOn(pods, hash, replicas));
    await rolledOut(name);
    const snapshots = trace.podSnapshots();
    let minReady = Number.POSITIVE_INFINITY;
    let bothReady = false;
    for (const [i, snapshot] of snapshots.entries()) {
      const { total, ready, byHash } = countPods(snapshot);
      assert.ok(total <= replicas + maxSurge, `state ${i}: ${total} pods > ${replicas} + ${maxSurge}`);
      assert.ok(ready >= replicas - maxUnavailable, `state ${i}: ${ready} ready < ${replicas} − ${maxUnavailable}`);
      assertContainersTruthful(snapshot);
      minReady = Math.min(minReady, ready);
      bothReady ||= [...byHash.values()].filter((h) => h.ready > 0).length === 2;
    }
    assert.ok(bothReady, 'some state has ready pods in both ReplicaSets');
    // the fenceposts are used to the full: as many pods asked for as maxSurge allows, as few ready as maxUnavailable allows
    const specTotals = trace.replicaSetSnapshots().map((s) => [...s.values()].reduce((a, b) => a + b, 0));
    assert.equal(Math.max(...specTotals), replicas + maxSurge, `the ReplicaSets' spec.replicas totals: ${specTotals}`);
    assert.equal(minReady, replicas - maxUnavailable);
    return snapshots;
  } finally {
    trace.close();
  }
}

const scalingMessages = (name: string) =>
  sb.store
    .list('v1', 'Event', NS)
    .filter((e) => e.reason === 'ScalingReplicaSet' && (e.involvedObject as KubeObject['metadata']).name === name)
    .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
    .map((e) => String(e.message));

describe('deployment rollouts', () => {
  test('RollingUpdate with the default 25%/25%: both versions ready at once, within the fenceposts on every event', async () => {
    const trace = await readyDeployment('roll', 4);
    await rollWithin('roll', 4, 1, 1, trace);
    const [oldRs, newRs] = ['img:1', 'img:2'].map((image) =>
      ownedReplicaSets('roll').find((r) => JSON.stringify(r.spec).includes(`"${image}"`)),
    );
    const messages = scalingMessages('roll');
    const ups = messages.filter((m) => m.startsWith(`Scaled up replica set ${newRs!.metadata.name} to `));
    const downs = messages.filter((m) => m.startsWith(`Scaled down replica set ${oldRs!.metadata.name} to `));
    assert.ok(ups.length > 1, `the new ReplicaSet grows step by step: ${messages.join('; ')}`);
    assert.ok(downs.length > 1, `the old ReplicaSet shrinks step by step: ${messages.join('; ')}`);
    assert.equal(ups.at(-1), `Scaled up replica set ${newRs!.metadata.name} to 4`);
    assert.equal(downs.at(-1), `Scaled down replica set ${oldRs!.metadata.name} to 0`);
  });

  test('maxSurge 0, maxUnavailable 1: never a pod more than spec.replicas', async () => {
    const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };
    const trace = await readyDeployment('nosurge', 4, { strategy });
    await rollWithin('nosurge', 4, 0, 1, trace);
  });

  test('percentages: maxSurge rounds up, maxUnavailable rounds down', async () => {
    // 30% of 5 = 1.5: maxSurge 2, maxUnavailable 1
    const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '30%', maxUnavailable: '30%' } };
    const trace = await readyDeployment('percent', 5, { strategy });
    await rollWithin('percent', 5, 2, 1, trace);
  });

  test('percentages that both round to 0: maxUnavailable becomes 1', async () => {
    const strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0, maxUnavailable: '10%' } };
    const trace = await readyDeployment('zero', 3, { strategy });
    await rollWithin('zero', 3, 0, 1, trace);
  });

  test('Recreate: every old pod is gone before the first new one exists', async () => {
    const trace = await readyDeployment('recreate', 3, { strategy: { type: 'Recreate' } });
    try {
      const oldHash = await hashOf('recreate', 'img:1');
      await setImage('recreate', 'img:2');
      const newHash = await hashOf('recreate', 'img:2');
      await trace.waitForPods('every pod new and ready', (pods) => settledOn(pods, newHash, 3));
      const snapshots = trace.podSnapshots();
      for (const [i, snapshot] of snapshots.entries()) {
        const { byHash } = countPods(snapshot);
        assert.ok(!(byHash.has(oldHash) && byHash.has(newHash)), `state ${i}: old and new pods together`);
        assertContainersTruthful(snapshot);
      }
      assert.ok(
        snapshots.some((s) => s.size === 0),
        'a state without pods',
      );
      await rolledOut('recreate');
      const messages = scalingMessages('recreate');
      const newRs = ownedReplicaSets('recreate').find((r) => r.metadata.labels?.['pod-template-hash'] === newHash)!;
      const oldRs = ownedReplicaSets('recreate').find((r) => r.metadata.labels?.['pod-template-hash'] === oldHash)!;
      assert.deepEqual(messages.slice(-2), [
        `Scaled down replica set ${oldRs.metadata.name} to 0`,
        `Scaled up replica set ${newRs.metadata.name} to 3`,
      ]);
    } finally {
      trace.close();
    }
  });

  test('scaling up in the middle of a rollout converges within the new fenceposts', async () => {
    const trace = await readyDeployment('grow', 4);
    try {
      // slow new pods, so the scale surely lands while both ReplicaSets hold pods
      await setImage('grow', 'img:2', { 'sandbox.outpost.dev/ready-after-ms': '1500' });
      const newHash = await hashOf('grow', 'img:2');
      await trace.waitForPods('a new pod', (pods) => (countPods(pods).byHash.get(newHash)?.pods ?? 0) > 0);
      await patchDeployment('grow', { spec: { replicas: 8 } });
      const oldLeft = ownedReplicaSets('grow').filter((rs) => rs.metadata.labels?.['pod-template-hash'] !== newHash);
      assert.ok(
        oldLeft.some((rs) => (rs.spec as { replicas: number }).replicas > 0),
        'the old ReplicaSet still had pods when the scale landed',
      );
      await trace.waitForPods('eight new pods ready', (pods) => settledOn(pods, newHash, 8));
      await rolledOut('grow');
      for (const [i, snapshot] of trace.podSnapshots().entries()) {
        assert.ok(snapshot.size <= 8 + 2, `state ${i}: ${snapshot.size} pods > 8 + 2`);
        assert.ok(countPods(snapshot).ready >= 3, `state ${i}: fewer than 4 − 1 ready`);
      }
      for (const rs of oldLeft)
        assert.equal((sb.store.get('apps/v1', 'ReplicaSet', NS, rs.metadata.name!)!.spec as { replicas: number }).replicas, 0);
    } finally {
      trace.close();
    }
  });

  test('scaling down in the middle of a rollout converges', async () => {
    const trace = await readyDeployment('shrink', 4);
    try {
      await setImage('shrink', 'img:2', { 'sandbox.outpost.dev/ready-after-ms': '1500' });
      const newHash = await hashOf('shrink', 'img:2');
      await trace.waitForPods('a new pod', (pods) => (countPods(pods).byHash.get(newHash)?.pods ?? 0) > 0);
      await patchDeployment('shrink', { spec: { replicas: 2 } });
      await trace.waitForPods('two new pods ready', (pods) => settledOn(pods, newHash, 2));
      await rolledOut('shrink');
      for (const [i, snapshot] of trace.podSnapshots().entries()) {
        assert.ok(snapshot.size <= 4 + 1, `state ${i}: ${snapshot.size} pods > 4 + 1`);
      }
    } finally {
      trace.close();
    }
  });

  test('a plain scale changes only the current ReplicaSet', async () => {
    const trace = await readyDeployment('plain', 2);
    trace.close();
    await setImage('plain', 'img:2');
    await rolledOut('plain');
    const before = scalingMessages('plain').length;
    await patchDeployment('plain', { spec: { replicas: 5 } });
    await rolledOut('plain');
    const newRs = ownedReplicaSets('plain').find((r) => JSON.stringify(r.spec).includes('"img:2"'))!;
    assert.deepEqual(scalingMessages('plain').slice(before), [`Scaled up replica set ${newRs.metadata.name} to 5`]);
  });

  test('minReadySeconds: a ready pod counts as available only after it, in the ReplicaSet and the Deployment', async () => {
    const path = (kind: string) => `${kind}?watch=true&labelSelector=${encodeURIComponent('app=steady')}`;
    const replicaSets = await openWatch(sb, path(`/apis/apps/v1/namespaces/${NS}/replicasets`));
    const deployments = await openWatch(sb, path(`/apis/apps/v1/namespaces/${NS}/deployments`));
    try {
      createDeployment('steady', 2, { minReadySeconds: 2 }, { app: 'steady' });
      const counts = (e: { object: KubeObject }) => {
        const st = (e.object.status ?? {}) as { readyReplicas?: number; availableReplicas?: number };
        return [st.readyReplicas ?? 0, st.availableReplicas ?? 0];
      };
      for (const watch of [replicaSets, deployments]) {
        await watch.waitFor((events) => events.some((e) => counts(e)[1] === 2), 60_000);
        const seen = watch.events.map(counts);
        const firstAvailable = seen.findIndex(([, available]) => available === 2);
        assert.ok(
          seen.slice(0, firstAvailable).some(([ready, available]) => ready === 2 && available === 0),
          `ready before available: ${JSON.stringify(seen)}`,
        );
      }
      const rs = ownedReplicaSets('steady')[0]!;
      assert.equal((rs.spec as { minReadySeconds?: number }).minReadySeconds, 2);
      await rolledOut('steady');
    } finally {
      replicaSets.close();
      deployments.close();
    }
  });
});
