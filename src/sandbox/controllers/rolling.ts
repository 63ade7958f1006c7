/**
 * One step of a Deployment rollout, decided as kube-controller-manager decides it (pkg/controller/deployment
 * rolling.go and recreate.go), as a pure function of the ReplicaSets' counts so it can be tested on its own.
 *
 * RollingUpdate, each reconcile: first scale the new ReplicaSet up, to at most spec.replicas and so that all
 * ReplicaSets together hold no more than spec.replicas + maxSurge pods (a Deployment above spec.replicas is scaled
 * down to it); if that changed nothing, scale old ReplicaSets down, oldest revision first — their unavailable pods
 * first (`cleanupUnhealthyReplicas`: no more than allPods − minAvailable − the new ReplicaSet's unavailable pods), then
 * available ones while at least spec.replicas − maxUnavailable pods stay available. A plain scale (no old ReplicaSet
 * holding pods) therefore changes only the current ReplicaSet, and a scale in the middle of a rollout converges
 * (without Kubernetes' proportional scaling). Recreate: every old ReplicaSet to 0, then, once their pods are gone,
 * the new one to spec.replicas.
 *
 * The counts are the pods' own, not the ReplicaSets' status: the sandbox's controllers share one store, so the
 * Deployment controller reads which pods exist and are available directly and never acts on a status the ReplicaSet
 * controller has not written yet — which is what keeps every intermediate state within the fenceposts. A ReplicaSet's
 * size is the larger of spec.replicas and its pods (pods of a scale-down not yet deleted still count), and its
 * available pods are at most spec.replicas (the ReplicaSet controller deletes unavailable pods first).
 */

/** What the planner needs to know about one ReplicaSet. */
export interface ReplicaSetCounts {
  uid: string;
  /** spec.replicas. */
  replicas: number;
  /** Pods that exist and are not being deleted. */
  pods: number;
  /** Of those, the available ones (ready for minReadySeconds). */
  available: number;
  /** Of those, the ones still running or about to (not Succeeded or Failed): what Recreate waits for. */
  active: number;
  /** The revision annotation, for ordering old ReplicaSets (oldest first). */
  revision: number;
}

/** The inputs of one step. */
export interface RolloutInput {
  /** spec.replicas of the Deployment. */
  desired: number;
  maxSurge: number;
  maxUnavailable: number;
  /** The ReplicaSet of the current template. */
  current: ReplicaSetCounts;
  /** Every other ReplicaSet the Deployment owns. */
  old: ReplicaSetCounts[];
}

/** One ReplicaSet to scale to `replicas`. */
export interface ScaleAction {
  uid: string;
  replicas: number;
}

const size = (rs: ReplicaSetCounts) => Math.max(rs.replicas, rs.pods);
const availableOf = (rs: ReplicaSetCounts) => Math.max(0, Math.min(rs.available, rs.replicas));
const oldestFirst = (a: ReplicaSetCounts, b: ReplicaSetCounts) => a.revision - b.revision;

/** The new ReplicaSet's next size (reconcileNewReplicaSet / NewRSNewReplicas), or undefined when it stays. */
function scaleNew(input: RolloutInput): ScaleAction | undefined {
  const { desired, maxSurge, current, old } = input;
  if (current.replicas === desired) return undefined;
  if (current.replicas > desired) return { uid: current.uid, replicas: desired };
  const total = [current, ...old].reduce((sum, rs) => sum + size(rs), 0);
  const room = desired + maxSurge - total;
  if (room <= 0) return undefined;
  return { uid: current.uid, replicas: current.replicas + Math.min(room, desired - current.replicas) };
}

/** Old ReplicaSets' next sizes (reconcileOldReplicaSets): unhealthy pods first, then as availability allows. */
function scaleOld(input: RolloutInput): ScaleAction[] {
  const { desired, maxUnavailable, current } = input;
  const old = input.old.filter((rs) => rs.replicas > 0).map((rs) => ({ ...rs }));
  if (old.length === 0) return [];
  old.sort(oldestFirst);
  const before = new Map(old.map((rs) => [rs.uid, rs.replicas]));
  const minAvailable = desired - maxUnavailable;
  const allPods = [current, ...old].reduce((sum, rs) => sum + rs.replicas, 0);
  const newUnavailable = Math.max(0, current.replicas - availableOf(current));
  const maxScaledDown = allPods - minAvailable - newUnavailable;
  if (maxScaledDown <= 0) return [];
  // cleanupUnhealthyReplicas: taking unavailable pods away costs no availability
  let cleaned = 0;
  for (const rs of old) {
    if (cleaned >= maxScaledDown) break;
    const unhealthy = rs.replicas - availableOf(rs);
    if (unhealthy <= 0) continue;
    const n = Math.min(maxScaledDown - cleaned, unhealthy);
    rs.replicas -= n;
    cleaned += n;
  }
  // scaleDownOldReplicaSetsForRollingUpdate: available pods, while enough stay available
  const available = [current, ...old].reduce((sum, rs) => sum + availableOf(rs), 0);
  let allowed = available - minAvailable;
  for (const rs of old) {
    if (allowed <= 0) break;
    const n = Math.min(rs.replicas, allowed);
    rs.replicas -= n;
    allowed -= n;
  }
  return old.filter((rs) => rs.replicas !== before.get(rs.uid)).map((rs) => ({ uid: rs.uid, replicas: rs.replicas }));
}

/** The next RollingUpdate step: the ReplicaSets to scale now (none when the rollout waits or is done). */
export function planRollingUpdate(input: RolloutInput): ScaleAction[] {
  const up = scaleNew(input);
  return up ? [up] : scaleOld(input);
}

/** The next Recreate step: old ReplicaSets to 0; the new one to spec.replicas once no old pod is left running. */
export function planRecreate(input: RolloutInput): ScaleAction[] {
  const down = input.old.filter((rs) => rs.replicas > 0).map((rs) => ({ uid: rs.uid, replicas: 0 }));
  if (down.length > 0) return down;
  if (input.old.some((rs) => rs.active > 0)) return [];
  return input.current.replicas === input.desired ? [] : [{ uid: input.current.uid, replicas: input.desired }];
}
