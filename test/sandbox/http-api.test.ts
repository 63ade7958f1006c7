/**
 * The sandbox's REST surface over raw HTTP: discovery, reads with paging and selectors, writes and their errors,
 * patches, subresources, watch semantics, controllers, garbage collection, CRDs and fault injection.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

let sb: Sandbox;

before(async () => {
  sb = await startSandbox({ seed: 'demo', historyWindow: 500, bookmarkIntervalMs: 50 });
});

after(async () => {
  await sb?.close();
});

const cm = (name: string, ns = 'default', extra: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: ns, ...extra },
  data: { k: 'v' },
});

describe('discovery', () => {
  test('version, core and group documents', async () => {
    const version = await call(sb, 'GET', '/version');
    assert.equal(version.json.major, '1');
    const api = await call(sb, 'GET', '/api');
    assert.deepEqual(api.json.versions, ['v1']);
    const groups = await call(sb, 'GET', '/apis');
    const names = groups.json.groups.map((g: { name: string }) => g.name);
    for (const g of [
      'apps',
      'batch',
      'networking.k8s.io',
      'coordination.k8s.io',
      'apiextensions.k8s.io',
      'rbac.authorization.k8s.io',
      'authorization.k8s.io',
    ]) {
      assert.ok(names.includes(g), g);
    }
    const v1 = await call(sb, 'GET', '/api/v1');
    const resources = v1.json.resources.map((r: { name: string }) => r.name);
    const podSubresources = ['pods/attach', 'pods/exec', 'pods/log', 'pods/portforward', 'pods/status'];
    const at = resources.indexOf('pods');
    assert.deepEqual(resources.slice(at + 1, at + 1 + podSubresources.length), podSubresources, 'subresources follow their parent');
    const pods = v1.json.resources.find((r: { name: string }) => r.name === 'pods');
    assert.deepEqual(pods.shortNames, ['po']);
    assert.equal(pods.namespaced, true);
    const apps = await call(sb, 'GET', '/apis/apps/v1');
    const scale = apps.json.resources.find((r: { name: string }) => r.name === 'deployments/scale');
    assert.equal(scale.kind, 'Scale');
    assert.equal((await call(sb, 'GET', '/apis/nope/v1')).status, 404);
    assert.equal((await call(sb, 'GET', '/openapi/v2')).status, 404);
  });
});

describe('reads', () => {
  test('list pages with limit/continue and a stable resourceVersion', async () => {
    await call(sb, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'paging' } } });
    for (let i = 0; i < 7; i++) sb.store.create(cm(`p${i}`, 'paging', { labels: { idx: String(i), parity: i % 2 ? 'odd' : 'even' } }));
    const names: string[] = [];
    let cont: string | undefined;
    let rv: string | undefined;
    let pages = 0;
    do {
      const res = await call(
        sb,
        'GET',
        `/api/v1/namespaces/paging/configmaps?limit=3${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`,
      );
      assert.equal(res.status, 200);
      assert.equal(res.json.kind, 'ConfigMapList');
      rv ??= res.json.metadata.resourceVersion;
      assert.equal(res.json.metadata.resourceVersion, rv);
      names.push(...res.json.items.map((o: { metadata: { name: string } }) => o.metadata.name));
      cont = res.json.metadata.continue;
      pages++;
    } while (cont);
    assert.equal(pages, 3);
    assert.deepEqual(names, ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/paging/configmaps?continue=garbage')).status, 400);
  });

  test('label selectors (equality, set-based, existence) and field selectors', async () => {
    const names = async (query: string) => {
      const res = await call(sb, 'GET', `/api/v1/namespaces/paging/configmaps?${query}`);
      assert.equal(res.status, 200, res.text);
      return res.json.items.map((o: { metadata: { name: string } }) => o.metadata.name);
    };
    assert.deepEqual(await names('labelSelector=parity%3Dodd'), ['p1', 'p3', 'p5']);
    assert.deepEqual(await names('labelSelector=idx%20in%20(0,6),parity!%3Dodd'), ['p0', 'p6']);
    assert.deepEqual(await names('labelSelector=!idx'), []);
    assert.deepEqual(await names('labelSelector=idx'), ['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6']);
    assert.deepEqual(await names('fieldSelector=metadata.name%3Dp2'), ['p2']);
    assert.deepEqual(await names('fieldSelector=metadata.name!%3Dp2&labelSelector=parity%3Deven'), ['p0', 'p4', 'p6']);
    const all = await call(sb, 'GET', '/api/v1/configmaps?fieldSelector=metadata.namespace%3Dpaging');
    assert.equal(all.json.items.length, 7);
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/paging/configmaps?labelSelector=a%20in%20b')).status, 400);
  });

  test('a Table Accept header falls back to plain JSON', async () => {
    const res = await call(sb, 'GET', '/api/v1/namespaces/demo/pods', {
      headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json' },
    });
    assert.equal(res.status, 200);
    assert.ok(res.json.kind === 'PodList' || res.json.kind === 'Table');
  });
});

describe('writes', () => {
  test('create with generateName, update with optimistic concurrency, delete', async () => {
    const created = await call(sb, 'POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-' }, data: { a: '1' } },
    });
    assert.equal(created.status, 201);
    const name = created.json.metadata.name;
    assert.match(name, /^gen-/);
    const path = `/api/v1/namespaces/default/configmaps/${name}`;
    const updated = await call(sb, 'PUT', path, { body: { ...created.json, data: { a: '2' } } });
    assert.equal(updated.status, 200);
    assert.ok(Number(updated.json.metadata.resourceVersion) > Number(created.json.metadata.resourceVersion));
    const stale = await call(sb, 'PUT', path, { body: { ...created.json, data: { a: '3' } } });
    assert.equal(stale.status, 409);
    assert.equal(stale.json.reason, 'Conflict');
    const dup = await call(sb, 'POST', '/api/v1/namespaces/default/configmaps', { body: { ...cm(name) } });
    assert.equal(dup.status, 409);
    assert.equal(dup.json.reason, 'AlreadyExists');
    const yaml = await call(sb, 'POST', '/api/v1/namespaces/default/configmaps', {
      raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  x: "y"\n',
      contentType: 'application/yaml',
    });
    assert.equal(yaml.status, 201);
    const deleted = await call(sb, 'DELETE', path);
    assert.equal(deleted.status, 200);
    assert.equal((await call(sb, 'GET', path)).status, 404);
  });

  test('bad input gets Status errors with the right codes and the server keeps serving', async () => {
    const post = (opts: Parameters<typeof call>[3], path = '/api/v1/namespaces/default/configmaps') => call(sb, 'POST', path, opts);
    const malformed = await post({ raw: '{"apiVersion": "v1", "kind": ', contentType: 'application/json' });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.json.kind, 'Status');
    assert.equal(malformed.json.reason, 'BadRequest');
    assert.equal((await post({ raw: 'kind: [unclosed', contentType: 'application/yaml' })).status, 400);
    assert.equal((await post({ raw: '<xml/>', contentType: 'application/xml' })).status, 415);
    assert.equal((await post({ raw: 'k8s\u0000binary', contentType: 'application/vnd.kubernetes.protobuf' })).status, 415);
    assert.equal(
      (await post({ body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } } })).status,
      400,
      'kind must match the URL',
    );
    assert.equal((await post({ body: cm('x', 'other') })).status, 400, 'namespace must match the URL');
    assert.equal((await post({ body: cm('Not_Valid') })).json.code, 422);
    assert.equal((await post({ body: { ...cm('x'), metadata: { name: 'x' } } }, '/api/v1/namespaces/missing/configmaps')).status, 404);
    assert.equal(
      (await post({ body: { apiVersion: 'v1', kind: 'Gizmo', metadata: { name: 'g' } } }, '/api/v1/namespaces/default/gizmos')).status,
      404,
    );
    assert.equal((await call(sb, 'GET', '/apis/apps/v1/namespaces/default/widgets')).status, 404);
    const huge = await post({ raw: JSON.stringify({ ...cm('huge'), data: { blob: 'x'.repeat(4 * 1024 * 1024) } }) });
    assert.equal(huge.status, 413);
    assert.equal(huge.json.reason, 'RequestEntityTooLarge');
    const badPatch = await call(sb, 'PATCH', '/apis/apps/v1/namespaces/demo/deployments/web', { raw: '{}', contentType: 'text/plain' });
    assert.equal(badPatch.status, 415);
    const badJsonPatch = await call(sb, 'PATCH', '/apis/apps/v1/namespaces/demo/deployments/web', {
      body: [{ op: 'replace', path: '/spec/nothing/here', value: 1 }],
      contentType: 'application/json-patch+json',
    });
    assert.ok([400, 422].includes(badJsonPatch.status), `json patch on a missing path: ${badJsonPatch.status}`);
    const badDeployment = await call(sb, 'POST', '/apis/apps/v1/namespaces/default/deployments', {
      body: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'bad' },
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'c' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      },
    });
    assert.equal(badDeployment.status, 422);
    assert.equal(badDeployment.json.reason, 'Invalid');
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces', { token: null })).status, 401);
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces', { token: 'wrong' })).json.reason, 'Unauthorized');
    // still serving
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/demo/configmaps/web-config')).status, 200);
  });

  test('patches: merge, json, strategic (containers merge by name) and server-side apply creating with 201', async () => {
    const path = '/apis/apps/v1/namespaces/demo/deployments/web';
    const smp = await call(sb, 'PATCH', path, {
      body: {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'sidecar', image: 'busybox:1' },
                { name: 'web', image: 'nginx:1.28' },
              ],
            },
          },
        },
      },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(smp.status, 200, smp.text);
    const containers = smp.json.spec.template.spec.containers;
    assert.equal(containers.length, 2);
    const web = containers.find((c: { name: string }) => c.name === 'web');
    assert.equal(web.image, 'nginx:1.28');
    assert.deepEqual(web.ports, [{ name: 'http', containerPort: 80, protocol: 'TCP' }], 'merged, not replaced');
    const merge = await call(sb, 'PATCH', path, {
      body: { metadata: { labels: { tier: 'front' } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(merge.json.metadata.labels.tier, 'front');
    const json = await call(sb, 'PATCH', path, {
      body: [{ op: 'add', path: '/metadata/annotations/example.com~1note', value: 'hi' }],
      contentType: 'application/json-patch+json',
    });
    assert.equal(json.json.metadata.annotations['example.com/note'], 'hi');
    const stale = await call(sb, 'PATCH', path, {
      body: { metadata: { resourceVersion: '1' } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(stale.status, 409);

    const applyPath = '/api/v1/namespaces/default/configmaps/applied-http?fieldManager=tests';
    const applied = await call(sb, 'PATCH', applyPath, {
      raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-http\ndata:\n  one: "1"\n',
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 201, applied.text);
    const reapplied = await call(sb, 'PATCH', applyPath, {
      raw: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied-http\ndata:\n  one: "1"\n  two: "2"\n',
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(reapplied.status, 200);
    assert.deepEqual(reapplied.json.data, { one: '1', two: '2' });
    const noManager = await call(sb, 'PATCH', '/api/v1/namespaces/default/configmaps/applied-http', {
      raw: 'kind: ConfigMap\napiVersion: v1\n',
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(noManager.status, 400);
  });

  test('subresources: scale, status and pods/log', async () => {
    const scalePath = '/apis/apps/v1/namespaces/demo-backend/deployments/api/scale';
    const scale = await call(sb, 'GET', scalePath);
    assert.equal(scale.json.kind, 'Scale');
    assert.equal(scale.json.spec.replicas, 2);
    assert.equal(scale.json.status.selector, 'app=api');
    const patched = await call(sb, 'PATCH', scalePath, { body: { spec: { replicas: 4 } }, contentType: 'application/merge-patch+json' });
    assert.equal(patched.json.spec.replicas, 4);
    const stalePut = await call(sb, 'PUT', scalePath, {
      body: { ...patched.json, metadata: { ...patched.json.metadata, resourceVersion: '1' }, spec: { replicas: 1 } },
    });
    assert.equal(stalePut.status, 409);
    const put = await call(sb, 'PUT', scalePath, {
      body: { ...patched.json, metadata: { name: 'api', namespace: 'demo-backend' }, spec: { replicas: 1 } },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(
      sb.store.get('apps/v1', 'Deployment', 'demo-backend', 'api')!.spec &&
        (sb.store.get('apps/v1', 'Deployment', 'demo-backend', 'api')!.spec as { replicas: number }).replicas,
      1,
    );
    await eventually(
      'scaled to one pod',
      () => sb.store.list('v1', 'Pod', 'demo-backend').filter((p) => p.metadata.name!.startsWith('api-')).length === 1,
      { timeoutMs: 30_000 },
    );

    const statusPath = '/api/v1/namespaces/default/configmaps/x/status';
    assert.equal((await call(sb, 'GET', statusPath)).status, 404, 'ConfigMaps have no status subresource');
    const svcStatus = await call(sb, 'PATCH', '/api/v1/namespaces/demo/services/web/status', {
      body: { status: { loadBalancer: { ingress: [{ ip: '1.2.3.4' }] } } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(svcStatus.json.status.loadBalancer.ingress[0].ip, '1.2.3.4');

    const pod = sb.store.list('v1', 'Pod', 'demo')[0]!;
    await eventually(
      'pod running',
      () => (sb.store.get('v1', 'Pod', 'demo', pod.metadata.name!)!.status as { phase?: string }).phase === 'Running',
      { timeoutMs: 30_000 },
    );
    const log = await call(sb, 'GET', `/api/v1/namespaces/demo/pods/${pod.metadata.name}/log?container=web&tailLines=1`);
    assert.equal(log.status, 200, log.text);
    assert.equal(log.headers['content-type'], 'text/plain');
    assert.equal(log.text, '[web] ready\n');
    assert.equal((await call(sb, 'GET', `/api/v1/namespaces/demo/pods/${pod.metadata.name}/log?container=nope`)).status, 400);
  });
});

describe('controllers and garbage collection', () => {
  test('the demo deployment has ReplicaSet, running pods and Endpoints', async () => {
    await eventually(
      'deployment ready',
      () => {
        const d = sb.store.get('apps/v1', 'Deployment', 'demo', 'web');
        const st = d?.status as { readyReplicas?: number; observedGeneration?: number } | undefined;
        return st?.readyReplicas === 3 && st.observedGeneration === d!.metadata.generation;
      },
      { timeoutMs: 30_000 },
    );
    const ep = await eventually(
      'endpoints',
      () => {
        const e = sb.store.get('v1', 'Endpoints', 'demo', 'web') as
          | { subsets?: { addresses?: unknown[]; ports: { port: number; name: string }[] }[] }
          | undefined;
        return e?.subsets?.[0]?.addresses?.length === 3 ? e : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.deepEqual(ep.subsets![0]!.ports, [{ port: 80, protocol: 'TCP', name: 'http' }]);
    const secret = sb.store.get('v1', 'Secret', 'demo', 'web-secret')!;
    assert.equal(Buffer.from((secret.data as { password: string }).password, 'base64').toString(), 's3cr3t-demo');
  });

  test('delete propagation: background collects dependents, orphan keeps them', async () => {
    const ns = 'gc';
    sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    const mk = (name: string) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name, namespace: ns },
      spec: {
        replicas: 2,
        selector: { matchLabels: { rs: name } },
        template: { metadata: { labels: { rs: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    sb.store.create(mk('bg'));
    sb.store.create(mk('orphan'));
    const podsOf = (rs: string) => sb.store.list('v1', 'Pod', ns).filter((p) => p.metadata.labels?.rs === rs);
    await eventually('pods created', () => podsOf('bg').length === 2 && podsOf('orphan').length === 2, { timeoutMs: 30_000 });
    const bg = await call(sb, 'DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/bg`, {
      body: { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' },
    });
    assert.equal(bg.status, 200, bg.text);
    await eventually('background GC', () => podsOf('bg').length === 0, { timeoutMs: 30_000 });
    await call(sb, 'DELETE', `/apis/apps/v1/namespaces/${ns}/replicasets/orphan?propagationPolicy=Orphan`);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(podsOf('orphan').length, 2);
    assert.ok(podsOf('orphan').every((p) => !p.metadata.ownerReferences));
  });

  test('foreground deletion keeps the owner until its dependents are gone', async () => {
    sb.store.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'fg', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'fg' } },
        template: { metadata: { labels: { app: 'fg' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    await eventually('fg pod', () => sb.store.list('v1', 'Pod', 'default').some((p) => p.metadata.labels?.app === 'fg'), {
      timeoutMs: 30_000,
    });
    const res = await call(sb, 'DELETE', '/apis/apps/v1/namespaces/default/deployments/fg?propagationPolicy=Foreground');
    assert.equal(res.status, 200);
    assert.ok(res.json.metadata.deletionTimestamp);
    assert.ok(res.json.metadata.finalizers.includes('foregroundDeletion'));
    await eventually('owner removed last', () => !sb.store.get('apps/v1', 'Deployment', 'default', 'fg'), { timeoutMs: 30_000 });
    assert.equal(sb.store.list('v1', 'Pod', 'default').filter((p) => p.metadata.labels?.app === 'fg').length, 0);
  });

  test('a CRD makes its kind discoverable and usable', async () => {
    const crd = await call(sb, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'gadgets.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', shortNames: ['gd'] },
          versions: [
            { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: { openAPIV3Schema: { type: 'object' } } },
          ],
        },
      },
    });
    assert.equal(crd.status, 201);
    const disc = await call(sb, 'GET', '/apis/example.com/v1');
    assert.deepEqual(
      disc.json.resources.map((r: { name: string }) => r.name),
      ['gadgets', 'gadgets/status'],
    );
    const g = await call(sb, 'POST', '/apis/example.com/v1/namespaces/default/gadgets', {
      body: { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 1 } },
    });
    assert.equal(g.status, 201);
    assert.equal(g.json.metadata.generation, 1);
    const smp = await call(sb, 'PATCH', '/apis/example.com/v1/namespaces/default/gadgets/g1', {
      body: { spec: { size: 2 } },
      contentType: 'application/strategic-merge-patch+json',
    });
    assert.equal(smp.status, 415, 'strategic merge is not supported for custom resources');
    await eventually(
      'established',
      async () =>
        (
          await call(sb, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')
        ).json.status?.conditions?.some((c: { type: string }) => c.type === 'Established'),
      { timeoutMs: 30_000 },
    );
    assert.equal((await call(sb, 'DELETE', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com')).status, 200);
    assert.equal((await call(sb, 'GET', '/apis/example.com/v1/namespaces/default/gadgets')).status, 404);
  });
});

describe('watch', () => {
  test('from a resourceVersion, with selectors turning updates into ADDED/DELETED, bookmarks and chunked JSON lines', async () => {
    sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'w' } });
    const rv = sb.store.resourceVersion;
    sb.store.create(cm('before', 'w', { labels: { sel: 'yes' } }));
    const w = await openWatch(
      sb,
      `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}&allowWatchBookmarks=true&labelSelector=sel%3Dyes`,
    );
    try {
      assert.equal(w.status, 200);
      assert.equal(w.headers['content-type'], 'application/json');
      assert.equal(w.headers['transfer-encoding'], 'chunked');
      await w.waitFor((e) => e.some((x) => x.type === 'ADDED' && x.object.metadata.name === 'before'));
      const obj = sb.store.get('v1', 'ConfigMap', 'w', 'before')!;
      sb.store.update({ ...obj, metadata: { ...obj.metadata, labels: { sel: 'no' } } });
      const again = sb.store.get('v1', 'ConfigMap', 'w', 'before')!;
      sb.store.update({ ...again, metadata: { ...again.metadata, labels: { sel: 'yes' } } });
      sb.store.create(cm('unlabelled', 'w'));
      await w.waitFor(
        (e) =>
          e
            .filter((x) => x.object.metadata.name === 'before')
            .map((x) => x.type)
            .join() === 'ADDED,DELETED,ADDED',
      );
      await w.waitFor((e) => e.some((x) => x.type === 'BOOKMARK'));
      const bookmark = w.events.find((x) => x.type === 'BOOKMARK');
      assert.equal(bookmark.object.kind, 'ConfigMap');
      assert.ok(Number(bookmark.object.metadata.resourceVersion) >= rv);
      assert.ok(!w.events.some((x) => x.object.metadata?.name === 'unlabelled'));
    } finally {
      w.close();
    }
  });

  test('without a resourceVersion it starts with the current state; timeoutSeconds ends it', async () => {
    const w = await openWatch(sb, '/api/v1/namespaces/demo/configmaps?watch=1&timeoutSeconds=1');
    await w.waitFor((e) => e.some((x) => x.type === 'ADDED' && x.object.metadata.name === 'web-config'));
    await w.ended;
    assert.ok(w.events.every((x) => x.type === 'ADDED'));
  });

  test('expiring history sends ERROR 410 to open watches; older versions then get HTTP 410', async () => {
    const rv = sb.store.resourceVersion;
    const w = await openWatch(sb, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}`);
    sb.faults.expireHistory();
    await w.ended;
    assert.equal(w.events.at(-1).type, 'ERROR');
    assert.equal(w.events.at(-1).object.code, 410);
    sb.store.create(cm('after-expiry', 'w'));
    const old = await call(sb, 'GET', `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv - 1}`);
    assert.equal(old.status, 410);
    assert.equal(old.json.reason, 'Expired');
    const current = await openWatch(sb, `/api/v1/namespaces/w/configmaps?watch=true&resourceVersion=${rv}&timeoutSeconds=1`);
    await current.waitFor((e) => e.some((x) => x.object.metadata.name === 'after-expiry'));
    current.close();
  });

  test('faults: closing watches, failing the next watch, 500s, latency, pause and resume', async () => {
    const w = await openWatch(sb, `/api/v1/configmaps?watch=true&resourceVersion=${sb.store.resourceVersion}`);
    sb.faults.closeWatches();
    await w.ended;
    sb.faults.failNextWatches(2, 500);
    assert.equal((await call(sb, 'GET', '/api/v1/configmaps?watch=true')).status, 500);
    assert.equal((await call(sb, 'GET', '/api/v1/configmaps?watch=true')).status, 500);
    assert.equal((await call(sb, 'GET', '/api/v1/configmaps?watch=true&timeoutSeconds=1')).status, 200);
    sb.faults.setErrorRate(1);
    const failed = await call(sb, 'GET', '/api/v1/namespaces');
    assert.equal(failed.status, 500);
    assert.equal(failed.json.reason, 'InternalError');
    sb.faults.setErrorRate(0);
    sb.faults.setLatency(80);
    const t0 = Date.now();
    await call(sb, 'GET', '/api/v1/namespaces');
    assert.ok(Date.now() - t0 >= 70);
    sb.faults.setLatency(0);
    sb.faults.pause();
    let done = false;
    const pending = call(sb, 'GET', '/api/v1/namespaces').then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(done, false, 'requests wait while paused');
    sb.faults.resume();
    assert.equal((await pending).status, 200);
    const viaHttp = await call(sb, 'POST', '/sandbox/faults/fail-next-watches', { body: { count: 1, status: 410 } });
    assert.equal(viaHttp.status, 200);
    assert.equal((await call(sb, 'GET', '/api/v1/configmaps?watch=true')).status, 410);
    assert.equal((await call(sb, 'POST', '/sandbox/faults/pause', { token: sb.restrictedToken })).status, 403);
  });
});

describe('RBAC', () => {
  test('the restricted token reads allowed kinds and is refused the rest with Status 403', async () => {
    const t = sb.restrictedToken;
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/demo/pods', { token: t })).status, 200);
    assert.equal((await call(sb, 'GET', '/apis/apps/v1/namespaces/demo/deployments/web', { token: t })).status, 200);
    const secret = await call(sb, 'GET', '/api/v1/namespaces/demo/secrets/web-secret', { token: t });
    assert.equal(secret.status, 403);
    assert.equal(secret.json.kind, 'Status');
    assert.match(
      secret.json.message,
      /secrets "web-secret" is forbidden: User "sandbox-restricted" cannot get resource "secrets" in API group "" in the namespace "demo"/,
    );
    assert.equal((await call(sb, 'GET', '/api/v1/secrets?watch=true', { token: t })).status, 403);
    assert.equal((await call(sb, 'GET', '/apis/apps/v1/statefulsets', { token: t })).status, 403);
    assert.equal((await call(sb, 'POST', '/api/v1/namespaces/demo/configmaps', { token: t, body: cm('x', 'demo') })).status, 403);
    assert.equal((await call(sb, 'GET', '/api/v1', { token: t })).status, 200, 'discovery is open to authenticated users');
    const review = await call(sb, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
      token: t,
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SelfSubjectAccessReview',
        spec: { resourceAttributes: { verb: 'list', resource: 'secrets', namespace: 'demo' } },
      },
    });
    assert.equal(review.status, 201);
    assert.equal(review.json.status.allowed, false);
  });

  test('RBAC objects in the store are live: a RoleBinding grants secrets in one namespace', async () => {
    sb.store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name: 'secret-reader', namespace: 'demo' },
      rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'], resourceNames: ['web-secret'] }],
    });
    sb.store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'restricted-secret-reader', namespace: 'demo' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'secret-reader' },
      subjects: [{ kind: 'User', name: 'sandbox-restricted' }],
    });
    const t = sb.restrictedToken;
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/demo/secrets/web-secret', { token: t })).status, 200);
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/demo/secrets', { token: t })).status, 403, 'resourceNames do not grant list');
    sb.store.remove('rbac.authorization.k8s.io/v1', 'RoleBinding', 'demo', 'restricted-secret-reader');
    assert.equal((await call(sb, 'GET', '/api/v1/namespaces/demo/secrets/web-secret', { token: t })).status, 403);
  });
});
