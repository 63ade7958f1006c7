/**
 * Conformance: the real kubectl binaries the machines ship, driven against the sandbox over TLS (kubectl sends
 * bearer tokens only over TLS). Each version works in its own namespace.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { eventually } from '../../testkit/eventually.js';

interface Version {
  label: string;
  bin: string;
  /** 1.27/1.28 validate against /openapi/v2 (protobuf), which the sandbox does not serve. */
  needsValidateFalse: boolean;
}

const SDK = '/usr/lib/google-cloud-sdk/bin';
const VERSIONS: Version[] = [
  { label: 'system kubectl', bin: '/usr/bin/kubectl', needsValidateFalse: false },
  { label: 'kubectl 1.27', bin: `${SDK}/kubectl.1.27`, needsValidateFalse: true },
  { label: 'kubectl 1.33', bin: `${SDK}/kubectl.1.33`, needsValidateFalse: false },
];

function manifest(namespace: string, image: string): string {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ${namespace}
  labels: {app: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: ${image}
        ports: [{name: http, containerPort: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: ${namespace}}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: web-config, namespace: ${namespace}}
data: {greeting: hello}
`;
}

let sandbox: Sandbox;

before(async () => {
  sandbox = await startSandbox({ tls: true, bookmarkIntervalMs: 500 });
});

after(async () => {
  await sandbox?.close();
});

function deployment(ns: string) {
  return sandbox.store.get('apps/v1', 'Deployment', ns, 'web');
}

for (const version of VERSIONS) {
  describe(version.label, { skip: existsSync(version.bin) ? false : `${version.bin} not installed` }, () => {
    const ns = `k-${version.label.replace(/[^a-z0-9]+/g, '-')}`.replace(/-+$/, '');
    let kubectl: Kubectl;
    const validate = version.needsValidateFalse ? ['--validate=false'] : [];

    before(async () => {
      kubectl = await createKubectl(version.bin, sandbox);
      sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
    });
    after(() => kubectl?.cleanup());

    test('apply -f (client-side) creates, get -o json reads back', async () => {
      const out = await kubectl.ok(['apply', '--validate=false', '-f', '-'], { input: manifest(ns, 'nginx:1.25') });
      assert.match(out, /deployment.apps\/web created/);
      assert.match(out, /service\/web created/);
      const d = JSON.parse(await kubectl.ok(['get', 'deployment', 'web', '-n', ns, '-o', 'json']));
      assert.equal(d.metadata.name, 'web');
      assert.equal(d.spec.replicas, 2);
      assert.ok(d.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']);
      // a second apply with a change is a strategic merge patch
      const again = await kubectl.ok(['apply', '--validate=false', '-f', '-'], { input: manifest(ns, 'nginx:1.26') });
      assert.match(again, /deployment.apps\/web configured/);
      assert.match(again, /configmap\/web-config unchanged/);
      assert.equal(
        (deployment(ns)!.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image,
        'nginx:1.26',
      );
    });

    test('apply --server-side updates and reports serverside-applied', async () => {
      const out = await kubectl.ok(['apply', '--server-side', '--force-conflicts', ...validate, '-f', '-'], {
        input: manifest(ns, 'nginx:1.27'),
      });
      assert.match(out, /deployment.apps\/web serverside-applied/);
      const d = deployment(ns)!;
      assert.equal(
        (d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image,
        'nginx:1.27',
      );
    });

    test('get -w sees add, modify and delete', async () => {
      const watch = kubectl.watch(['get', 'configmaps', '-n', ns]);
      try {
        await watch.waitFor((evs) => evs.some((e) => e.object.metadata.name === 'web-config'));
        sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'watched', namespace: ns }, data: { a: '1' } });
        const cm = sandbox.store.get('v1', 'ConfigMap', ns, 'watched')!;
        sandbox.store.update({ ...cm, data: { a: '2' } });
        sandbox.store.remove('v1', 'ConfigMap', ns, 'watched');
        await watch.waitFor((evs) => {
          const types = evs.filter((e) => e.object.metadata.name === 'watched').map((e) => e.type);
          return types.includes('ADDED') && types.includes('MODIFIED') && types.includes('DELETED');
        });
      } finally {
        watch.stop();
      }
    });

    test('scale, rollout restart, rollout status and rollout undo', async () => {
      assert.match(await kubectl.ok(['scale', 'deployment/web', '-n', ns, '--replicas=3']), /scaled/);
      await eventually(
        'three ready replicas',
        () => (deployment(ns)?.status as { readyReplicas?: number } | undefined)?.readyReplicas === 3,
        { timeoutMs: 30_000 },
      );
      // plain `get` prints the server's Table columns
      assert.match(
        await kubectl.ok(['get', 'deployment', 'web', '-n', ns]),
        /NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+3\/3\s+3\s+3\s/,
      );
      assert.match(await kubectl.ok(['get', 'pods', '-n', ns]), /web-\w+-\w+\s+1\/1\s+Running\s+0/);
      assert.match(await kubectl.ok(['rollout', 'restart', 'deployment/web', '-n', ns]), /restarted/);
      const restarted = deployment(ns)!.spec as { template: { metadata: { annotations?: Record<string, string> } } };
      assert.ok(restarted.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt']);
      assert.match(await kubectl.ok(['rollout', 'status', 'deployment/web', '-n', ns, '--timeout=20s']), /successfully rolled out/);
      assert.match(await kubectl.ok(['rollout', 'undo', 'deployment/web', '-n', ns]), /rolled back/);
      assert.match(await kubectl.ok(['rollout', 'status', 'deployment/web', '-n', ns, '--timeout=20s']), /successfully rolled out/);
      const undone = deployment(ns)!.spec as { template: { metadata: { annotations?: Record<string, string> } } };
      assert.equal(undone.template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'], undefined);
      const history = await kubectl.ok(['rollout', 'history', 'deployment/web', '-n', ns]);
      assert.match(history, /REVISION/);
    });

    test('logs of a pod of the deployment', async () => {
      const out = await kubectl.ok(['logs', 'deployment/web', '-n', ns]);
      assert.match(out, /\[web\] ready/);
    });

    test('api-resources lists built-in kinds with short names', async () => {
      const out = await kubectl.ok(['api-resources']);
      assert.match(out, /deployments\s+deploy\s+apps\/v1\s+true\s+Deployment/);
      assert.match(out, /configmaps\s+cm\s+v1\s+true\s+ConfigMap/);
    });

    test('auth can-i answers from RBAC (1.32+ send the review as protobuf)', async () => {
      assert.equal((await kubectl.run(['auth', 'can-i', 'delete', 'secrets', '-n', ns])).stdout.trim(), 'yes');
      const no = await kubectl.run(['--context', 'sandbox-restricted', 'auth', 'can-i', 'list', 'secrets', '-n', ns]);
      assert.equal(no.stdout.trim(), 'no');
      assert.equal(no.code, 1);
      assert.equal(
        (await kubectl.run(['--context', 'sandbox-restricted', 'auth', 'can-i', 'list', 'pods', '-n', ns])).stdout.trim(),
        'yes',
      );
    });

    test('the restricted context is refused forbidden kinds and allowed the rest', async () => {
      const denied = await kubectl.run(['--context', 'sandbox-restricted', 'get', 'secrets', '-n', ns]);
      assert.notEqual(denied.code, 0);
      assert.match(denied.stderr, /Forbidden.*secrets is forbidden: User "sandbox-restricted" cannot list resource "secrets"/);
      const sts = await kubectl.run(['--context', 'sandbox-restricted', 'get', 'statefulsets', '-n', ns]);
      assert.match(sts.stderr, /Forbidden/);
      const pods = await kubectl.ok(['--context', 'sandbox-restricted', 'get', 'pods', '-n', ns, '-o', 'json']);
      assert.ok(JSON.parse(pods).items.length >= 3);
    });

    test('delete waits for the object to go; garbage collection removes its pods', async () => {
      assert.match(await kubectl.ok(['delete', 'deployment', 'web', '-n', ns]), /deleted/);
      assert.equal(deployment(ns), undefined);
      await eventually('pods garbage-collected', () => sandbox.store.list('v1', 'Pod', ns).length === 0, { timeoutMs: 30_000 });
      assert.equal(sandbox.store.list('apps/v1', 'ReplicaSet', ns).length, 0);
    });

    test('statefulset rollout status, history and undo; job wait; events', async () => {
      const sts = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: ${ns}}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: ${ns}}
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {sandbox.outpost.dev/log: "SPINNAKER_PROPERTY_FOO=bar"}
    spec:
      restartPolicy: Never
      containers: [{name: main, image: busybox}]
`;
      await kubectl.ok(['apply', ...validate, '-f', '-'], { input: sts });
      assert.match(
        await kubectl.ok(['rollout', 'status', 'statefulset/db', '-n', ns, '--timeout=20s']),
        /roll(ing update|ed out| out complete)/,
      );
      await kubectl.ok(['set', 'image', 'statefulset/db', 'db=postgres:17', '-n', ns]);
      await kubectl.ok(['rollout', 'status', 'statefulset/db', '-n', ns, '--timeout=20s']);
      await eventually(
        'rolled to postgres:17',
        () =>
          sandbox.store
            .list('v1', 'Pod', ns)
            .filter(
              (p) =>
                p.metadata.labels?.app === 'db' && (p.spec as { containers: { image: string }[] }).containers[0]!.image === 'postgres:17',
            ).length === 2,
        { timeoutMs: 30_000 },
      );
      assert.match(await kubectl.ok(['rollout', 'history', 'statefulset/db', '-n', ns]), /REVISION[\s\S]*1[\s\S]*2/);
      assert.match(await kubectl.ok(['rollout', 'undo', 'statefulset/db', '-n', ns]), /rolled back/);
      const image = () =>
        (sandbox.store.get('apps/v1', 'StatefulSet', ns, 'db')!.spec as { template: { spec: { containers: { image: string }[] } } })
          .template.spec.containers[0]!.image;
      assert.equal(image(), 'postgres:16');
      assert.match(await kubectl.ok(['wait', '--for=condition=complete', 'job/once', '-n', ns, '--timeout=20s']), /condition met/);
      assert.match(await kubectl.ok(['logs', 'job/once', '-n', ns]), /SPINNAKER_PROPERTY_FOO=bar/);
      const events = JSON.parse(await kubectl.ok(['get', 'events', '-n', ns, '-o', 'json'])).items as {
        reason: string;
        involvedObject: { kind: string };
      }[];
      assert.ok(events.some((e) => e.reason === 'SuccessfulCreate' && e.involvedObject.kind === 'StatefulSet'));
      assert.ok(events.some((e) => e.reason === 'Completed' && e.involvedObject.kind === 'Job'));
      // the server's Tables for the new kinds
      assert.match(
        await kubectl.ok(['get', 'events', '-n', ns]),
        /Normal\s+SuccessfulCreate\s+statefulset\/db\s+create Pod db-0 in StatefulSet db successful/,
      );
      assert.match(await kubectl.ok(['get', 'jobs', '-n', ns]), /once\s+Complete\s+1\/1\s/);
      assert.match(await kubectl.ok(['get', 'pods', '-n', ns, '-l', 'job-name=once']), /once-\w+\s+0\/1\s+Completed\s+0/);
      assert.match(await kubectl.ok(['get', 'statefulsets', '-n', ns]), /db\s+2\/2\s/);
    });
  });
}

describe('custom resources through kubectl', { skip: existsSync('/usr/bin/kubectl') ? false : 'no kubectl' }, () => {
  test('a CRD applied with kubectl appears in api-resources and its objects work', async () => {
    const kubectl = await createKubectl('/usr/bin/kubectl', sandbox);
    try {
      await kubectl.ok(['apply', '--validate=false', '-f', '-'], {
        input: `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
      });
      const resources = await kubectl.ok(['api-resources', '--api-group=example.com']);
      assert.match(resources, /widgets\s+wd\s+example.com\/v1\s+true\s+Widget/);
      await kubectl.ok(['apply', '--validate=false', '-f', '-'], {
        input: 'apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\nspec: {size: 3}\n',
      });
      const w = JSON.parse(await kubectl.ok(['get', 'wd', 'w1', '-o', 'json']));
      assert.equal(w.spec.size, 3);
      assert.equal(w.metadata.generation, 1);
    } finally {
      kubectl.cleanup();
    }
  });
});
