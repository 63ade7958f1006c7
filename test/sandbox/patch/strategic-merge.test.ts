import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, applyStrategicMergePatch } from '../../../src/sandbox/patch/index.js';

const deployment = () => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    labels: { app: 'web' },
    finalizers: ['a', 'b'],
    ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o1', uid: 'u1' }],
  },
  spec: {
    replicas: 1,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app:1',
            args: ['--a', '--b'],
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
            volumeMounts: [{ name: 'data', mountPath: '/data' }],
          },
          { name: 'sidecar', image: 'side:1' },
        ],
        volumes: [{ name: 'data', emptyDir: {} }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
      },
    },
  },
});

type Any = Record<string, any>;
const smp = (target: object, patch: unknown, kindKey: string): Any => applyStrategicMergePatch(target, patch, kindKey);
const containers = (o: Any) => o.spec.template.spec.containers as Any[];

describe('strategic merge patch: merge keys', () => {
  test('containers merge by name; changed fields update in place; input untouched', () => {
    const live = deployment();
    const out = smp(live, { spec: { template: { spec: { containers: [{ name: 'app', image: 'app:2' }] } } } }, 'apps/Deployment');
    assert.deepEqual(
      containers(out).map((c) => [c.name, c.image]),
      [
        ['app', 'app:2'],
        ['sidecar', 'side:1'],
      ],
    );
    assert.deepEqual(containers(out)[0].env, deployment().spec.template.spec.containers[0].env);
    assert.deepEqual(live, deployment());
  });

  test('a new element is added and ordered as upstream (patch items before server-only items)', () => {
    const out = smp(live(), { spec: { template: { spec: { containers: [{ name: 'new', image: 'n:1' }] } } } }, 'apps/Deployment');
    assert.deepEqual(
      containers(out).map((c) => c.name),
      ['new', 'app', 'sidecar'],
    );
    function live() {
      return deployment();
    }
  });

  test('live order is kept between patched and server-only items', () => {
    const out = smp(
      deployment(),
      {
        spec: {
          template: {
            spec: {
              containers: [
                { name: 'sidecar', image: 's:2' },
                { name: 'x', image: 'x' },
              ],
            },
          },
        },
      },
      'apps/Deployment',
    );
    assert.deepEqual(
      containers(out).map((c) => c.name),
      ['app', 'sidecar', 'x'],
    );
  });

  test('env by name, ports by containerPort, volumeMounts by mountPath, volumes by name', () => {
    const out = smp(
      deployment(),
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: 'app',
                  env: [{ name: 'B', value: 'two' }],
                  ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 443 }],
                  volumeMounts: [{ mountPath: '/data', readOnly: true }],
                },
              ],
              volumes: [{ name: 'cache', emptyDir: {} }],
            },
          },
        },
      },
      'apps/Deployment',
    );
    const app = containers(out)[0];
    assert.deepEqual(app.env, [
      { name: 'A', value: '1' },
      { name: 'B', value: 'two' },
    ]);
    assert.deepEqual(app.ports, [{ containerPort: 80, name: 'http', protocol: 'TCP' }, { containerPort: 443 }]);
    assert.deepEqual(app.volumeMounts, [{ name: 'data', mountPath: '/data', readOnly: true }]);
    assert.deepEqual(
      out.spec.template.spec.volumes.map((v: Any) => v.name),
      ['cache', 'data'],
    );
  });

  test('lists without a merge strategy replace (args, tolerations)', () => {
    const out = smp(
      deployment(),
      { spec: { template: { spec: { tolerations: [{ key: 'z', operator: 'Exists' }], containers: [{ name: 'app', args: ['--c'] }] } } } },
      'apps/Deployment',
    );
    assert.deepEqual(out.spec.template.spec.tolerations, [{ key: 'z', operator: 'Exists' }]);
    assert.deepEqual(containers(out)[0].args, ['--c']);
  });

  test('finalizers merge as a set; ownerReferences merge by uid', () => {
    const out = smp(
      deployment(),
      {
        metadata: {
          finalizers: ['b', 'c'],
          ownerReferences: [
            { uid: 'u1', controller: true },
            { apiVersion: 'v1', kind: 'Y', name: 'o2', uid: 'u2' },
          ],
        },
      },
      'apps/Deployment',
    );
    assert.deepEqual(out.metadata.finalizers, ['a', 'b', 'c']);
    assert.deepEqual(out.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'X', name: 'o1', uid: 'u1', controller: true },
      { apiVersion: 'v1', kind: 'Y', name: 'o2', uid: 'u2' },
    ]);
  });

  test('Pod, Service, CronJob and StatefulSet use their own paths and keys', () => {
    const pod = {
      kind: 'Pod',
      spec: {
        containers: [
          { name: 'a', image: '1' },
          { name: 'b', image: '1' },
        ],
      },
    };
    assert.deepEqual((smp(pod, { spec: { containers: [{ name: 'b', image: '2' }] } }, '/Pod') as Any).spec.containers, [
      { name: 'a', image: '1' },
      { name: 'b', image: '2' },
    ]);
    const svc = { kind: 'Service', spec: { ports: [{ port: 80, targetPort: 8080 }, { port: 443 }] } };
    assert.deepEqual((smp(svc, { spec: { ports: [{ port: 80, targetPort: 9090 }] } }, '/Service') as Any).spec.ports, [
      { port: 80, targetPort: 9090 },
      { port: 443 },
    ]);
    const cron = {
      kind: 'CronJob',
      spec: {
        jobTemplate: {
          spec: {
            template: {
              spec: {
                containers: [
                  { name: 'j', image: '1' },
                  { name: 'k', image: '1' },
                ],
              },
            },
          },
        },
      },
    };
    const cronOut = smp(
      cron,
      { spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'k', image: '2' }] } } } } } },
      'batch/CronJob',
    ) as Any;
    assert.deepEqual(
      cronOut.spec.jobTemplate.spec.template.spec.containers.map((c: Any) => c.image),
      ['1', '2'],
    );
    const sts = { kind: 'StatefulSet', spec: { template: { spec: { initContainers: [{ name: 'i', image: '1' }] } } } };
    const stsOut = smp(
      sts,
      { spec: { template: { spec: { initContainers: [{ name: 'i', image: '2' }] } } } },
      'apps/v1/StatefulSet',
    ) as Any;
    assert.deepEqual(stsOut.spec.template.spec.initContainers, [{ name: 'i', image: '2' }]);
  });

  test('custom resources replace lists (merge-patch semantics)', () => {
    const cr = { kind: 'Widget', metadata: { finalizers: ['a'] }, spec: { items: [{ name: 'a', v: 1 }, { name: 'b' }] } };
    const out = smp(cr, { metadata: { finalizers: ['b'] }, spec: { items: [{ name: 'a', v: 2 }] } }, 'example.com/Widget') as Any;
    assert.deepEqual(out.spec.items, [{ name: 'a', v: 2 }]);
    assert.deepEqual(out.metadata.finalizers, ['b']);
  });

  test('null deletes a field; null for an absent field is ignored', () => {
    const out = smp(deployment(), { metadata: { labels: { app: null, missing: null } }, spec: { strategy: null } }, 'apps/Deployment');
    assert.deepEqual(out.metadata.labels, {});
    assert.equal('strategy' in out.spec, false);
  });
});

describe('strategic merge patch: directives', () => {
  test('$patch: delete removes a list element by merge key', () => {
    const out = smp(
      deployment(),
      { spec: { template: { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } } } },
      'apps/Deployment',
    );
    assert.deepEqual(
      containers(out).map((c) => c.name),
      ['app'],
    );
  });

  test('$patch: replace in a list replaces the whole list', () => {
    const out = smp(
      deployment(),
      { spec: { template: { spec: { containers: [{ name: 'only', image: 'o' }, { $patch: 'replace' }] } } } },
      'apps/Deployment',
    );
    assert.deepEqual(containers(out), [{ name: 'only', image: 'o' }]);
  });

  test('$patch: replace on a map replaces it; $patch: delete empties it (as upstream); $patch: merge merges', () => {
    const replaced = smp(deployment(), { metadata: { labels: { $patch: 'replace', tier: 'x' } } }, 'apps/Deployment');
    assert.deepEqual(replaced.metadata.labels, { tier: 'x' });
    const deleted = smp(deployment(), { spec: { strategy: { $patch: 'delete' } } }, 'apps/Deployment');
    assert.deepEqual(deleted.spec.strategy, {});
    const merged = smp(deployment(), { metadata: { labels: { $patch: 'merge', tier: 'x' } } }, 'apps/Deployment');
    assert.deepEqual(merged.metadata.labels, { app: 'web', tier: 'x' });
  });

  test('$retainKeys clears fields not listed (RollingUpdate → Recreate)', () => {
    const out = smp(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }, 'apps/Deployment');
    assert.deepEqual(out.spec.strategy, { type: 'Recreate' });
  });

  test('$retainKeys must list every field the patch sets', () => {
    assert.throws(
      () => smp(deployment(), { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate', rollingUpdate: {} } } }, 'apps/Deployment'),
      (e: unknown) => e instanceof PatchError && e.status === 400 && /retainKeys/.test(e.message),
    );
  });

  test('$deleteFromPrimitiveList removes primitive list members', () => {
    const out = smp(deployment(), { metadata: { '$deleteFromPrimitiveList/finalizers': ['a'] } }, 'apps/Deployment');
    assert.deepEqual(out.metadata.finalizers, ['b']);
    const both = smp(
      deployment(),
      { metadata: { finalizers: ['z'], '$deleteFromPrimitiveList/finalizers': ['a', 'b'] } },
      'apps/Deployment',
    );
    assert.deepEqual(both.metadata.finalizers, ['z']);
  });

  test('$setElementOrder orders a merged list (what kubectl apply sends)', () => {
    const out = smp(
      deployment(),
      {
        spec: {
          template: {
            spec: {
              '$setElementOrder/containers': [{ name: 'sidecar' }, { name: 'new' }, { name: 'app' }],
              containers: [{ name: 'new', image: 'n' }],
            },
          },
        },
      },
      'apps/Deployment',
    );
    assert.deepEqual(
      containers(out).map((c) => c.name),
      ['sidecar', 'new', 'app'],
    );
    const env = smp(
      deployment(),
      {
        spec: {
          template: {
            spec: {
              containers: [{ name: 'app', '$setElementOrder/env': [{ name: 'B' }, { name: 'A' }] }],
            },
          },
        },
      },
      'apps/Deployment',
    );
    assert.deepEqual(
      containers(env)[0].env.map((e: Any) => e.name),
      ['B', 'A'],
    );
  });

  test('$setElementOrder for primitives', () => {
    const out = smp(deployment(), { metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'], finalizers: ['c'] } }, 'apps/Deployment');
    assert.deepEqual(out.metadata.finalizers, ['b', 'c', 'a']);
  });

  test('$setElementOrder that disagrees with the patch list is 400', () => {
    assert.throws(
      () =>
        smp(
          deployment(),
          { spec: { template: { spec: { '$setElementOrder/containers': [{ name: 'app' }], containers: [{ name: 'new' }] } } } },
          'apps/Deployment',
        ),
      (e: unknown) => e instanceof PatchError && e.status === 400,
    );
  });

  test('directives inside newly added values are processed, not stored', () => {
    const out = smp(
      { kind: 'Deployment', spec: {} },
      { spec: { template: { metadata: { labels: { $patch: 'replace', a: 'b' } } } } },
      'apps/Deployment',
    );
    assert.deepEqual(out.spec, { template: { metadata: { labels: { a: 'b' } } } });
  });
});

describe('strategic merge patch: errors', () => {
  const cases: [string, unknown][] = [
    ['patch not an object', [1]],
    ['unknown $patch', { metadata: { $patch: 'explode' } }],
    ['element without merge key', { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }],
    ['delete without merge key', { spec: { template: { spec: { containers: [{ $patch: 'delete' }] } } } }],
    ['$patch: merge in a list', { spec: { template: { spec: { containers: [{ $patch: 'merge' }] } } } }],
    ['$retainKeys not a list', { spec: { strategy: { $retainKeys: 'type' } } }],
    ['$deleteFromPrimitiveList not a list', { metadata: { '$deleteFromPrimitiveList/finalizers': 'a' } }],
    ['mixed element types', { metadata: { finalizers: [{ x: 1 }] } }],
  ];
  for (const [name, patch] of cases) {
    test(`${name} is 400 and changes nothing`, () => {
      const live = deployment();
      assert.throws(
        () => smp(live, patch, 'apps/Deployment'),
        (e: unknown) => e instanceof PatchError && e.status === 400,
      );
      assert.deepEqual(live, deployment());
    });
  }
});
