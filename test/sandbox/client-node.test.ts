/**
 * The sandbox through `@kubernetes/client-node` 1.4, the client the agent and gateway use: informers that survive
 * dropped watches and 410 Gone, KubernetesObjectApi (which resolves plurals through discovery), access reviews, and
 * RBAC refusals for the restricted token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ApiException,
  AuthorizationV1Api,
  CoreV1Api,
  KubernetesObjectApi,
  makeInformer,
  PatchStrategy,
  type KubernetesObject,
  type V1ConfigMap,
} from '@kubernetes/client-node';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';

let sb: Sandbox;

before(async () => {
  sb = await startSandbox({ bookmarkIntervalMs: 100, seed: 'demo' });
});

after(async () => {
  await sb?.close();
});

function cm(name: string, ns: string, data: Record<string, string> = { v: '1' }) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data };
}

describe('client-node informer', () => {
  test('lists, watches, and survives a dropped watch, expired history and an HTTP 410', async () => {
    const ns = 'informer';
    sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    sb.store.create(cm('a', ns));
    const kc = sb.kubeConfig();
    const core = kc.makeApiClient(CoreV1Api);
    const informer = makeInformer<V1ConfigMap>(kc, `/api/v1/namespaces/${ns}/configmaps`, () =>
      core.listNamespacedConfigMap({ namespace: ns }),
    );
    const seen: string[] = [];
    const errors: unknown[] = [];
    informer.on('add', (o) => seen.push(`add:${o.metadata!.name}`));
    informer.on('update', (o) => seen.push(`update:${o.metadata!.name}:${o.data?.v}`));
    informer.on('delete', (o) => seen.push(`delete:${o.metadata!.name}`));
    informer.on('error', (err) => errors.push(err));
    await informer.start();
    try {
      await eventually('initial list', () => seen.includes('add:a'), { timeoutMs: 30_000 });
      sb.store.create(cm('b', ns));
      await eventually('watch add', () => seen.includes('add:b'), { timeoutMs: 30_000 });

      // a dropped watch: client-node re-watches from its last resourceVersion
      sb.faults.closeWatches();
      await new Promise((r) => setTimeout(r, 50));
      sb.store.update(cm('b', ns, { v: '2' }));
      await eventually('update after dropped watch', () => seen.includes('update:b:2'), { timeoutMs: 30_000 });

      // expired history: ERROR 410 on the open watch, then a re-list
      sb.faults.expireHistory();
      sb.store.remove('v1', 'ConfigMap', ns, 'a');
      sb.store.create(cm('c', ns));
      await eventually('changes after 410', () => seen.includes('delete:a') && seen.includes('add:c'), { timeoutMs: 30_000 });

      // an HTTP 410 answer to the next watch, after another drop
      sb.faults.failNextWatches(1, 410);
      sb.faults.closeWatches();
      await new Promise((r) => setTimeout(r, 50));
      sb.store.create(cm('d', ns));
      await eventually('add after HTTP 410', () => seen.includes('add:d'), { timeoutMs: 30_000 });

      const cached = informer
        .list()
        .map((o) => o.metadata!.name)
        .sort();
      assert.deepEqual(
        cached,
        sb.store
          .list('v1', 'ConfigMap', ns)
          .map((o) => o.metadata.name)
          .sort(),
      );
      assert.deepEqual(errors, []);
    } finally {
      await informer.stop();
    }
  });
});

describe('client-node KubernetesObjectApi', () => {
  test('create, server-side apply, merge patch, read, list, delete', async () => {
    const api = KubernetesObjectApi.makeApiClient(sb.kubeConfig());
    const created = await api.create<KubernetesObject & { data?: Record<string, string> }>(cm('obj', 'default', { a: '1' }));
    assert.ok(created.metadata?.uid);
    assert.equal(created.data?.a, '1');

    const applied = await api.patch<KubernetesObject & { data?: Record<string, string> }>(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'applied', namespace: 'default' },
        data: { mode: 'ssa' },
      } as KubernetesObject,
      undefined,
      undefined,
      'outpost-test',
      true,
      PatchStrategy.ServerSideApply,
    );
    assert.equal(applied.data?.mode, 'ssa');
    assert.ok(sb.store.get('v1', 'ConfigMap', 'default', 'applied'));

    const deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'ssa-web', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'ssa-web' } },
        template: { metadata: { labels: { app: 'ssa-web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1' }] } },
      },
    };
    await api.patch(deployment as KubernetesObject, undefined, undefined, 'outpost-test', true, PatchStrategy.ServerSideApply);
    type WithReplicas = KubernetesObject & { spec: { replicas: number } };
    const reapplied = await api.patch<WithReplicas>(
      { ...deployment, spec: { ...deployment.spec, replicas: 2 } } as WithReplicas,
      undefined,
      undefined,
      'outpost-test',
      true,
      PatchStrategy.ServerSideApply,
    );
    assert.equal(reapplied.spec.replicas, 2);

    const merged = await api.patch<KubernetesObject & { data?: Record<string, string> }>(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'obj', namespace: 'default' }, data: { b: '2' } } as KubernetesObject,
      undefined,
      undefined,
      undefined,
      undefined,
      PatchStrategy.MergePatch,
    );
    assert.deepEqual(merged.data, { a: '1', b: '2' });

    const read = await api.read<KubernetesObject & { data?: Record<string, string> }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'obj', namespace: 'default' },
    });
    assert.equal(read.metadata?.resourceVersion, merged.metadata?.resourceVersion);

    const list = await api.list('v1', 'ConfigMap', 'default');
    assert.deepEqual(list.items.map((o) => o.metadata?.name).sort(), ['applied', 'obj']);
    const deployments = await api.list('apps/v1', 'Deployment', 'demo');
    assert.deepEqual(
      deployments.items.map((o) => o.metadata?.name),
      ['web'],
    );

    await api.delete({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'obj', namespace: 'default' } });
    assert.equal(sb.store.get('v1', 'ConfigMap', 'default', 'obj'), undefined);
    await assert.rejects(
      api.read({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'obj', namespace: 'default' } }),
      (err: unknown) => err instanceof ApiException && err.code === 404,
    );
  });

  test('a TLS sandbox is reachable with the generated CA', async () => {
    const tls = await startSandbox({ tls: true });
    try {
      assert.match(tls.url, /^https:\/\/127\.0\.0\.1:\d+$/);
      assert.ok(tls.caPem?.includes('BEGIN CERTIFICATE'));
      const core = tls.kubeConfig().makeApiClient(CoreV1Api);
      const list = await core.listNamespace();
      assert.ok(list.items.some((n) => n.metadata?.name === 'default'));
    } finally {
      await tls.close();
    }
  });
});

describe('client-node access reviews and RBAC', () => {
  test('SelfSubjectAccessReview answers per user', async () => {
    const review = (user: 'admin' | 'restricted', resource: string, verb: string) =>
      sb
        .kubeConfig(user)
        .makeApiClient(AuthorizationV1Api)
        .createSelfSubjectAccessReview({ body: { spec: { resourceAttributes: { namespace: 'demo', verb, resource, group: '' } } } });
    assert.equal((await review('admin', 'secrets', 'list')).status?.allowed, true);
    assert.equal((await review('restricted', 'secrets', 'list')).status?.allowed, false);
    assert.equal((await review('restricted', 'pods', 'watch')).status?.allowed, true);
    assert.equal((await review('restricted', 'pods', 'delete')).status?.allowed, false);
  });

  test('the restricted token gets 403 with a Status body on forbidden kinds', async () => {
    const core = sb.kubeConfig('restricted').makeApiClient(CoreV1Api);
    await assert.rejects(core.listNamespacedSecret({ namespace: 'demo' }), (err: unknown) => {
      assert.ok(err instanceof ApiException);
      assert.equal(err.code, 403);
      const body = typeof err.body === 'string' ? JSON.parse(err.body) : err.body;
      assert.equal(body.kind, 'Status');
      assert.equal(body.reason, 'Forbidden');
      return true;
    });
    await assert.rejects(
      core.createNamespacedConfigMap({ namespace: 'demo', body: cm('nope', 'demo') }),
      (err: unknown) => err instanceof ApiException && err.code === 403,
    );
    const pods = await core.listNamespacedPod({ namespace: 'demo' });
    assert.equal(pods.items.length, 3);
    const api = KubernetesObjectApi.makeApiClient(sb.kubeConfig('restricted'));
    await assert.rejects(api.list('apps/v1', 'StatefulSet', 'demo'), (err: unknown) => err instanceof ApiException && err.code === 403);
  });
});
