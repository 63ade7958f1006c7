/**
 * Clouddriver's status rules per kind, one fixture per rule and message, and the health summary derived from them.
 *
 * Differences from the contract (the Clouddriver handler sources, HEAD 2f5e98f, win):
 * - "No status" also sets available.message "No availability reported" (Manifest.Status.noneReported).
 * - ReplicaSet, StatefulSet and DaemonSet, not only Deployment, are read at apps/v1 only; Clouddriver throws for
 *   other versions (KubernetesReplicaSetHandler, KubernetesStatefulSetHandler, KubernetesDaemonSetHandler). Outpost
 *   answers unstable + failed with Clouddriver's exception text (UnsupportedVersionException:
 *   "No deployment is supported at api version extensions/v1beta1") instead of a 500 that makes Orca poll 30 min.
 * - Deployment condition types and reasons are compared case-insensitively, and the paused check matches a
 *   DeploymentPaused reason on any condition type (KubernetesDeploymentHandler).
 * - StatefulSet: the partition step runs whenever rollingUpdate and status.updatedReplicas are present, and answers
 *   stable "Partitioned roll out complete" also when the partition or status.replicas is absent; the last check's
 *   message is "Waiting for the updated revision to match the current revision"; the "scheduled" message is
 *   "Waiting for all updated replicas to be scheduled" (KubernetesStatefulSetHandler).
 * - DaemonSet messages: "Waiting for all replicas to be scheduled", "...updated replicas to be scheduled",
 *   "...replicas to be available", "...replicas to be ready" (KubernetesDaemonSetHandler).
 * - Pod: any phase Clouddriver does not recognise (including other case, e.g. "running") is "Pod phase is unknown"
 *   (KubernetesPodHandler.PodPhase.fromString).
 * - Job: a failed Job keeps stable=true (only failed is set); Job types/statuses compare case-insensitively
 *   (KubernetesJobHandler).
 * - CronJob is not "always default": no status → unstable "No status reported yet" (KubernetesCronJobHandler).
 * - HorizontalPodAutoscaler has rules: "Waiting for HPA to complete a scale up|down, current: C desired: D"
 *   (KubernetesHorizontalPodAutoscalerHandler).
 * - Where Clouddriver would crash on a missing field the API server always fills (StatefulSet/DaemonSet
 *   updateStrategy, StatefulSet revisions), Outpost assumes the API server's default (RollingUpdate) or compares the
 *   absent values, rather than failing.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ManifestStatus, manifestStatus } from '../../src/gateway/status/manifest-status.js';
import { healthOf } from '../../src/gateway/status/workload-health.js';

type Obj = Record<string, unknown>;

/** An expected status, written compactly: only the conditions that differ from the default. */
interface Expect {
  stable?: [boolean, string | null];
  paused?: [boolean, string | null];
  available?: [boolean, string | null];
  failed?: [boolean, string | null];
}

function expected(e: Expect): ManifestStatus {
  const c = (pair: [boolean, string | null] | undefined, state: boolean) =>
    pair ? { state: pair[0], message: pair[1] } : { state, message: null };
  return { stable: c(e.stable, true), paused: c(e.paused, false), available: c(e.available, true), failed: c(e.failed, false) };
}

const DEFAULT: Expect = {};
const NO_STATUS: Expect = { stable: [false, 'No status reported yet'], available: [false, 'No availability reported'] };
const OLD_GEN: Expect = { stable: [false, 'Waiting for status generation to match updated object generation'] };
const unstable = (message: string): Expect => ({ stable: [false, message] });
const unavailable = (message: string): Expect => ({ stable: [false, message], available: [false, message] });

function run(cases: [string, Obj, Expect][]): void {
  for (const [name, object, want] of cases) {
    test(name, () => assert.deepEqual(manifestStatus(object), expected(want)));
  }
}

// ---------------------------------------------------------------- Deployment
const deployment = (spec: Obj, status: Obj | undefined, apiVersion = 'apps/v1', generation = 2): Obj => ({
  apiVersion,
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'prod', generation },
  spec: { replicas: 3, ...spec },
  ...(status === undefined ? {} : { status }),
});
const deployReady = { observedGeneration: 2, replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 };
const pausedCondition = { type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused', message: 'Deployment is paused' };
const unavailableCondition = {
  type: 'Available',
  status: 'False',
  reason: 'MinimumReplicasUnavailable',
  message: 'Deployment does not have minimum availability.',
};
const deadlineCondition = {
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'ReplicaSet "web-1" has timed out progressing.',
};

describe('Deployment status', () => {
  run([
    ['no status', deployment({}, undefined), NO_STATUS],
    ['status: null counts as no status', deployment({}, null as unknown as Obj), NO_STATUS],
    ['observedGeneration absent', deployment({}, { ...deployReady, observedGeneration: undefined }), OLD_GEN],
    ['observedGeneration older', deployment({}, { ...deployReady, observedGeneration: 1 }), OLD_GEN],
    ['no metadata.generation never matches', { ...deployment({}, deployReady), metadata: { name: 'web' } }, OLD_GEN],
    [
      'old generation wins over every condition',
      deployment({}, { observedGeneration: 1, conditions: [deadlineCondition, pausedCondition] }),
      OLD_GEN,
    ],
    ['all replicas updated, available, ready', deployment({}, deployReady), DEFAULT],
    ['updated < desired', deployment({}, { ...deployReady, updatedReplicas: 2 }), unstable('Waiting for all replicas to be updated')],
    ['replicas > updated', deployment({}, { ...deployReady, replicas: 4 }), unstable('Waiting for old replicas to finish termination')],
    ['available < desired', deployment({}, { ...deployReady, availableReplicas: 2 }), unstable('Waiting for all replicas to be available')],
    ['ready < desired', deployment({}, { ...deployReady, readyReplicas: 2 }), unstable('Waiting for all replicas to be ready')],
    ['absent counts are 0', deployment({}, { observedGeneration: 2 }), unstable('Waiting for all replicas to be updated')],
    ['spec.replicas absent is 0 desired', deployment({ replicas: undefined }, { observedGeneration: 2 }), DEFAULT],
    [
      'paused alone stays stable',
      deployment({}, { ...deployReady, conditions: [pausedCondition] }),
      { paused: [true, 'Deployment is paused'] },
    ],
    [
      'paused matches the reason case-insensitively on any condition type',
      deployment({}, { ...deployReady, conditions: [{ type: 'Whatever', status: 'True', reason: 'deploymentpaused' }] }),
      { paused: [true, null] },
    ],
    [
      'Available=False: unstable and unavailable with its message',
      deployment({}, { ...deployReady, conditions: [unavailableCondition] }),
      unavailable('Deployment does not have minimum availability.'),
    ],
    ['Available=True is fine', deployment({}, { ...deployReady, conditions: [{ ...unavailableCondition, status: 'True' }] }), DEFAULT],
    [
      'ProgressDeadlineExceeded: failed with a fixed message, stable untouched',
      deployment({}, { ...deployReady, conditions: [deadlineCondition] }),
      { failed: [true, 'Deployment exceeded its progress deadline'] },
    ],
    [
      'ProgressDeadlineExceeded on another type is not failed',
      deployment({}, { ...deployReady, conditions: [{ ...deadlineCondition, type: 'Available', status: 'True' }] }),
      DEFAULT,
    ],
    [
      'checks accumulate; the replica message replaces the unavailable one on stable',
      deployment({}, { ...deployReady, readyReplicas: 1, conditions: [pausedCondition, unavailableCondition, deadlineCondition] }),
      {
        paused: [true, 'Deployment is paused'],
        stable: [false, 'Waiting for all replicas to be ready'],
        available: [false, 'Deployment does not have minimum availability.'],
        failed: [true, 'Deployment exceeded its progress deadline'],
      },
    ],
    [
      'unavailable + failed without replica shortfall',
      deployment({}, { ...deployReady, conditions: [unavailableCondition, deadlineCondition] }),
      {
        stable: [false, 'Deployment does not have minimum availability.'],
        available: [false, 'Deployment does not have minimum availability.'],
        failed: [true, 'Deployment exceeded its progress deadline'],
      },
    ],
    [
      'apiVersion other than apps/v1 fails clearly',
      deployment({}, deployReady, 'extensions/v1beta1'),
      {
        stable: [false, 'No deployment is supported at api version extensions/v1beta1'],
        failed: [true, 'No deployment is supported at api version extensions/v1beta1'],
      },
    ],
    ['apiVersion compares case-insensitively', deployment({}, deployReady, 'Apps/V1'), DEFAULT],
    ['a Deployment kind in a custom group has no rules', deployment({}, undefined, 'example.com/v1'), DEFAULT],
  ]);
});

// ---------------------------------------------------------------- ReplicaSet
const replicaSet = (status: Obj | undefined, apiVersion = 'apps/v1'): Obj => ({
  apiVersion,
  kind: 'ReplicaSet',
  metadata: { name: 'web-v001', generation: 1 },
  spec: { replicas: 2 },
  ...(status === undefined ? {} : { status }),
});
const rsReady = { observedGeneration: 1, replicas: 2, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

describe('ReplicaSet status', () => {
  run([
    ['no status', replicaSet(undefined), NO_STATUS],
    ['all counts met', replicaSet(rsReady), DEFAULT],
    [
      'fully-labeled short',
      replicaSet({ ...rsReady, fullyLabeledReplicas: 1 }),
      unavailable('Waiting for all replicas to be fully-labeled'),
    ],
    ['ready short', replicaSet({ ...rsReady, readyReplicas: 1 }), unavailable('Waiting for all replicas to be ready')],
    ['available short', replicaSet({ ...rsReady, availableReplicas: 1 }), unavailable('Waiting for all replicas to be available')],
    [
      'counts before generation',
      replicaSet({ ...rsReady, observedGeneration: 0, readyReplicas: 0 }),
      unavailable('Waiting for all replicas to be ready'),
    ],
    [
      'old generation last',
      replicaSet({ ...rsReady, observedGeneration: 0 }),
      unstable('Waiting for replicaset spec update to be observed'),
    ],
    [
      'other apiVersion fails clearly',
      replicaSet(rsReady, 'extensions/v1beta1'),
      {
        stable: [false, 'No replicaSet is supported at api version extensions/v1beta1'],
        failed: [true, 'No replicaSet is supported at api version extensions/v1beta1'],
      },
    ],
  ]);
});

// ---------------------------------------------------------------- StatefulSet
const statefulSet = (strategy: Obj | undefined, status: Obj | undefined, apiVersion = 'apps/v1'): Obj => ({
  apiVersion,
  kind: 'StatefulSet',
  metadata: { name: 'db', generation: 5 },
  spec: { replicas: 3, ...(strategy === undefined ? {} : { updateStrategy: strategy }) },
  ...(status === undefined ? {} : { status }),
});
const ssReady = {
  observedGeneration: 5,
  replicas: 3,
  readyReplicas: 3,
  currentReplicas: 3,
  currentRevision: 'db-1',
  updateRevision: 'db-1',
};
const rolling = { type: 'RollingUpdate' };

describe('StatefulSet status', () => {
  run([
    ['OnDelete is stable even without status', statefulSet({ type: 'OnDelete' }, undefined), DEFAULT],
    ['OnDelete is stable even when short', statefulSet({ type: 'OnDelete' }, { observedGeneration: 1 }), DEFAULT],
    ['no status', statefulSet(rolling, undefined), NO_STATUS],
    ['old generation', statefulSet(rolling, { ...ssReady, observedGeneration: 4 }), OLD_GEN],
    [
      'replicas short',
      statefulSet(rolling, { ...ssReady, replicas: 2 }),
      unstable('Waiting for at least the desired replica count to be met'),
    ],
    ['ready short', statefulSet(rolling, { ...ssReady, readyReplicas: 2 }), unstable('Waiting for all updated replicas to be ready')],
    [
      'partition: fewer updated than replicas − partition',
      statefulSet({ type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, { ...ssReady, updatedReplicas: 1 }),
      unstable('Waiting for partitioned roll out to finish'),
    ],
    [
      'partition: enough updated',
      statefulSet({ type: 'RollingUpdate', rollingUpdate: { partition: 1 } }, { ...ssReady, updatedReplicas: 2, updateRevision: 'db-2' }),
      { stable: [true, 'Partitioned roll out complete'] },
    ],
    [
      'partition 0 (the API server default) with all updated',
      statefulSet({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, { ...ssReady, updatedReplicas: 3 }),
      { stable: [true, 'Partitioned roll out complete'] },
    ],
    [
      'rollingUpdate without partition is complete',
      statefulSet({ type: 'RollingUpdate', rollingUpdate: {} }, { ...ssReady, updatedReplicas: 0 }),
      { stable: [true, 'Partitioned roll out complete'] },
    ],
    [
      'partition step skipped without status.updatedReplicas',
      statefulSet({ type: 'RollingUpdate', rollingUpdate: { partition: 0 } }, { ...ssReady, currentReplicas: 1 }),
      unstable('Waiting for all updated replicas to be scheduled'),
    ],
    [
      'current replicas short',
      statefulSet(rolling, { ...ssReady, currentReplicas: 2 }),
      unstable('Waiting for all updated replicas to be scheduled'),
    ],
    [
      'revisions differ',
      statefulSet(rolling, { ...ssReady, updateRevision: 'db-2' }),
      unstable('Waiting for the updated revision to match the current revision'),
    ],
    ['all met', statefulSet(rolling, ssReady), DEFAULT],
    ['missing updateStrategy is RollingUpdate', statefulSet(undefined, ssReady), DEFAULT],
    [
      'other apiVersion fails clearly',
      statefulSet(rolling, ssReady, 'apps/v1beta2'),
      {
        stable: [false, 'No statefulSet is supported at api version apps/v1beta2'],
        failed: [true, 'No statefulSet is supported at api version apps/v1beta2'],
      },
    ],
  ]);
});

// ---------------------------------------------------------------- DaemonSet
const daemonSet = (strategy: Obj | undefined, status: Obj | undefined): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'DaemonSet',
  metadata: { name: 'agent', generation: 3 },
  spec: strategy === undefined ? {} : { updateStrategy: strategy },
  ...(status === undefined ? {} : { status }),
});
const dsReady = {
  observedGeneration: 3,
  desiredNumberScheduled: 4,
  currentNumberScheduled: 4,
  updatedNumberScheduled: 4,
  numberAvailable: 4,
  numberReady: 4,
};

describe('DaemonSet status', () => {
  run([
    ['no status', daemonSet(rolling, undefined), NO_STATUS],
    ['old generation', daemonSet(rolling, { ...dsReady, observedGeneration: 2 }), OLD_GEN],
    ['old generation even for OnDelete', daemonSet({ type: 'OnDelete' }, { ...dsReady, observedGeneration: 2 }), OLD_GEN],
    [
      'non-RollingUpdate is stable once observed',
      daemonSet({ type: 'OnDelete' }, { observedGeneration: 3, desiredNumberScheduled: 4 }),
      DEFAULT,
    ],
    [
      'scheduled short',
      daemonSet(rolling, { ...dsReady, currentNumberScheduled: 3 }),
      unstable('Waiting for all replicas to be scheduled'),
    ],
    [
      'updated short',
      daemonSet(rolling, { ...dsReady, updatedNumberScheduled: 3 }),
      unstable('Waiting for all updated replicas to be scheduled'),
    ],
    ['available short', daemonSet(rolling, { ...dsReady, numberAvailable: 3 }), unstable('Waiting for all replicas to be available')],
    ['ready short', daemonSet(rolling, { ...dsReady, numberReady: 3 }), unstable('Waiting for all replicas to be ready')],
    ['all met', daemonSet(rolling, dsReady), DEFAULT],
    [
      'missing updateStrategy is RollingUpdate',
      daemonSet(undefined, { ...dsReady, numberReady: 0 }),
      unstable('Waiting for all replicas to be ready'),
    ],
  ]);
});

// ---------------------------------------------------------------- Pod
const pod = (status: Obj | undefined): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-abc' },
  ...(status === undefined ? {} : { status }),
});

describe('Pod status', () => {
  run([
    ['no status', pod(undefined), NO_STATUS],
    ['Running', pod({ phase: 'Running' }), DEFAULT],
    ['Succeeded', pod({ phase: 'Succeeded' }), DEFAULT],
    ['Pending', pod({ phase: 'Pending' }), unavailable('Pod is pending')],
    ['Failed is unstable, not failed', pod({ phase: 'Failed' }), unavailable('Pod has failed')],
    ['Unknown', pod({ phase: 'Unknown' }), unavailable('Pod phase is unknown')],
    ['phase missing', pod({}), unavailable('Pod phase is unknown')],
    ['unrecognised phase (case matters)', pod({ phase: 'running' }), unavailable('Pod phase is unknown')],
    ['prototype names are not phases', pod({ phase: 'constructor' }), unavailable('Pod phase is unknown')],
  ]);
});

// ---------------------------------------------------------------- Job
const job = (spec: Obj, status: Obj | undefined): Obj => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'migrate' },
  spec,
  ...(status === undefined ? {} : { status }),
});
const failedCondition = {
  type: 'Failed',
  status: 'True',
  reason: 'BackoffLimitExceeded',
  message: 'Job has reached the specified backoff limit',
};

describe('Job status', () => {
  run([
    ['no status', job({}, undefined), NO_STATUS],
    ['waiting (completions default 1)', job({}, { active: 1 }), unstable('Waiting for jobs to finish')],
    ['done (completions default 1)', job({}, { succeeded: 1 }), DEFAULT],
    ['completions counted', job({ completions: 3 }, { succeeded: 2 }), unstable('Waiting for jobs to finish')],
    ['all completions', job({ completions: 3 }, { succeeded: 3 }), DEFAULT],
    [
      'Failed=True condition: failed with its message, stable kept',
      job({}, { failed: 7, conditions: [failedCondition] }),
      { failed: [true, 'Job has reached the specified backoff limit'] },
    ],
    [
      'Failed condition compares case-insensitively',
      job({}, { conditions: [{ type: 'failed', status: 'true' }] }),
      { failed: [true, null] },
    ],
    [
      'Failed=False is still waiting',
      job({}, { conditions: [{ ...failedCondition, status: 'False' }] }),
      unstable('Waiting for jobs to finish'),
    ],
    ['succeeded wins over a Failed condition', job({}, { succeeded: 1, conditions: [failedCondition] }), DEFAULT],
  ]);
});

// ---------------------------------------------------------------- CronJob, HPA
describe('CronJob and HorizontalPodAutoscaler status', () => {
  const cron = { apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'nightly' } };
  const hpa = (status?: Obj): Obj => ({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: { name: 'web' },
    ...(status ? { status } : {}),
  });
  run([
    ['CronJob without status', cron, NO_STATUS],
    ['CronJob with empty status', { ...cron, status: {} }, DEFAULT],
    ['HPA without status', hpa(), NO_STATUS],
    [
      'HPA scaling up',
      hpa({ currentReplicas: 2, desiredReplicas: 5 }),
      unstable('Waiting for HPA to complete a scale up, current: 2 desired: 5'),
    ],
    [
      'HPA scaling down',
      hpa({ currentReplicas: 5, desiredReplicas: 2 }),
      unstable('Waiting for HPA to complete a scale down, current: 5 desired: 2'),
    ],
    ['HPA settled', hpa({ currentReplicas: 3, desiredReplicas: 3 }), DEFAULT],
  ]);
});

// ---------------------------------------------------------------- Everything else
describe('kinds without rules are always stable', () => {
  run([
    ['Service', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: {}, status: { loadBalancer: {} } }, DEFAULT],
    ['Service without status', { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' } }, DEFAULT],
    ['ConfigMap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg-v000' }, data: {} }, DEFAULT],
    ['Secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' } }, DEFAULT],
    ['Namespace terminating', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' }, status: { phase: 'Terminating' } }, DEFAULT],
    ['Ingress', { apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'i' } }, DEFAULT],
    ['ClusterRole', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'r' } }, DEFAULT],
    [
      'PersistentVolumeClaim pending',
      { apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'p' }, status: { phase: 'Pending' } },
      DEFAULT,
    ],
    [
      'custom resource with a failing status',
      {
        apiVersion: 'stable.example.com/v1',
        kind: 'CronTab',
        metadata: { name: 't' },
        status: { phase: 'Failed', conditions: [{ type: 'Ready', status: 'False' }] },
      },
      DEFAULT,
    ],
    ['a Pod kind in a custom group', { apiVersion: 'example.com/v1', kind: 'Pod', metadata: { name: 'p' } }, DEFAULT],
    ['no kind at all', {}, DEFAULT],
  ]);

  test('each call returns a fresh object', () => {
    const a = manifestStatus({ apiVersion: 'v1', kind: 'Service' });
    a.stable.state = false;
    assert.equal(manifestStatus({ apiVersion: 'v1', kind: 'Service' }).stable.state, true);
  });
});

// ---------------------------------------------------------------- healthOf
describe('healthOf', () => {
  const cases: [string, ManifestStatus | undefined, string, string][] = [
    ['stable', expected(DEFAULT), 'Healthy', 'Stable'],
    ['stable with a message', expected({ stable: [true, 'Partitioned roll out complete'] }), 'Healthy', 'Partitioned roll out complete'],
    ['unstable', expected(unstable('Waiting for all replicas to be ready')), 'Progressing', 'Waiting for all replicas to be ready'],
    ['unstable without a message', expected({ stable: [false, null] }), 'Progressing', 'Not yet stable'],
    ['no status reported', expected(NO_STATUS), 'Unknown', 'No status reported yet'],
    ['no status at all', undefined, 'Unknown', 'No status'],
    [
      'paused',
      expected({ paused: [true, 'Deployment is paused'], stable: [false, 'Waiting for all replicas to be updated'] }),
      'Paused',
      'Deployment is paused',
    ],
    ['paused without a message', expected({ paused: [true, null] }), 'Paused', 'Paused'],
    [
      'failed beats paused',
      expected({ paused: [true, 'p'], failed: [true, 'Deployment exceeded its progress deadline'] }),
      'Degraded',
      'Deployment exceeded its progress deadline',
    ],
    ['failed without a message', expected({ failed: [true, null] }), 'Degraded', 'Failed'],
  ];
  for (const [name, status, health, reason] of cases) {
    test(name, () => assert.deepEqual(healthOf(status), { health, reason }));
  }

  test('derived from manifestStatus end to end', () => {
    assert.equal(healthOf(manifestStatus(pod({ phase: 'Pending' }))).health, 'Progressing');
    assert.equal(healthOf(manifestStatus(job({}, { conditions: [failedCondition] }))).health, 'Degraded');
    assert.equal(healthOf(manifestStatus(pod(undefined))).health, 'Unknown');
    assert.equal(healthOf(manifestStatus(deployment({}, deployReady, 'extensions/v1beta1'))).health, 'Degraded');
  });
});
