/**
 * Conformance: the same strategic merge patches applied by this module and by the real kubectl
 * (`kubectl patch --local`, which runs k8s.io/apimachinery's strategicpatch against the typed schema) must agree.
 * Skipped when no kubectl binary is installed.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { applyStrategicMergePatch } from '../../../src/sandbox/patch/index.js';

const KUBECTL = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
const run = promisify(execFile);

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'web',
    labels: { app: 'web', tier: 'front' },
    finalizers: ['a', 'b'],
    ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'o', uid: 'u1' }],
  },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [
          {
            name: 'app',
            image: 'app:1',
            args: ['--a'],
            env: [
              { name: 'A', value: '1' },
              { name: 'B', value: '2' },
            ],
            ports: [{ containerPort: 80, name: 'http' }],
            volumeMounts: [{ name: 'v', mountPath: '/v' }],
          },
          { name: 'side', image: 's:1' },
        ],
        volumes: [{ name: 'v', emptyDir: {} }],
        tolerations: [{ key: 'k', operator: 'Exists' }],
        imagePullSecrets: [{ name: 'pull' }],
      },
    },
  },
};

const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name: 's' },
  spec: {
    selector: { app: 'web' },
    ports: [
      { name: 'http', port: 80, targetPort: 8080 },
      { name: 'https', port: 443 },
    ],
  },
};

const cronJob = {
  apiVersion: 'batch/v1',
  kind: 'CronJob',
  metadata: { name: 'c' },
  spec: {
    schedule: '* * * * *',
    jobTemplate: {
      spec: {
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              { name: 'j', image: 'j:1' },
              { name: 'k', image: 'k:1' },
            ],
          },
        },
      },
    },
  },
};

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p' },
  spec: {
    hostAliases: [{ ip: '10.0.0.1', hostnames: ['a'] }],
    topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 1, whenUnsatisfiable: 'ScheduleAnyway' }],
    initContainers: [{ name: 'init', image: 'i:1' }],
    containers: [{ name: 'c', image: 'c:1' }],
  },
  status: {
    phase: 'Running',
    conditions: [
      { type: 'Ready', status: 'False' },
      { type: 'Initialized', status: 'True' },
    ],
  },
};

const tpl = (spec: unknown) => ({ spec: { template: { spec } } });

const cases: [string, object, string, unknown][] = [
  ['add a container', deployment, 'apps/Deployment', tpl({ containers: [{ name: 'new', image: 'n' }] })],
  [
    'change one and add one',
    deployment,
    'apps/Deployment',
    tpl({
      containers: [
        { name: 'side', image: 's:2' },
        { name: 'z', image: 'z' },
      ],
    }),
  ],
  [
    'nested env, ports, mounts',
    deployment,
    'apps/Deployment',
    tpl({
      containers: [
        {
          name: 'app',
          env: [
            { name: 'C', value: '3' },
            { name: 'A', value: 'one' },
          ],
          ports: [{ containerPort: 443 }],
          volumeMounts: [{ mountPath: '/v', readOnly: true }],
        },
      ],
    }),
  ],
  ['delete an element', deployment, 'apps/Deployment', tpl({ containers: [{ name: 'app', $patch: 'delete' }] })],
  ['replace a list', deployment, 'apps/Deployment', tpl({ containers: [{ name: 'only', image: 'o' }, { $patch: 'replace' }] })],
  ['replace a map', deployment, 'apps/Deployment', { metadata: { labels: { $patch: 'replace', x: 'y' } } }],
  ['null deletes', deployment, 'apps/Deployment', { metadata: { labels: { tier: null } }, spec: { replicas: null } }],
  ['retainKeys on strategy', deployment, 'apps/Deployment', { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } }],
  [
    'retainKeys on a volume',
    deployment,
    'apps/Deployment',
    tpl({
      volumes: [{ $retainKeys: ['configMap', 'name'], name: 'v', configMap: { name: 'cm' } }],
    }),
  ],
  [
    'finalizers union and delete',
    deployment,
    'apps/Deployment',
    {
      metadata: { finalizers: ['c'], '$deleteFromPrimitiveList/finalizers': ['a'] },
    },
  ],
  [
    'setElementOrder',
    deployment,
    'apps/Deployment',
    tpl({
      '$setElementOrder/containers': [{ name: 'side' }, { name: 'n' }, { name: 'app' }],
      containers: [{ name: 'n', image: 'n' }],
    }),
  ],
  [
    'setElementOrder for env',
    deployment,
    'apps/Deployment',
    tpl({
      containers: [
        { name: 'app', '$setElementOrder/env': [{ name: 'B' }, { name: 'X' }, { name: 'A' }], env: [{ name: 'X', value: 'x' }] },
      ],
    }),
  ],
  [
    'atomic lists replace',
    deployment,
    'apps/Deployment',
    tpl({ tolerations: [{ key: 'z', operator: 'Exists' }], containers: [{ name: 'app', args: ['--b'] }] }),
  ],
  [
    'ownerReferences by uid',
    deployment,
    'apps/Deployment',
    { metadata: { ownerReferences: [{ uid: 'u2', apiVersion: 'v1', kind: 'Y', name: 'p' }] } },
  ],
  [
    'service ports by port',
    service,
    '/Service',
    {
      spec: {
        ports: [
          { port: 443, targetPort: 8443 },
          { port: 8080, name: 'alt' },
        ],
      },
    },
  ],
  [
    'cronjob template containers',
    cronJob,
    'batch/CronJob',
    {
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'k', image: 'k:2' }] } } } } },
    },
  ],
  ['delete a map', deployment, 'apps/Deployment', { spec: { strategy: { $patch: 'delete' } } }],
  [
    'setElementOrder for finalizers',
    deployment,
    'apps/Deployment',
    {
      metadata: { '$setElementOrder/finalizers': ['b', 'c', 'a'], finalizers: ['c'] },
    },
  ],
  [
    'pod spec lists and status conditions',
    pod,
    '/Pod',
    {
      spec: {
        hostAliases: [{ ip: '10.0.0.2', hostnames: ['b'] }],
        topologySpreadConstraints: [{ topologyKey: 'zone', maxSkew: 2, whenUnsatisfiable: 'DoNotSchedule' }],
        initContainers: [{ name: 'init', image: 'i:2' }],
      },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    },
  ],
  [
    'new list with directives inside',
    { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} },
    '/Pod',
    {
      spec: { containers: [{ name: 'a', image: 'a', env: [{ name: 'X', value: '1' }] }] },
    },
  ],
];

describe('strategic merge patch agrees with kubectl patch --local', { skip: KUBECTL ? false : 'kubectl not installed' }, () => {
  const dir = KUBECTL ? mkdtempSync(join(tmpdir(), 'smp-')) : '';
  let n = 0;
  for (const [name, target, kindKey, patch] of cases) {
    test(name, async () => {
      const file = join(dir, `obj-${n++}.json`);
      writeFileSync(file, JSON.stringify(target));
      const { stdout } = await run(
        KUBECTL!,
        ['patch', '--local', '-f', file, '--type', 'strategic', '-p', JSON.stringify(patch), '-o', 'json'],
        {
          env: { ...process.env, KUBECONFIG: join(dir, 'none') },
        },
      );
      const expected = JSON.parse(stdout);
      const actual = applyStrategicMergePatch(target, patch, kindKey);
      assert.deepEqual(actual, expected);
    });
  }
  test('cleanup', () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
});
