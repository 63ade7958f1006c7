/**
 * Whether a Deployment, StatefulSet or DaemonSet has finished rolling out, judged from one read of the object the
 * way `kubectl rollout status` judges it, with kubectl's messages: "Waiting for deployment "web" rollout to finish:
 * 1 of 3 updated replicas are available...", "deployment "web" successfully rolled out". Pure: the caller reads.
 */
import type { JsonObject, JsonValue } from '@bufbuild/protobuf';

/** The kinds `rollout status` understands. */
export const ROLLOUT_STATUS_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'] as const;

/** One verdict: `done` with the final line, still waiting with the progress line, or an error that ends the wait. */
export type RolloutVerdict =
  | { state: 'done'; message: string }
  | { state: 'waiting'; message: string }
  | { state: 'error'; message: string };

const field = (o: JsonValue | undefined, ...path: string[]): JsonValue | undefined => {
  let cur = o;
  for (const key of path) {
    if (!cur || typeof cur !== 'object' || Array.isArray(cur)) return undefined;
    cur = (cur as JsonObject)[key];
  }
  return cur;
};
const int = (v: JsonValue | undefined): number => (typeof v === 'number' ? v : 0);
const generationSeen = (o: JsonObject) => int(field(o, 'metadata', 'generation')) <= int(field(o, 'status', 'observedGeneration'));

/** Judges `object` (its `kind` decides). Kinds outside {@link ROLLOUT_STATUS_KINDS} are an error verdict. */
export function rolloutVerdict(object: JsonObject): RolloutVerdict {
  const name = String(field(object, 'metadata', 'name') ?? '');
  switch (object.kind) {
    case 'Deployment':
      return deploymentVerdict(object, name);
    case 'StatefulSet':
      return statefulSetVerdict(object);
    case 'DaemonSet':
      return daemonSetVerdict(object, name);
    default:
      return { state: 'error', message: `no status viewer has been implemented for ${String(object.kind)}` };
  }
}

function deploymentVerdict(o: JsonObject, name: string): RolloutVerdict {
  if (!generationSeen(o)) return { state: 'waiting', message: 'Waiting for deployment spec update to be observed...' };
  const conditions = field(o, 'status', 'conditions');
  const progressing = Array.isArray(conditions) ? conditions.find((c) => field(c, 'type') === 'Progressing') : undefined;
  if (progressing && field(progressing, 'reason') === 'ProgressDeadlineExceeded') {
    return { state: 'error', message: `deployment "${name}" exceeded its progress deadline` };
  }
  const wanted = field(o, 'spec', 'replicas');
  const replicas = int(field(o, 'status', 'replicas'));
  const updated = int(field(o, 'status', 'updatedReplicas'));
  const available = int(field(o, 'status', 'availableReplicas'));
  const waiting = (what: string): RolloutVerdict => ({
    state: 'waiting',
    message: `Waiting for deployment "${name}" rollout to finish: ${what}...`,
  });
  if (typeof wanted === 'number' && updated < wanted) return waiting(`${updated} out of ${wanted} new replicas have been updated`);
  if (replicas > updated) return waiting(`${replicas - updated} old replicas are pending termination`);
  if (available < updated) return waiting(`${available} of ${updated} updated replicas are available`);
  return { state: 'done', message: `deployment "${name}" successfully rolled out` };
}

function statefulSetVerdict(o: JsonObject): RolloutVerdict {
  const strategy = field(o, 'spec', 'updateStrategy', 'type');
  if (strategy !== undefined && strategy !== 'RollingUpdate') {
    return { state: 'error', message: 'rollout status is only available for RollingUpdate strategy type' };
  }
  if (int(field(o, 'status', 'observedGeneration')) === 0 || !generationSeen(o)) {
    return { state: 'waiting', message: 'Waiting for statefulset spec update to be observed...' };
  }
  const wanted = field(o, 'spec', 'replicas');
  const ready = int(field(o, 'status', 'readyReplicas'));
  const updated = int(field(o, 'status', 'updatedReplicas'));
  if (typeof wanted === 'number' && ready < wanted)
    return { state: 'waiting', message: `Waiting for ${wanted - ready} pods to be ready...` };
  const partition = field(o, 'spec', 'updateStrategy', 'rollingUpdate', 'partition');
  if (typeof partition === 'number' && typeof wanted === 'number' && partition > 0) {
    const target = Math.max(wanted - partition, 0);
    if (updated < target) {
      return {
        state: 'waiting',
        message: `Waiting for partitioned roll out to finish: ${updated} out of ${target} new pods have been updated...`,
      };
    }
    return { state: 'done', message: `partitioned roll out complete: ${updated} new pods have been updated...` };
  }
  const updateRevision = String(field(o, 'status', 'updateRevision') ?? '');
  const currentRevision = String(field(o, 'status', 'currentRevision') ?? '');
  if (updateRevision !== currentRevision) {
    return {
      state: 'waiting',
      message: `waiting for statefulset rolling update to complete ${updated} pods at revision ${updateRevision}...`,
    };
  }
  const current = int(field(o, 'status', 'currentReplicas'));
  return { state: 'done', message: `statefulset rolling update complete ${current} pods at revision ${currentRevision}...` };
}

function daemonSetVerdict(o: JsonObject, name: string): RolloutVerdict {
  const strategy = field(o, 'spec', 'updateStrategy', 'type');
  if (strategy !== undefined && strategy !== 'RollingUpdate') {
    return { state: 'error', message: 'rollout status is only available for RollingUpdate strategy type' };
  }
  if (!generationSeen(o)) return { state: 'waiting', message: 'Waiting for daemon set spec update to be observed...' };
  const desired = int(field(o, 'status', 'desiredNumberScheduled'));
  const updated = int(field(o, 'status', 'updatedNumberScheduled'));
  const available = int(field(o, 'status', 'numberAvailable'));
  const waiting = (what: string): RolloutVerdict => ({
    state: 'waiting',
    message: `Waiting for daemon set "${name}" rollout to finish: ${what}...`,
  });
  if (updated < desired) return waiting(`${updated} out of ${desired} new pods have been updated`);
  if (available < desired) return waiting(`${available} of ${desired} updated pods are available`);
  return { state: 'done', message: `daemon set "${name}" successfully rolled out` };
}
