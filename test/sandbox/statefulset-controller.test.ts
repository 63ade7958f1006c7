/**
 * The StatefulSet controller: ordered pods with stable names and revision labels, status fields Clouddriver reads,
 * scaling by the highest ordinals, rolling updates with a partition, OnDelete, and ControllerRevisions.
 * Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, useSandbox } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'sts';
let sb: Sandbox;

useSandbox(NS, {}, (started) => (sb = started));

interface StsStatus {
  observedGeneration?: number;
  replicas?: number;
  readyReplicas?: number;
  currentReplicas?: number;
  updatedReplicas?: number;
  currentRevision?: string;
  updateRevision?: string;
}

function sts(name: string, replicas: number, updateStrategy?: Record<string, unknown>): KubeObject {
  return sb.store.create({
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: { name, namespace: NS },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      ...(updateStrategy ? { updateStrategy } : {}),
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'img:1' }] } },
    },
  });
}

const get = (name: string) => sb.store.get('apps/v1', 'StatefulSet', NS, name)!;
const stsStatus = (name: string) => (get(name).status ?? {}) as StsStatus;
const podsOf = (name: string) => sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === name);
const revisionOf = (p: KubeObject) => p.metadata.labels?.['controller-revision-hash'];

/** Waits until the set is reconciled, has `n` pods and all are ready at the update revision (when `rolled`). */
async function settled(name: string, n: number, rolled = true): Promise<StsStatus> {
  return eventually(
    `${name} settled at ${n}`,
    () => {
      const st = stsStatus(name);
      const ok =
        st.observedGeneration === get(name).metadata.generation &&
        st.replicas === n &&
        (st.readyReplicas ?? 0) === n &&
        podsOf(name).length === n;
      return ok && (!rolled || st.currentRevision === st.updateRevision) ? st : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

async function patchTemplate(name: string, image: string, extra: Record<string, unknown> = {}): Promise<void> {
  const body = { spec: { ...extra, template: { spec: { containers: [{ name: 'c', image }] } } } };
  const res = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/statefulsets/${name}`, {
    body,
    contentType: 'application/strategic-merge-patch+json',
  });
  assert.equal(res.status, 200, res.text);
}

describe('statefulset controller', () => {
  test('creates ordinal pods with owner, labels, hostname and a status true to them', async () => {
    sts('web', 3);
    const st = await settled('web', 3);
    const pods = podsOf('web').sort((a, b) => a.metadata.name!.localeCompare(b.metadata.name!));
    assert.deepEqual(
      pods.map((p) => p.metadata.name),
      ['web-0', 'web-1', 'web-2'],
    );
    for (const [i, p] of pods.entries()) {
      assert.equal(p.metadata.ownerReferences?.[0]?.kind, 'StatefulSet');
      assert.equal(revisionOf(p), st.updateRevision);
      assert.equal(p.metadata.labels?.['statefulset.kubernetes.io/pod-name'], `web-${i}`);
      assert.equal((p.spec as { hostname?: string }).hostname, `web-${i}`);
      assert.equal((p.spec as { subdomain?: string }).subdomain, 'web');
    }
    assert.equal(st.currentReplicas, 3);
    assert.equal(st.updatedReplicas, 3);
    assert.match(st.updateRevision!, /^web-[a-z0-9]+$/);
    const creates = sb.store
      .list('v1', 'Event', NS)
      .filter((e) => e.reason === 'SuccessfulCreate' && (e.involvedObject as { name: string }).name === 'web');
    assert.equal(creates.length, 3);
  });

  test('OrderedReady: a never-ready pod-0 holds back pod-1', async () => {
    sb.store.create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'held', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'held' } },
        template: {
          metadata: { labels: { app: 'held' }, annotations: { 'sandbox.outpost.dev/never-ready': 'true' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    await eventually('pod-0 running', () => podsOf('held').some((p) => (p.status as { phase?: string }).phase === 'Running'), {
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(
      podsOf('held').map((p) => p.metadata.name),
      ['held-0'],
    );
    const st = stsStatus('held');
    assert.equal(st.replicas, 1);
    assert.equal(st.readyReplicas ?? 0, 0);
  });

  test('scale removes the highest ordinals and adds them back', async () => {
    sts('scaled', 3);
    await settled('scaled', 3);
    const res = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/statefulsets/scaled/scale`, {
      body: { spec: { replicas: 1 } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(res.status, 200, res.text);
    await settled('scaled', 1);
    assert.deepEqual(
      podsOf('scaled').map((p) => p.metadata.name),
      ['scaled-0'],
    );
    await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/statefulsets/scaled/scale`, {
      body: { spec: { replicas: 2 } },
      contentType: 'application/merge-patch+json',
    });
    await settled('scaled', 2);
    assert.deepEqual(
      podsOf('scaled')
        .map((p) => p.metadata.name)
        .sort(),
      ['scaled-0', 'scaled-1'],
    );
  });

  test('a template change rolls every pod to the new revision; currentRevision follows at the end', async () => {
    sts('roll', 3);
    const before = await settled('roll', 3);
    await patchTemplate('roll', 'img:2');
    const after = await settled('roll', 3);
    assert.notEqual(after.updateRevision, before.updateRevision);
    assert.equal(after.currentRevision, after.updateRevision);
    assert.equal(after.updatedReplicas, 3);
    assert.ok(
      podsOf('roll').every(
        (p) => revisionOf(p) === after.updateRevision && (p.spec as { containers: { image: string }[] }).containers[0]!.image === 'img:2',
      ),
    );
    const revisions = sb.store.list('apps/v1', 'ControllerRevision', NS).filter((cr) => cr.metadata.ownerReferences?.[0]?.name === 'roll');
    assert.deepEqual(
      revisions.map((cr) => [cr.metadata.name, cr.revision]).sort(),
      [
        [before.updateRevision, 1],
        [after.updateRevision, 2],
      ].sort(),
    );
  });

  test('RollingUpdate partition 2: only ordinals ≥ 2 get the new revision', async () => {
    sts('part', 3, { type: 'RollingUpdate', rollingUpdate: { partition: 2 } });
    const before = await settled('part', 3);
    await patchTemplate('part', 'img:2');
    const st = await eventually(
      'partitioned rollout',
      () => {
        const s = stsStatus('part');
        return s.updateRevision !== before.updateRevision && s.updatedReplicas === 1 && s.readyReplicas === 3 ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const byName = Object.fromEntries(podsOf('part').map((p) => [p.metadata.name, revisionOf(p)]));
    assert.deepEqual(byName, { 'part-0': before.updateRevision, 'part-1': before.updateRevision, 'part-2': st.updateRevision });
    assert.equal(st.currentRevision, before.updateRevision);
    assert.equal(st.currentReplicas, 2);
  });

  test('OnDelete replaces nothing until a pod is deleted', async () => {
    sts('manual', 2, { type: 'OnDelete' });
    const before = await settled('manual', 2);
    await patchTemplate('manual', 'img:2');
    const st = await eventually(
      'new revision observed',
      () => {
        const s = stsStatus('manual');
        return s.updateRevision !== before.updateRevision && s.observedGeneration === get('manual').metadata.generation ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(podsOf('manual').every((p) => revisionOf(p) === before.updateRevision));
    assert.equal(st.updatedReplicas ?? 0, 0);
    sb.store.remove('v1', 'Pod', NS, 'manual-1');
    await eventually(
      'recreated at new revision',
      () => podsOf('manual').some((p) => p.metadata.name === 'manual-1' && revisionOf(p) === st.updateRevision),
      { timeoutMs: 30_000 },
    );
  });
});
