/**
 * A rollout to pods that never become ready stalls as in Kubernetes: the new ReplicaSet grows only as far as maxSurge
 * lets it, the old one keeps spec.replicas − maxUnavailable ready pods, and after progressDeadlineSeconds the real
 * `kubectl rollout status` fails with "exceeded its progress deadline" (while a paced rollout that completes still
 * ends in "successfully rolled out"). kubectl sends its token over TLS only, hence a TLS sandbox. Waits only bound a
 * hang.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type KubeObject, type Sandbox, startSandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';

const NS = 'stall';
const KUBECTL = '/usr/bin/kubectl';
let sb: Sandbox;
let kubectl: Kubectl;

before(async () => {
  sb = await startSandbox({ tls: true, podReadyDelayMs: 100 });
  sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  kubectl = await createKubectl(KUBECTL, sb);
});

after(async () => {
  kubectl?.cleanup();
  await sb?.close();
});

function manifest(name: string, image: string, annotations: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: NS },
    spec: {
      replicas: 4,
      progressDeadlineSeconds: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations },
        spec: {
          containers: [{ name: 'web', image, readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, periodSeconds: 1 } }],
        },
      },
    },
  });
}

const replicaSet = (name: string, image: string) =>
  sb.store
    .list('apps/v1', 'ReplicaSet', NS)
    .find((rs) => rs.metadata.ownerReferences?.[0]?.name === name && JSON.stringify(rs.spec).includes(`"${image}"`));

const counts = (rs: KubeObject | undefined) => {
  const st = (rs?.status ?? {}) as { replicas?: number; readyReplicas?: number };
  return { spec: (rs?.spec as { replicas?: number } | undefined)?.replicas, pods: st.replicas ?? 0, ready: st.readyReplicas ?? 0 };
};

describe('a stalled rollout', () => {
  test('never-ready pods: old pods kept, kubectl rollout status reports the exceeded progress deadline', async () => {
    await kubectl.ok(['apply', '-f', '-'], { input: manifest('stuck', 'nginx:1.25') });
    assert.match(await kubectl.ok(['rollout', 'status', 'deployment/stuck', '-n', NS, '--timeout=60s']), /successfully rolled out/);

    await kubectl.ok(['apply', '-f', '-'], { input: manifest('stuck', 'nginx:1.26', { 'sandbox.outpost.dev/never-ready': 'true' }) });
    // 4 replicas, maxSurge 1, maxUnavailable 1: the new ReplicaSet stops at 2 unready pods, the old one at 3 ready
    await eventually('the stall', () => {
      const [old, neu] = [counts(replicaSet('stuck', 'nginx:1.25')), counts(replicaSet('stuck', 'nginx:1.26'))];
      return old.spec === 3 && old.pods === 3 && old.ready === 3 && neu.spec === 2 && neu.pods === 2 && neu.ready === 0;
    });
    const status = await kubectl.run(['rollout', 'status', 'deployment/stuck', '-n', NS, '--timeout=60s']);
    assert.notEqual(status.code, 0, status.stdout);
    assert.match(status.stderr, /deployment "stuck" exceeded its progress deadline/);

    // still stalled, as Kubernetes leaves it: the old ReplicaSet keeps serving
    assert.deepEqual(counts(replicaSet('stuck', 'nginx:1.25')), { spec: 3, pods: 3, ready: 3 });
    assert.deepEqual(counts(replicaSet('stuck', 'nginx:1.26')), { spec: 2, pods: 2, ready: 0 });
    const d = JSON.parse(await kubectl.ok(['get', 'deployment', 'stuck', '-n', NS, '-o', 'json']));
    const condition = (type: string) => d.status.conditions.find((c: { type: string }) => c.type === type);
    assert.deepEqual([condition('Progressing').status, condition('Progressing').reason], ['False', 'ProgressDeadlineExceeded']);
    assert.deepEqual([condition('Available').status, condition('Available').reason], ['True', 'MinimumReplicasAvailable']);
    assert.deepEqual([d.status.replicas, d.status.updatedReplicas, d.status.availableReplicas], [5, 2, 3]);
  });

  test('a paced rollout that completes: kubectl rollout status ends in success', async () => {
    await kubectl.ok(['apply', '-f', '-'], { input: manifest('paced', 'nginx:1.25') });
    assert.match(await kubectl.ok(['rollout', 'status', 'deployment/paced', '-n', NS, '--timeout=60s']), /successfully rolled out/);
    await kubectl.ok(['apply', '-f', '-'], { input: manifest('paced', 'nginx:1.26', { 'sandbox.outpost.dev/ready-after-ms': '300' }) });
    const out = await kubectl.ok(['rollout', 'status', 'deployment/paced', '-n', NS, '--timeout=60s']);
    assert.match(out, /deployment "paced" successfully rolled out/);
    assert.deepEqual(counts(replicaSet('paced', 'nginx:1.25')), { spec: 0, pods: 0, ready: 0 });
  });
});
