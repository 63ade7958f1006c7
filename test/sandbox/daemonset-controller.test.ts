/**
 * The DaemonSet controller on the sandbox's single node: one pod, the status fields Clouddriver reads, and template
 * changes under RollingUpdate (pod replaced) and OnDelete (pod kept). Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, useSandbox } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'ds';
let sb: Sandbox;

useSandbox(NS, {}, (started) => (sb = started));

interface DsStatus {
  observedGeneration?: number;
  desiredNumberScheduled?: number;
  currentNumberScheduled?: number;
  updatedNumberScheduled?: number;
  numberAvailable?: number;
  numberReady?: number;
}

function ds(name: string, updateStrategy?: Record<string, unknown>): KubeObject {
  return sb.store.create({
    apiVersion: 'apps/v1',
    kind: 'DaemonSet',
    metadata: { name, namespace: NS },
    spec: {
      selector: { matchLabels: { app: name } },
      ...(updateStrategy ? { updateStrategy } : {}),
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'agent:1' }] } },
    },
  });
}

const get = (name: string) => sb.store.get('apps/v1', 'DaemonSet', NS, name)!;
const dsStatus = (name: string) => (get(name).status ?? {}) as DsStatus;
const podsOf = (name: string) => sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === name);
const image = (p: KubeObject) => (p.spec as { containers: { image: string }[] }).containers[0]!.image;

async function settled(name: string): Promise<DsStatus> {
  return eventually(
    `${name} settled`,
    () => {
      const st = dsStatus(name);
      const ok =
        st.observedGeneration === get(name).metadata.generation &&
        st.numberReady === 1 &&
        st.updatedNumberScheduled === 1 &&
        podsOf(name).length === 1;
      return ok ? st : undefined;
    },
    { timeoutMs: 30_000 },
  );
}

async function patchImage(name: string, img: string): Promise<void> {
  const body = { spec: { template: { spec: { containers: [{ name: 'c', image: img }] } } } };
  const res = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/daemonsets/${name}`, {
    body,
    contentType: 'application/strategic-merge-patch+json',
  });
  assert.equal(res.status, 200, res.text);
}

describe('daemonset controller', () => {
  test('one pod on sandbox-node and a complete status', async () => {
    ds('agent');
    const st = await settled('agent');
    assert.deepEqual(
      [st.desiredNumberScheduled, st.currentNumberScheduled, st.updatedNumberScheduled, st.numberAvailable, st.numberReady],
      [1, 1, 1, 1, 1],
    );
    const pod = podsOf('agent')[0]!;
    assert.equal((pod.spec as { nodeName?: string }).nodeName, 'sandbox-node');
    assert.equal(pod.metadata.ownerReferences?.[0]?.kind, 'DaemonSet');
    assert.ok(pod.metadata.labels?.['controller-revision-hash']);
  });

  test('RollingUpdate: a template change replaces the pod', async () => {
    ds('rolling');
    await settled('rolling');
    const oldPod = podsOf('rolling')[0]!;
    await patchImage('rolling', 'agent:2');
    await eventually(
      'pod replaced',
      () => {
        const pods = podsOf('rolling');
        return pods.length === 1 && pods[0]!.metadata.uid !== oldPod.metadata.uid && image(pods[0]!) === 'agent:2';
      },
      { timeoutMs: 30_000 },
    );
    await settled('rolling');
  });

  test('OnDelete: a template change keeps the old pod, counted as not updated', async () => {
    ds('manual', { type: 'OnDelete' });
    await settled('manual');
    const oldPod = podsOf('manual')[0]!;
    await patchImage('manual', 'agent:2');
    const st = await eventually(
      'new generation observed',
      () => {
        const s = dsStatus('manual');
        return s.observedGeneration === get('manual').metadata.generation ? s : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(st.updatedNumberScheduled ?? 0, 0);
    assert.equal(st.numberReady, 1);
    assert.equal(podsOf('manual')[0]!.metadata.uid, oldPod.metadata.uid);
    sb.store.remove('v1', 'Pod', NS, oldPod.metadata.name!);
    await eventually('recreated from the new template', () => podsOf('manual').some((p) => image(p) === 'agent:2'), { timeoutMs: 30_000 });
  });
});
