import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { durationFromMs, durationMs } from '@bufbuild/protobuf/wkt';
import {
  OperationSchema,
  PatchType,
  PropagationPolicy,
  RolloutAction,
  type Operation,
  type OperationResult,
} from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

type Spec = Operation['spec'];
type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let counter = 0;

/** Sends one operation to the agent through the fake gateway and waits for its result. */
async function run(h: Harness, spec: Spec, options: { id?: string; timeoutMs?: number; account?: string } = {}): Promise<OperationResult> {
  const id = options.id ?? `op-${++counter}`;
  h.gateway.sendOperation(
    create(OperationSchema, { id, account: options.account ?? 'sandbox', timeout: durationFromMs(options.timeoutMs ?? 30_000), spec }),
  );
  return h.gateway.waitForResult(id, 60_000);
}

const apply = (manifests: string, extra: Record<string, unknown> = {}): Spec => ({
  case: 'apply',
  value: { manifests, ...extra } as never,
});
const objects = (r: OperationResult) => r.objects as Obj[];

function assertOk(r: OperationResult, status?: number): void {
  assert.equal(r.success, true, `expected success, got ${r.statusCode} ${r.reason}: ${r.message}`);
  if (status !== undefined) assert.equal(r.statusCode, status);
}

const deploymentYaml = (name: string, image: string, extra = '') => `
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ops
spec:
  replicas: 2
  selector:
    matchLabels: { app: ${name} }
  template:
    metadata:
      labels: { app: ${name} }
    spec:
      containers:
        - name: main
          image: ${image}
${extra}`;

describe('agent operations against the sandbox', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({
      seed: 'demo',
      account: { kinds: ['Namespace'] }, // keep the watch side small: these tests are about operations
      config: { kubernetes: { serverSideApply: ['Lease'], retries: { maxAttempts: 3, backoffMs: 20 } } },
    });
    h.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ops' } });
    await eventually('the agent to be welcomed', () => h.agent.status().connected, { timeoutMs: 30_000 });
  });
  after(() => h.close());

  test('apply: multi-document YAML creates (201) with the last-applied annotation, then updates with a three-way patch', async () => {
    const first = await run(
      h,
      apply(`
apiVersion: v1
kind: ConfigMap
metadata: { name: app-config, namespace: ops }
data: { a: "1", b: "2" }
---
${deploymentYaml(
  'app',
  'nginx:1',
  `        - name: sidecar
          image: envoy:1`,
)}`),
    );
    assertOk(first, 201);
    assert.equal(first.objects.length, 2);
    assert.match(first.message, /configmap\/app-config created/);
    assert.match(first.message, /deployment\.apps\/app created/);
    const cm = h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config')!;
    const lastApplied = JSON.parse(cm.metadata.annotations!['kubectl.kubernetes.io/last-applied-configuration']!);
    assert.deepEqual(lastApplied.data, { a: '1', b: '2' });

    // Someone else adds a label; the manifest drops key b and the sidecar and changes an image.
    const live = h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config')!;
    h.sandbox.store.update({ ...live, metadata: { ...live.metadata, labels: { owner: 'other-tool' } } });
    const generation = h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app')!.metadata.generation!;
    const second = await run(
      h,
      apply(`
apiVersion: v1
kind: ConfigMap
metadata: { name: app-config, namespace: ops }
data: { a: "10" }
---
${deploymentYaml('app', 'nginx:2')}`),
    );
    assertOk(second, 200);
    assert.match(second.message, /configmap\/app-config configured/);
    const cm2 = h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config')!;
    assert.deepEqual(cm2.data, { a: '10' }, 'the key removed from the manifest is removed from the object');
    assert.deepEqual(cm2.metadata.labels, { owner: 'other-tool' }, 'a field set by someone else stays');
    const d = h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app')! as Obj;
    assert.deepEqual(
      d.spec.template.spec.containers.map((c: Obj) => `${c.name}=${c.image}`),
      ['main=nginx:2'],
      'the removed container is deleted, the image updated',
    );
    assert.equal(d.metadata.generation, generation + 1);

    // Same manifest again: nothing to change, no write.
    const rv = h.sandbox.store.resourceVersion;
    const third = await run(
      h,
      apply(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"app-config","namespace":"ops"},"data":{"a":"10"}}`),
    );
    assertOk(third, 200);
    assert.match(third.message, /unchanged/);
    assert.equal(h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config')!.metadata.resourceVersion, cm2.metadata.resourceVersion);
    assert.ok(h.sandbox.store.resourceVersion >= rv);
    // Both durations are reported; no wall-clock bound (a sub-millisecond call on a loaded machine is still a call).
    assert.ok(third.kubernetesDuration && third.duration, 'both durations reported');
    assert.ok(durationMs(third.duration!) + 1 >= durationMs(third.kubernetesDuration!), 'the Kubernetes calls are part of the whole');
  });

  test('apply: JSON arrays and List kinds; the operation namespace is the default', async () => {
    const list = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-list-1' }, data: { x: '1' } },
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-list-2' }, data: { x: '2' } },
      ],
    });
    assertOk(await run(h, apply(list, { namespace: 'ops' })), 201);
    assert.ok(h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'from-list-1'));
    assert.ok(h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'from-list-2'));
    const array = JSON.stringify([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'from-array' }, data: { y: '1' } }]);
    assertOk(await run(h, apply(array)), 201);
    assert.ok(h.sandbox.store.get('v1', 'ConfigMap', 'default', 'from-array'), 'no namespace anywhere: default');
  });

  test('apply: replace PUTs the whole object (fields left out are cleared) and creates it when missing; generateName creates a new object each time', async () => {
    const cm = (data: Record<string, string>) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'replaced', namespace: 'ops' }, data });
    assertOk(await run(h, apply(cm({ a: '1', b: '2' }), { replace: true })), 201);
    assertOk(await run(h, apply(cm({ a: '1' }), { replace: true })), 200);
    assert.deepEqual((h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'replaced') as unknown as { data: unknown }).data, { a: '1' });
    const both = await run(h, apply(cm({ a: '1' }), { replace: true, serverSide: true }));
    assert.equal(both.statusCode, 400);
    const generated = JSON.stringify({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { generateName: 'gen-', namespace: 'ops' },
      data: { x: '1' },
    });
    const first = await run(h, apply(generated));
    const second = await run(h, apply(generated));
    assertOk(first, 201);
    assertOk(second, 201);
    const names = [first, second].map((r) => (r.objects[0] as { metadata: { name: string } }).metadata.name);
    assert.match(names[0]!, /^gen-\w+$/);
    assert.notEqual(names[0], names[1]);
    assert.match(first.message, /^configmap\/gen-\w+ created$/);
  });

  test('server-side apply: asked for, by manifest annotation, and by kind in kubernetes.serverSideApply', async () => {
    const cm = (name: string, annotations = '') => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ops
${annotations}
data: { k: v }`;
    const asked = await run(h, apply(cm('ssa-asked'), { serverSide: true, fieldManager: 'my-manager' }));
    assertOk(asked, 201);
    const stored = h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'ssa-asked')! as Obj;
    assert.equal(stored.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
    assert.ok(stored.metadata.managedFields.some((f: Obj) => f.manager === 'my-manager' && f.operation === 'Apply'));
    const again = await run(h, apply(cm('ssa-asked').replace('k: v', 'k: w'), { serverSide: true, fieldManager: 'my-manager' }));
    assertOk(again, 200);
    assert.equal(objects(again)[0]!.data.k, 'w');

    assertOk(await run(h, apply(cm('ssa-annotated', '  annotations: { outpost.io/server-side-apply: "true" }'))), 201);
    const annotated = h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'ssa-annotated')! as Obj;
    assert.ok(annotated.metadata.managedFields.some((f: Obj) => f.manager === 'outpost' && f.operation === 'Apply'));

    const lease = `apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: { name: by-config, namespace: ops }
spec: { holderIdentity: me }`;
    assertOk(await run(h, apply(lease)), 201);
    const storedLease = h.sandbox.store.get('coordination.k8s.io/v1', 'Lease', 'ops', 'by-config')! as Obj;
    assert.ok(storedLease.metadata.managedFields.some((f: Obj) => f.manager === 'outpost' && f.operation === 'Apply'));
    // …and the annotation "false" wins over the configured kind
    const csa = lease
      .replace('by-config', 'by-config-csa')
      .replace('metadata: {', 'metadata: { annotations: { outpost.io/server-side-apply: "false" },');
    assertOk(await run(h, apply(csa)), 201);
    const csaLease = h.sandbox.store.get('coordination.k8s.io/v1', 'Lease', 'ops', 'by-config-csa')! as Obj;
    assert.ok(csaLease.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
  });

  test('apply: a CRD and its custom resources in one apply; custom resources update with a JSON merge patch', async () => {
    const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: widgets.example.com }
spec:
  group: example.com
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
    - name: v1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }`;
    const widget = (sizes: string) => `apiVersion: example.com/v1
kind: Widget
metadata: { name: w1, namespace: ops }
spec: { sizes: ${sizes}, color: blue }`;
    const first = await run(h, apply(`${crd}\n---\n${widget('[1, 2]')}`));
    assertOk(first, 201);
    const second = await run(h, apply(widget('[3]')));
    assertOk(second, 200);
    assert.deepEqual(objects(second)[0]!.spec, { sizes: [3], color: 'blue' });
  });

  test('scale through the scale subresource', async () => {
    const r = await run(h, { case: 'scale', value: { kind: 'Deployment', namespace: 'ops', name: 'app', replicas: 5 } as never });
    assertOk(r, 200);
    assert.equal(objects(r)[0]!.kind, 'Scale');
    assert.equal(objects(r)[0]!.spec.replicas, 5);
    assert.equal((h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app') as Obj).spec.replicas, 5);
  });

  test('patch: JSON, merge and strategic', async () => {
    const target = { kind: 'ConfigMap', namespace: 'ops', name: 'app-config' };
    const json = await run(h, {
      case: 'patch',
      value: { ...target, type: PatchType.JSON, patch: '[{"op":"add","path":"/data/j","value":"json"}]' } as never,
    });
    assertOk(json, 200);
    const merge = await run(h, { case: 'patch', value: { ...target, type: PatchType.MERGE, patch: 'data: { m: merge }' } as never });
    assertOk(merge, 200);
    const strategic = await run(h, {
      case: 'patch',
      value: {
        kind: 'Deployment',
        namespace: 'ops',
        name: 'app',
        type: PatchType.STRATEGIC,
        patch: '{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"MODE","value":"x"}]}]}}}}',
      } as never,
    });
    assertOk(strategic, 200);
    assert.equal((h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config') as Obj).data.j, 'json');
    assert.equal((h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'app-config') as Obj).data.m, 'merge');
    const container = (h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app') as Obj).spec.template.spec.containers[0];
    assert.equal(container.image, 'nginx:2', 'strategic merge kept the container and merged into it');
    assert.deepEqual(container.env, [{ name: 'MODE', value: 'x' }]);
  });

  test('rollout restart, pause, resume and undo to a revision; history lists the revisions', async () => {
    // The sandbox's controller writes the Deployment while it rolls out, which an undo's guarded patch would lose to
    // (it reads again a few times, then fails): each undo here is asked once the rollout before it has settled.
    const settled = (name: string) =>
      eventually(
        `deployment/${name} rolled out`,
        () => {
          const d = h.sandbox.store.get('apps/v1', 'Deployment', 'ops', name) as Obj;
          const status = d.status ?? {};
          return status.observedGeneration === d.metadata.generation && status.updatedReplicas === 2 && status.replicas === 2;
        },
        { timeoutMs: 30_000 },
      );
    assertOk(await run(h, apply(deploymentYaml('roll', 'img:1'))), 201);
    assertOk(await run(h, apply(deploymentYaml('roll', 'img:2'))), 200);
    assertOk(await run(h, apply(deploymentYaml('roll', 'img:3'))), 200);
    const target = { kind: 'Deployment', namespace: 'ops', name: 'roll' };
    const history = await run(h, { case: 'history', value: target as never });
    assertOk(history, 200);
    assert.deepEqual(
      history.revisions.map((r) => Number(r.revision)),
      [1, 2, 3],
    );
    assert.equal(history.message, '3 revisions of deployment/roll');
    assert.equal((history.revisions[0]!.template as Obj).spec.containers[0].image, 'img:1');
    assert.ok(history.revisions.every((r) => r.name.startsWith('roll-') && r.createdAt !== undefined));

    await settled('roll');
    const undo = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO, toRevision: 1n } as never });
    assertOk(undo, 200);
    assert.match(undo.message, /to revision 1/);
    const d = h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj;
    assert.equal(d.spec.template.spec.containers[0].image, 'img:1');
    assert.equal(d.spec.template.metadata.labels['pod-template-hash'], undefined);
    await eventually(
      'revision 4',
      () =>
        (h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj).metadata.annotations?.['deployment.kubernetes.io/revision'] ===
        '4',
      { timeoutMs: 30_000 },
    );
    await settled('roll');
    const undoPrevious = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO } as never });
    assertOk(undoPrevious, 200);
    assert.equal(
      (h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj).spec.template.spec.containers[0].image,
      'img:3',
      'previous revision (3)',
    );
    const missing = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO, toRevision: 42n } as never });
    assert.equal(missing.success, false);
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.reason, 'NotFound');
    assert.match(missing.message, /revision 42/);

    const restart = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.RESTART } as never });
    assertOk(restart, 200);
    assert.ok(
      (h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj).spec.template.metadata.annotations[
        'kubectl.kubernetes.io/restartedAt'
      ],
    );
    assertOk(await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.PAUSE } as never }), 200);
    assert.equal((h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj).spec.paused, true);
    const paused = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO } as never });
    assert.equal(paused.statusCode, 400);
    assertOk(await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.RESUME } as never }), 200);
    assert.ok(!(h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'roll') as Obj).spec.paused);
  });

  test('StatefulSet and DaemonSet: history from their ControllerRevisions, undo to a revision and to the previous one, an undo to the running template is skipped', async () => {
    const workload = (kind: string, name: string, image: string) => `
apiVersion: apps/v1
kind: ${kind}
metadata: { name: ${name}, namespace: ops }
spec:
  ${kind === 'StatefulSet' ? `replicas: 1\n  serviceName: ${name}` : ''}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec: { containers: [{ name: main, image: '${image}' }] }
`;
    for (const kind of ['StatefulSet', 'DaemonSet']) {
      const name = `rev-${kind.toLowerCase()}`;
      const image = () => (h.sandbox.store.get('apps/v1', kind, 'ops', name) as Obj).spec.template.spec.containers[0].image;
      const revisionsOf = async () => {
        const history = await run(h, { case: 'history', value: { kind, namespace: 'ops', name } as never });
        assertOk(history, 200);
        assert.match(history.message, new RegExp(`^\\d+ revisions? of ${kind.toLowerCase()}/${name}$`));
        return history.revisions;
      };
      const stored = () =>
        h.sandbox.store.list('apps/v1', 'ControllerRevision', 'ops').filter((cr) => cr.metadata.name!.startsWith(`${name}-`)) as Obj[];
      const newest = () => Math.max(0, ...stored().map((cr) => Number(cr.revision)));
      for (const [n, tag] of ['img:1', 'img:2', 'img:3'].entries()) {
        assertOk(await run(h, apply(workload(kind, name, tag))));
        // The controller writes a ControllerRevision for each template: wait for this one before the next apply.
        await eventually(`${kind} revision ${n + 1}`, () => newest() === n + 1, { timeoutMs: 30_000 });
      }
      const revisions = await revisionsOf();
      assert.deepEqual(
        revisions.map((r) => Number(r.revision)),
        [1, 2, 3],
      );
      assert.equal((revisions[0]!.template as Obj).spec.containers[0].image, 'img:1');
      assert.equal((revisions[0]!.template as Obj).$patch, undefined, 'the template comes without its $patch directive');
      assert.ok(revisions.every((r) => r.name.startsWith(`${name}-`) && r.createdAt !== undefined));

      const target = { kind, namespace: 'ops', name };
      const undo = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO, toRevision: 1n } as never });
      assertOk(undo, 200);
      assert.match(undo.message, new RegExp(`${kind.toLowerCase()}/${name} rolled back to revision 1`));
      assert.equal(image(), 'img:1');
      // The controller gives the restored template the next revision number (4), as Kubernetes does.
      await eventually(`${kind} revision 4`, () => newest() === 4, { timeoutMs: 30_000 });
      const skipped = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO, toRevision: 4n } as never });
      assertOk(skipped, 200);
      assert.match(skipped.message, /skipped rollback \(current template already matches revision 4\)/);
      const previous = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO } as never });
      assertOk(previous, 200);
      assert.equal(image(), 'img:3', 'the previous revision (3)');
      const missing = await run(h, { case: 'rollout', value: { ...target, action: RolloutAction.UNDO, toRevision: 42n } as never });
      assert.equal(missing.statusCode, 404);
      assert.match(missing.message, /revision 42/);
    }
    const notWorkload = await run(h, { case: 'history', value: { kind: 'ConfigMap', namespace: 'ops', name: 'app-config' } as never });
    assert.equal(notWorkload.statusCode, 400);
    assert.match(notWorkload.message, /Deployments, StatefulSets and DaemonSets, not ConfigMap/);
  });

  test('get, list (selectors, limit), logs (container, tail lines)', async () => {
    const get = await run(h, { case: 'get', value: { kind: 'Deployment', namespace: 'demo', name: 'web' } as never });
    assertOk(get, 200);
    assert.equal(objects(get)[0]!.metadata.name, 'web');
    const list = await run(h, { case: 'list', value: { kind: 'ConfigMap', namespace: 'ops', labelSelector: '' } as never });
    assertOk(list, 200);
    assert.ok(objects(list).every((o) => o.kind === 'ConfigMap' && o.apiVersion === 'v1'));
    assert.ok(objects(list).some((o) => o.metadata.name === 'app-config'));
    const selected = await run(h, {
      case: 'list',
      value: { kind: 'pods', namespace: 'demo', labelSelector: 'app=web', limit: 2 } as never,
    });
    assertOk(selected, 200);
    assert.equal(selected.objects.length, 2);
    assert.equal(selected.message, '2 pods');
    const everywhere = await run(h, { case: 'list', value: { kind: 'Deployment', fieldSelector: 'metadata.name=api' } as never });
    assert.deepEqual(
      objects(everywhere).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
      ['demo-backend/api'],
    );
    assert.equal(everywhere.message, '1 deployment', 'one object: the singular');

    const pod = objects(selected)[0]!.metadata.name as string;
    const logs = await run(h, { case: 'logs', value: { namespace: 'demo', pod, container: 'web', tailLines: 2n } as never });
    assertOk(logs, 200);
    assert.equal(logs.logs.trimEnd().split('\n').length, 2);
    const badContainer = await run(h, { case: 'logs', value: { namespace: 'demo', pod, container: 'nope' } as never });
    assert.equal(badContainer.statusCode, 400);
    assert.match(badContainer.message, /container nope is not valid/);
  });

  test('Secrets fetched with get and list carry no data, and no secret byte crosses the stream', async () => {
    const get = await run(h, { case: 'get', value: { kind: 'Secret', namespace: 'demo', name: 'web-secret' } as never });
    assertOk(get, 200);
    assert.equal(objects(get)[0]!.data, undefined);
    const list = await run(h, { case: 'list', value: { kind: 'Secret', namespace: 'demo' } as never });
    assertOk(list, 200);
    assert.ok(list.objects.length >= 1 && objects(list).every((o) => o.data === undefined && o.stringData === undefined));
    const applied = await run(
      h,
      apply(`apiVersion: v1
kind: Secret
metadata: { name: applied-secret, namespace: ops }
stringData: { token: hunter2-very-secret }`),
    );
    assertOk(applied, 201);
    const appliedSecret = objects(applied)[0]!;
    assert.equal(appliedSecret.data, undefined);
    assert.equal(appliedSecret.metadata.annotations?.['kubectl.kubernetes.io/last-applied-configuration'], undefined);
    // Re-applying a Secret diffs against its real (unscrubbed) data: a removed key goes, an identical apply is a no-op.
    assertOk(
      await run(
        h,
        apply(
          `apiVersion: v1\nkind: Secret\nmetadata: { name: two-keys, namespace: ops }\nstringData: { a: hunter2-very-secret, b: hunter2-very-secret }`,
        ),
      ),
      201,
    );
    const dataOnly = `apiVersion: v1\nkind: Secret\nmetadata: { name: two-keys, namespace: ops }\ndata: { a: ${Buffer.from('hunter2-very-secret').toString('base64')} }`;
    assertOk(await run(h, apply(dataOnly)), 200);
    assertOk(await run(h, apply(dataOnly)), 200);
    const twoKeys = h.sandbox.store.get('v1', 'Secret', 'ops', 'two-keys') as Obj;
    assert.deepEqual(Object.keys(twoKeys.data), ['a']);
    const unchanged = await run(h, apply(dataOnly));
    assert.match(unchanged.message, /unchanged/);
    assert.equal(objects(unchanged)[0]!.data, undefined);
    const raw = h.gateway.rawBytes();
    for (const needle of [
      's3cr3t-demo',
      Buffer.from('s3cr3t-demo').toString('base64'),
      'hunter2-very-secret',
      Buffer.from('hunter2-very-secret').toString('base64'),
    ]) {
      assert.equal(raw.includes(needle), false, `${needle} must never be sent`);
    }
  });

  test('delete by name with each propagation policy waits until the object is gone', async () => {
    for (const [i, policy] of [PropagationPolicy.FOREGROUND, PropagationPolicy.BACKGROUND, PropagationPolicy.ORPHAN].entries()) {
      const name = `del-${i}`;
      assertOk(await run(h, apply(deploymentYaml(name, 'img:1'))), 201);
      await eventually(
        'its ReplicaSet',
        () => h.sandbox.store.list('apps/v1', 'ReplicaSet', 'ops').some((rs) => rs.metadata.name!.startsWith(`${name}-`)),
        { timeoutMs: 30_000 },
      );
      const r = await run(h, {
        case: 'delete',
        value: { kind: 'Deployment', namespace: 'ops', name, propagationPolicy: policy, gracePeriodSeconds: 0n } as never,
      });
      assertOk(r);
      assert.deepEqual(r.deleted, [`Deployment/ops/${name}`]);
      assert.equal(h.sandbox.store.get('apps/v1', 'Deployment', 'ops', name), undefined, 'gone when the result arrives');
      const replicaSets = h.sandbox.store.list('apps/v1', 'ReplicaSet', 'ops').filter((rs) => rs.metadata.name!.startsWith(`${name}-`));
      if (policy === PropagationPolicy.FOREGROUND) assert.equal(replicaSets.length, 0, 'foreground: dependents went first');
      if (policy === PropagationPolicy.ORPHAN) assert.equal(replicaSets.length, 1, 'orphan: the ReplicaSet stays');
    }
  });

  test('delete by label selector returns every deleted name; a selector matching nothing succeeds with none', async () => {
    for (const n of [1, 2, 3])
      h.sandbox.store.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `sel-${n}`, namespace: 'ops', labels: { batch: n < 3 ? 'x' : 'y' } },
      });
    const r = await run(h, {
      case: 'delete',
      value: { kind: 'ConfigMap', namespace: 'ops', labelSelector: 'batch=x', propagationPolicy: PropagationPolicy.BACKGROUND } as never,
    });
    assertOk(r, 200);
    assert.deepEqual([...r.deleted].sort(), ['ConfigMap/ops/sel-1', 'ConfigMap/ops/sel-2']);
    assert.ok(h.sandbox.store.get('v1', 'ConfigMap', 'ops', 'sel-3'));
    const none = await run(h, { case: 'delete', value: { kind: 'ConfigMap', namespace: 'ops', labelSelector: 'batch=none' } as never });
    assertOk(none, 200);
    assert.deepEqual(none.deleted, []);
  });

  test('failures are faithful: 404 missing object and kind, 422 and 400 from the server, InvalidManifest from the agent', async () => {
    const missing = await run(h, { case: 'get', value: { kind: 'ConfigMap', namespace: 'ops', name: 'nope' } as never });
    assert.deepEqual(
      [missing.success, missing.statusCode, missing.reason, missing.message],
      [false, 404, 'NotFound', 'configmaps "nope" not found'],
    );
    const deleteMissing = await run(h, { case: 'delete', value: { kind: 'ConfigMap', namespace: 'ops', name: 'nope' } as never });
    assert.deepEqual([deleteMissing.statusCode, deleteMissing.reason], [404, 'NotFound']);

    const invalid = await run(h, apply(`apiVersion: v1\nkind: ConfigMap\nmetadata: { name: Bad_Name, namespace: ops }`));
    assert.equal(invalid.success, false);
    assert.equal(invalid.statusCode, 422);
    assert.equal(invalid.reason, 'Invalid');
    assert.match(invalid.message, /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value/);

    const mismatch = await run(
      h,
      apply(deploymentYaml('bad-selector', 'img:1').replace('labels: { app: bad-selector }', 'labels: { app: other }')),
    );
    assert.equal(mismatch.statusCode, 422);
    assert.match(mismatch.message, /selector` does not match template `labels`/);

    const scaleNegative = await run(h, {
      case: 'scale',
      value: { kind: 'Deployment', namespace: 'ops', name: 'app', replicas: -1 } as never,
    });
    assert.equal(scaleNegative.statusCode, 422);

    const cases: Array<[string, number, string, RegExp]> = [
      ['', 400, 'InvalidManifest', /empty manifest/],
      ['---\n---\n', 400, 'InvalidManifest', /empty manifest/],
      ['just a string', 400, 'InvalidManifest', /document 1: not a Kubernetes object/],
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ok }\n---\nfoo: bar',
        400,
        'InvalidManifest',
        /document 2: not a Kubernetes object: apiVersion is missing/,
      ],
      ['apiVersion: v1\nkind: ConfigMap\nmetadata: {}', 400, 'InvalidManifest', /document 1: ConfigMap: metadata.name is missing/],
      ['key: [unclosed', 400, 'InvalidManifest', /document 1: cannot parse YAML/],
      [
        'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: ok-1 }\n---\napiVersion: nope.example.com/v1\nkind: Gadget\nmetadata: { name: g }',
        404,
        'NotFound',
        /document 2: the server doesn't have a resource type "Gadget"/,
      ],
    ];
    for (const [manifest, status, reason, message] of cases) {
      const r = await run(h, apply(manifest));
      assert.deepEqual([r.success, r.statusCode, r.reason], [false, status, reason], `${JSON.stringify(manifest)} → ${r.message}`);
      assert.match(r.message, message);
    }
    assert.equal(
      h.sandbox.store.get('v1', 'ConfigMap', 'default', 'ok-1'),
      undefined,
      'nothing applied when a later document has an unknown kind',
    );
    const noSpec = await run(h, { case: undefined });
    assert.deepEqual([noSpec.success, noSpec.statusCode, noSpec.reason], [false, 400, 'BadRequest']);
    const notServed = await run(h, { case: 'get', value: { kind: 'ConfigMap', name: 'x' } as never }, { account: 'elsewhere' });
    assert.deepEqual([notServed.success, notServed.reason], [false, 'AccountNotServed']);
  });

  test('the same operation id runs once: a duplicate while running is ignored, a later one gets the stored result', async () => {
    const generation = () => (h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app') as Obj).metadata.generation as number;
    const before = generation();
    const op = create(OperationSchema, {
      id: 'restart-once',
      account: 'sandbox',
      timeout: durationFromMs(30_000),
      spec: { case: 'rollout', value: { kind: 'Deployment', namespace: 'ops', name: 'app', action: RolloutAction.RESTART } as never },
    });
    h.gateway.sendOperation(op);
    h.gateway.sendOperation(op);
    const first = await h.gateway.waitForResult('restart-once');
    assertOk(first, 200);
    h.gateway.sendOperation(op);
    const second = await h.gateway.waitForResult('restart-once', 30_000, 1);
    assert.deepEqual(second.duration, first.duration, 'the stored result, not a new run');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(h.gateway.results().filter((r) => r.id === 'restart-once').length, 2);
    assert.equal(generation(), before + 1, 'the restart happened once');
    const line = h.logs.lines().find((l) => l.msg === 'operation done' && l.operationId === 'restart-once');
    assert.ok(line, 'one info line per operation');
    assert.deepEqual([line.account, line.type, line.statusCode, typeof line.ms], ['sandbox', 'rollout', 200, 'number']);
  });

  test('timeouts end with reason Timeout', async () => {
    h.sandbox.faults.pause();
    try {
      const r = await run(
        h,
        { case: 'get', value: { kind: 'ConfigMap', namespace: 'ops', name: 'app-config' } as never },
        { timeoutMs: 300 },
      );
      assert.deepEqual([r.success, r.reason], [false, 'Timeout']);
      assert.match(r.message, /timed out after 300 ms/);
      assert.ok(durationMs(r.duration!) >= 290);
    } finally {
      h.sandbox.faults.resume();
    }
  });

  test('after a reconnect: a redelivered id returns its stored result; an operation running at the drop reports on the next session', async () => {
    const done = await run(
      h,
      { case: 'get', value: { kind: 'ConfigMap', namespace: 'ops', name: 'app-config' } as never },
      { id: 'before-drop' },
    );
    assertOk(done, 200);
    h.sandbox.faults.pause();
    const streams = h.gateway.streams.length;
    h.gateway.sendOperation(
      create(OperationSchema, {
        id: 'in-flight',
        account: 'sandbox',
        timeout: durationFromMs(30_000),
        spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'ops', name: 'app', replicas: 4 } as never },
      }),
    );
    await eventually('in-flight running', () => h.agent.status().operations.running.some((o) => o.id === 'in-flight'));
    h.gateway.streams[streams - 1]!.drop();
    await eventually('a new session', () => h.gateway.streams.length > streams && h.agent.status().connected, { timeoutMs: 30_000 });
    h.sandbox.faults.resume();
    const late = await h.gateway.waitForResult('in-flight');
    assertOk(late, 200);
    assert.equal(late.streamIndex, streams, 'delivered on the next session');
    assert.equal((h.sandbox.store.get('apps/v1', 'Deployment', 'ops', 'app') as Obj).spec.replicas, 4);

    h.gateway.sendOperation(
      create(OperationSchema, {
        id: 'before-drop',
        account: 'sandbox',
        timeout: durationFromMs(30_000),
        spec: { case: 'get', value: { kind: 'ConfigMap', namespace: 'ops', name: 'app-config' } as never },
      }),
    );
    const again = await h.gateway.waitForResult('before-drop', 30_000, 1);
    assert.equal(again.streamIndex, streams);
    assert.deepEqual(again.duration, done.duration);
  });
});

describe('agent operations with a restricted account', () => {
  test('RBAC forbidden → 403 Forbidden with the server message', async () => {
    const h = await startHarness({ seed: 'demo', user: 'restricted', account: { kinds: ['Namespace'] } });
    try {
      await eventually('welcome', () => h.agent.status().connected, { timeoutMs: 30_000 });
      h.gateway.sendOperation(
        create(OperationSchema, {
          id: 'forbidden',
          account: 'sandbox',
          timeout: durationFromMs(30_000),
          spec: {
            case: 'apply',
            value: { manifests: 'apiVersion: v1\nkind: ConfigMap\nmetadata: { name: nope, namespace: demo }' } as never,
          },
        }),
      );
      const r = await h.gateway.waitForResult('forbidden');
      assert.deepEqual([r.success, r.statusCode, r.reason], [false, 403, 'Forbidden']);
      assert.match(r.message, /cannot create resource "configmaps"/);
      h.gateway.sendOperation(
        create(OperationSchema, {
          id: 'forbidden-secret',
          account: 'sandbox',
          spec: { case: 'get', value: { kind: 'Secret', namespace: 'demo', name: 'web-secret' } as never },
        }),
      );
      const secret = await h.gateway.waitForResult('forbidden-secret');
      assert.deepEqual([secret.statusCode, secret.reason], [403, 'Forbidden']);
    } finally {
      await h.close();
    }
  });
});
