/**
 * The rollout planner and fenceposts on their own (src/sandbox/controllers/rolling.ts, rollout-bounds.ts): the
 * steps kube-controller-manager would take for given counts, including the cases the end-to-end tests cannot force
 * (pods of a scale-down not yet deleted, unavailable old pods cleaned up first, several old ReplicaSets).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { planRecreate, planRollingUpdate, type ReplicaSetCounts } from '../../src/sandbox/controllers/rolling.js';
import { rolloutBounds } from '../../src/sandbox/controllers/rollout-bounds.js';
import type { KubeObject } from '../../src/sandbox/types.js';

const deployment = (strategy: unknown): KubeObject => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd' },
  spec: { strategy },
});

const rs = (uid: string, revision: number, replicas: number, available = replicas, pods = replicas): ReplicaSetCounts => ({
  uid,
  revision,
  replicas,
  pods,
  available,
  active: pods,
});

describe('rolloutBounds', () => {
  test('defaults 25%/25%: surge rounds up, unavailable down', () => {
    assert.deepEqual(rolloutBounds(deployment(undefined), 4), { maxSurge: 1, maxUnavailable: 1 });
    assert.deepEqual(rolloutBounds(deployment({ type: 'RollingUpdate' }), 10), { maxSurge: 3, maxUnavailable: 2 });
    assert.deepEqual(rolloutBounds(deployment({ type: 'RollingUpdate' }), 1), { maxSurge: 1, maxUnavailable: 0 });
  });

  test('numbers, percentages, both 0 and Recreate', () => {
    const rolling = (maxSurge: unknown, maxUnavailable: unknown) =>
      deployment({ type: 'RollingUpdate', rollingUpdate: { maxSurge, maxUnavailable } });
    assert.deepEqual(rolloutBounds(rolling(0, 1), 4), { maxSurge: 0, maxUnavailable: 1 });
    assert.deepEqual(rolloutBounds(rolling('30%', '30%'), 5), { maxSurge: 2, maxUnavailable: 1 });
    assert.deepEqual(rolloutBounds(rolling(0, '10%'), 3), { maxSurge: 0, maxUnavailable: 1 }, 'both 0: maxUnavailable 1');
    assert.deepEqual(rolloutBounds(rolling(2, 9), 3), { maxSurge: 2, maxUnavailable: 3 }, 'at most spec.replicas unavailable');
    assert.deepEqual(rolloutBounds(rolling(1, 1), 0), { maxSurge: 1, maxUnavailable: 0 });
    assert.deepEqual(rolloutBounds(rolling('lots', -1), 4), { maxSurge: 1, maxUnavailable: 1 }, 'unusable values: the defaults');
    assert.deepEqual(rolloutBounds(deployment({ type: 'Recreate' }), 4), { maxSurge: 0, maxUnavailable: 0 });
  });
});

describe('planRollingUpdate', () => {
  const fence = { desired: 4, maxSurge: 1, maxUnavailable: 1 };

  test('a new Deployment and a plain scale: the current ReplicaSet straight to spec.replicas', () => {
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 1, 0), old: [] }), [{ uid: 'new', replicas: 4 }]);
    assert.deepEqual(planRollingUpdate({ ...fence, desired: 9, current: rs('new', 2, 4), old: [rs('old', 1, 0)] }), [
      { uid: 'new', replicas: 9 },
    ]);
    assert.deepEqual(planRollingUpdate({ ...fence, desired: 2, current: rs('new', 2, 4), old: [rs('old', 1, 0)] }), [
      { uid: 'new', replicas: 2 },
    ]);
  });

  test('the steps of 4 replicas at 25%/25%', () => {
    // surge first
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 0), old: [rs('old', 1, 4)] }), [{ uid: 'new', replicas: 1 }]);
    // then down by what availability allows: 4 available, 3 needed
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 1, 0), old: [rs('old', 1, 4)] }), [{ uid: 'old', replicas: 3 }]);
    // pods of that scale-down not deleted yet still count against maxSurge
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 1, 0), old: [rs('old', 1, 3, 3, 4)] }), []);
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 1, 0), old: [rs('old', 1, 3)] }), [{ uid: 'new', replicas: 2 }]);
    // nothing more while the new pods are not available
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 2, 0), old: [rs('old', 1, 3)] }), []);
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 2, 2), old: [rs('old', 1, 3)] }), [{ uid: 'old', replicas: 1 }]);
  });

  test('unavailable old pods are cleaned up first, oldest revision first, then available ones', () => {
    const plan = planRollingUpdate({
      ...fence,
      current: rs('new', 5, 1, 1),
      old: [rs('newer', 4, 2, 2), rs('oldest', 2, 2, 0)],
    });
    // allPods 5, minAvailable 3, new unavailable 0: up to 2 cleaned (both of oldest's); available 3: nothing more
    assert.deepEqual(plan, [{ uid: 'oldest', replicas: 0 }]);
  });

  test('never-ready new pods: the rollout stops with the old pods kept', () => {
    assert.deepEqual(planRollingUpdate({ ...fence, current: rs('new', 2, 2, 0), old: [rs('old', 1, 3)] }), []);
  });
});

describe('planRecreate', () => {
  const fence = { desired: 3, maxSurge: 0, maxUnavailable: 0 };
  test('old ReplicaSets to 0, then wait for their pods, then the new one up', () => {
    assert.deepEqual(planRecreate({ ...fence, current: rs('new', 2, 0), old: [rs('a', 1, 3), rs('b', 0, 0)] }), [
      { uid: 'a', replicas: 0 },
    ]);
    assert.deepEqual(planRecreate({ ...fence, current: rs('new', 2, 0), old: [{ ...rs('a', 1, 0), active: 1 }] }), []);
    assert.deepEqual(planRecreate({ ...fence, current: rs('new', 2, 0), old: [rs('a', 1, 0)] }), [{ uid: 'new', replicas: 3 }]);
    assert.deepEqual(planRecreate({ ...fence, current: rs('new', 2, 3), old: [rs('a', 1, 0)] }), []);
  });
});
