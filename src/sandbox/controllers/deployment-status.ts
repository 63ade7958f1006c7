/**
 * A Deployment's status as the Deployment controller computes it from its ReplicaSets: replica counts (true to the
 * pods' readiness, so unready pods keep readyReplicas/availableReplicas low; `replicas` counts old and new pods
 * alike, so mid-rollout `kubectl rollout status` reports old replicas pending termination), the Available condition
 * (at least spec.replicas − maxUnavailable available, the fencepost of rollout-bounds.ts) and the Progressing
 * condition — True while the rollout makes progress (ReplicaSetUpdated) or once it is done (NewReplicaSetAvailable),
 * False with ProgressDeadlineExceeded when no progress happened for spec.progressDeadlineSeconds (any later progress
 * makes it True again, as in Kubernetes), Unknown with DeploymentPaused while paused. Progress is timed in memory
 * with millisecond precision (see {@link ProgressClocks}).
 */
import { nowTimestamp } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { rolloutBounds } from './rollout-bounds.js';

/** When each Deployment (by uid) last made progress, and in which state; owned by the Deployment controller. */
export type ProgressClocks = Map<string, { signature: string; sinceMs: number }>;

/** Inputs of {@link deploymentStatus}. */
export interface DeploymentStatusInput {
  deployment: KubeObject;
  replicaSets: KubeObject[];
  /** The ReplicaSet of the current template, when there is one (a paused Deployment may have none). */
  current: KubeObject | undefined;
  desired: number;
  clocks: ProgressClocks;
  nowMs: number;
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/**
 * The status to write, and when to look again (the progress deadline) if nothing else happens. Callers must call it
 * on every change of the Deployment or its ReplicaSets so the progress clock sees every step.
 */
export function deploymentStatus(input: DeploymentStatusInput): { status: Record<string, unknown>; recheckInMs?: number } {
  const { deployment: d, replicaSets, current, desired, clocks, nowMs } = input;
  const spec = isPlainObject(d.spec) ? d.spec : {};
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const rs of replicaSets) {
    const st = isPlainObject(rs.status) ? rs.status : {};
    replicas += num(st.replicas);
    ready += num(st.readyReplicas);
    available += num(st.availableReplicas);
    if (rs.metadata.uid === current?.metadata.uid) updated = num(st.replicas);
  }
  const old = isPlainObject(d.status) ? d.status : {};
  const oldConditions = Array.isArray(old.conditions) ? old.conditions.filter(isPlainObject) : [];
  const now = nowTimestamp();
  const condition = (type: string, status: string, reason: string, message: string, updateTime?: string) => {
    const prev = oldConditions.find((c) => c.type === type);
    const same = prev && prev.status === status && prev.reason === reason;
    return {
      type,
      status,
      reason,
      message,
      lastUpdateTime: updateTime ?? (same ? prev.lastUpdateTime : now),
      lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now,
    };
  };
  const minAvailable = desired - rolloutBounds(d, desired).maxUnavailable;
  const availableOk = available >= minAvailable;
  const availableCondition = condition(
    'Available',
    availableOk ? 'True' : 'False',
    availableOk ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
    availableOk ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.',
  );
  const uid = d.metadata.uid!;
  const rsName = current?.metadata.name ?? '';
  let progressing: Record<string, unknown>;
  let recheckInMs: number | undefined;
  const complete = !!current && updated === desired && replicas === desired && available === desired;
  if (spec.paused === true) {
    clocks.delete(uid);
    progressing = condition('Progressing', 'Unknown', 'DeploymentPaused', 'Deployment is paused');
  } else if (complete) {
    clocks.delete(uid);
    progressing = condition('Progressing', 'True', 'NewReplicaSetAvailable', `ReplicaSet "${rsName}" has successfully progressed.`);
  } else {
    const signature = `${rsName}|${updated}|${ready}|${available}|${replicas}`;
    let clock = clocks.get(uid);
    if (!clock || clock.signature !== signature) clocks.set(uid, (clock = { signature, sinceMs: nowMs }));
    const deadlineMs = (typeof spec.progressDeadlineSeconds === 'number' ? spec.progressDeadlineSeconds : 600) * 1000;
    const since = new Date(clock.sinceMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    if (nowMs - clock.sinceMs >= deadlineMs) {
      progressing = condition('Progressing', 'False', 'ProgressDeadlineExceeded', `ReplicaSet "${rsName}" has timed out progressing.`);
    } else {
      progressing = condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`, since);
      recheckInMs = clock.sinceMs + deadlineMs - nowMs;
    }
  }
  const status: Record<string, unknown> = {
    observedGeneration: d.metadata.generation,
    replicas,
    updatedReplicas: updated,
    readyReplicas: ready,
    availableReplicas: available,
    conditions: [availableCondition, progressing],
  };
  if (replicas - available > 0) status.unavailableReplicas = replicas - available;
  for (const k of ['readyReplicas', 'availableReplicas', 'updatedReplicas'] as const) if (status[k] === 0) delete status[k];
  return { status, recheckInMs };
}
