/**
 * Pod readiness and availability as the workload controllers count them. A pod is *ready* when its Ready condition is
 * True and *available* once it has been ready for the owner's `minReadySeconds` (Kubernetes' `IsPodAvailable`: the
 * Ready condition's lastTransitionTime, which has whole-second precision, plus minReadySeconds, before now). With
 * minReadySeconds 0 the two are the same. The ReplicaSet controller counts availableReplicas with these functions and
 * the Deployment controller paces a rolling update with them, so both agree on which pods may be taken away.
 */
import { isPlainObject, type KubeObject } from '../types.js';

function readyCondition(pod: KubeObject): Record<string, unknown> | undefined {
  const status = isPlainObject(pod.status) ? pod.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  return conditions.find((c) => c.type === 'Ready');
}

/** True when a pod reports condition Ready=True. */
export function podReady(pod: KubeObject): boolean {
  return readyCondition(pod)?.status === 'True';
}

/**
 * When a ready pod became Ready (ms since the epoch, from the condition's lastTransitionTime; 0 when the time is
 * missing, as for seeded pods), or undefined for a pod that is not ready.
 */
export function readySinceMs(pod: KubeObject): number | undefined {
  const ready = readyCondition(pod);
  if (ready?.status !== 'True') return undefined;
  const at = typeof ready.lastTransitionTime === 'string' ? Date.parse(ready.lastTransitionTime) : Number.NaN;
  return Number.isNaN(at) ? 0 : at;
}

/**
 * When a pod is (or was) available with `minReadySeconds`, in ms since the epoch; undefined while it is not ready.
 * Compare with now: at or before now means available.
 */
export function availableAtMs(pod: KubeObject, minReadySeconds: number): number | undefined {
  const since = readySinceMs(pod);
  if (since === undefined) return undefined;
  return minReadySeconds > 0 ? since + minReadySeconds * 1000 : since;
}

/** True when a pod has been ready for `minReadySeconds` at `nowMs`. */
export function podAvailable(pod: KubeObject, minReadySeconds: number, nowMs: number): boolean {
  const at = availableAtMs(pod, minReadySeconds);
  return at !== undefined && (minReadySeconds <= 0 || at <= nowMs);
}

/** A workload's `spec.minReadySeconds` (0 when unset or not a positive number). */
export function minReadySecondsOf(obj: KubeObject): number {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  return typeof spec.minReadySeconds === 'number' && spec.minReadySeconds > 0 ? spec.minReadySeconds : 0;
}
