/**
 * Workload health from the status model: each ManifestStatus case maps to one health (the mapping's own cases are in
 * test/spinnaker/manifest-status.test.ts, "healthOf"), real object shapes per kind give the expected word and
 * reason, kinds without rules get none, and the slim object SummarizeHealth reads gives the same health as the
 * whole object.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { healthOf, statusInputOf, workloadHealth } from '../../src/gateway/status/workload-health.js';

type Obj = Record<string, unknown>;

const template = {
  metadata: { labels: { app: 'web' } },
  spec: { containers: [{ name: 'web', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] },
};

function deployment(status: Obj | undefined, over: Obj = {}): Obj {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'demo', generation: 2, uid: 'u-1' },
    spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template, ...over },
    ...(status ? { status } : {}),
  };
}

const rolledOut = {
  observedGeneration: 2,
  replicas: 3,
  updatedReplicas: 3,
  readyReplicas: 3,
  availableReplicas: 3,
  conditions: [
    { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
    { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
  ],
};

const pod = (status: Obj | undefined): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'demo', ownerReferences: [{ kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1' }] },
  spec: { containers: template.spec.containers, nodeName: 'sandbox' },
  ...(status ? { status } : {}),
});

const cases: [string, Obj, string, string][] = [
  ['a rolled-out Deployment', deployment(rolledOut), 'Healthy', 'Stable'],
  [
    'a Deployment mid-rollout',
    deployment({ ...rolledOut, updatedReplicas: 1, replicas: 4 }),
    'Progressing',
    'Waiting for all replicas to be updated',
  ],
  [
    'a Deployment whose controller has not seen the new spec',
    deployment({ ...rolledOut, observedGeneration: 1 }),
    'Progressing',
    'Waiting for status generation to match updated object generation',
  ],
  [
    'a Deployment past its progress deadline',
    deployment({
      ...rolledOut,
      updatedReplicas: 1,
      conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'timed out' }],
    }),
    'Degraded',
    'Deployment exceeded its progress deadline',
  ],
  [
    'a paused Deployment',
    deployment(
      {
        ...rolledOut,
        conditions: [{ type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' }],
      },
      { paused: true },
    ),
    'Paused',
    'Deployment is paused',
  ],
  ['a Deployment without status', deployment(undefined), 'Unknown', 'No status reported yet'],
  [
    'a Deployment at extensions/v1beta1',
    { ...deployment(rolledOut), apiVersion: 'extensions/v1beta1' },
    'Degraded',
    'No deployment is supported at api version extensions/v1beta1',
  ],
  ['a running Pod', pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] }), 'Healthy', 'Stable'],
  ['a pending Pod', pod({ phase: 'Pending' }), 'Progressing', 'Pod is pending'],
  [
    'a running Pod whose container never becomes ready (Clouddriver: the Pod is Down)',
    pod({
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [web]' }],
      containerStatuses: [{ name: 'web', ready: false, restartCount: 0, state: { running: { startedAt: '2026-01-01T00:00:00Z' } } }],
    }),
    'Progressing',
    'Containers not ready: web',
  ],
  [
    'a running Pod in a crash loop',
    pod({
      phase: 'Running',
      containerStatuses: [
        { name: 'web', ready: false, restartCount: 7, state: { waiting: { reason: 'CrashLoopBackOff' } } },
        { name: 'side', ready: true, restartCount: 0, state: { running: {} } },
      ],
    }),
    'Progressing',
    'Containers not ready: web (CrashLoopBackOff)',
  ],
  [
    'a running Pod not Ready without container statuses',
    pod({ phase: 'Running', conditions: [{ type: 'Ready', status: 'False', message: 'readiness gate not met' }] }),
    'Progressing',
    'readiness gate not met',
  ],
  [
    'a completed Pod (its containers are terminated, not ready)',
    pod({
      phase: 'Succeeded',
      conditions: [{ type: 'Ready', status: 'False', reason: 'PodCompleted' }],
      containerStatuses: [{ name: 'web', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
    }),
    'Healthy',
    'Stable',
  ],
  [
    'a ReplicaSet short of ready pods',
    {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'web-abc', generation: 1 },
      spec: { replicas: 2, template },
      status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 1, availableReplicas: 1, observedGeneration: 1 },
    },
    'Progressing',
    'Waiting for all replicas to be ready',
  ],
  [
    'a failed Job',
    {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'migrate' },
      spec: { completions: 1, template },
      status: {
        failed: 6,
        conditions: [
          { type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit' },
        ],
      },
    },
    'Degraded',
    'Job has reached the specified backoff limit',
  ],
  [
    'a StatefulSet mid partitioned rollout',
    {
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'db', generation: 3 },
      spec: { replicas: 3, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, template },
      status: { observedGeneration: 3, replicas: 3, readyReplicas: 3, currentReplicas: 3, updatedReplicas: 1 },
    },
    'Progressing',
    'Waiting for partitioned roll out to finish',
  ],
];

describe('workload health', () => {
  for (const [name, object, health, reason] of cases) {
    test(name, () => assert.deepEqual(workloadHealth(object), { health, reason }));
  }

  test('kinds without status rules have no health, not a made-up Healthy', () => {
    assert.equal(workloadHealth({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} }), undefined);
    assert.equal(workloadHealth({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: {} }), undefined);
    assert.equal(workloadHealth({ apiVersion: 'example.com/v1', kind: 'Deployment', metadata: { name: 'x' } }), undefined);
    assert.equal(workloadHealth({}), undefined);
  });

  test('stable but not available is Degraded (no rule produces it today; the mapping is explicit)', () => {
    const status = {
      stable: { state: true, message: null },
      paused: { state: false, message: null },
      available: { state: false, message: 'Endpoints gone' },
      failed: { state: false, message: null },
    };
    assert.deepEqual(healthOf(status), { health: 'Degraded', reason: 'Endpoints gone' });
  });

  test('the slim object SummarizeHealth reads gives the same health as the whole object, and drops the templates', () => {
    for (const [name, object] of cases) {
      const slim = statusInputOf(object);
      assert.deepEqual(workloadHealth(slim), workloadHealth(object), name);
      assert.equal(JSON.stringify(slim).includes('nginx'), false, `${name}: the pod template is left out`);
    }
  });
});
