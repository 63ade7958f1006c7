/**
 * The ReplicaSet controller: keeps spec.replicas pods (named `<replicaset>-<suffix>`, owned by the ReplicaSet) and a
 * status counting them, their readiness and availability (ready for spec.minReadySeconds, see pod-availability.ts; a
 * timer looks again when a ready pod is due to become available, since no pod event marks that moment). Failed pods
 * are kept and counted (not ready), not replaced: a pod told to fail (pod-controls.ts) must not make the sandbox churn
 * pods. Scaling down deletes the pods whose loss costs least first, as Kubernetes' ActivePods ordering does: not
 * ready before ready, ready for a shorter time before longer, newer before older — so a Deployment that scales an
 * old ReplicaSet down by its unavailable pods loses no available one. Creates at most a burst of pods per reconcile
 * and stops at the store's pod capacity (FailedCreate). Records SuccessfulCreate / SuccessfulDelete Events.
 */
import type { ObjectStore } from '../store.js';
import { randomSuffix } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef } from './owners.js';
import { availableAtMs, minReadySecondsOf, podReady, readySinceMs } from './pod-availability.js';
import { BURST_PODS, createPodFor, podFromTemplate } from './pod-template.js';
import { nsKey, splitNsKey, type Controller, type ControllerRunner } from './runner.js';

const COMPONENT = 'replicaset-controller';

/** Scale-down order: not ready first, then ready for the shortest time, then the newest. */
function cheapestFirst(a: KubeObject, b: KubeObject): number {
  const readyA = readySinceMs(a);
  const readyB = readySinceMs(b);
  if ((readyA === undefined) !== (readyB === undefined)) return readyA === undefined ? -1 : 1;
  if (readyA !== undefined && readyB !== undefined && readyA !== readyB) return readyB - readyA;
  return (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '');
}

/**
 * Creates the controller; `events` records pod creations and deletions, `getRunner` (when given) schedules the look
 * at pods due to become available after minReadySeconds.
 */
export function createReplicaSetController(store: ObjectStore, events: EventRecorder, getRunner?: () => ControllerRunner): Controller {
  const replicaSets = store.registry.byKindKey('apps/ReplicaSet')!;
  const pods = store.registry.byKindKey('/Pod')!;

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const rs = store.peek(replicaSets, namespace, name);
    if (!rs || rs.metadata.deletionTimestamp || !isPlainObject(rs.spec)) return;
    const spec = rs.spec;
    const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const owned = store
      .scan(pods, { namespace })
      .items.filter((p) => controllerRef(p)?.uid === rs.metadata.uid && !p.metadata.deletionTimestamp);
    const template = isPlainObject(spec.template) ? spec.template : {};
    // at most a burst per reconcile: each created pod's event queues this key again for the rest
    for (let i = owned.length, end = Math.min(desired, owned.length + BURST_PODS); i < end; i++) {
      const pod = createPodFor(store, pods, rs, podFromTemplate(rs, template, `${name}-${randomSuffix()}`), events, COMPONENT);
      if (!pod) break;
      owned.push(pod);
      events.record(rs, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
    }
    if (owned.length > desired) {
      const victims = [...owned].sort(cheapestFirst).slice(0, owned.length - desired);
      for (const pod of victims) {
        try {
          store.delete(pods, namespace, pod.metadata.name!);
          events.record(rs, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
        } catch {
          // already gone
        }
      }
      const gone = new Set(victims.map((v) => v.metadata.uid));
      owned.splice(0, owned.length, ...owned.filter((p) => !gone.has(p.metadata.uid)));
    }
    const ready = owned.filter(podReady).length;
    const minReady = minReadySecondsOf(rs);
    const now = Date.now();
    let available = 0;
    let nextAt = Number.POSITIVE_INFINITY;
    for (const pod of owned) {
      const at = availableAtMs(pod, minReady);
      if (at === undefined) continue;
      if (minReady <= 0 || at <= now) available++;
      else nextAt = Math.min(nextAt, at);
    }
    if (nextAt !== Number.POSITIVE_INFINITY && getRunner) getRunner().enqueue('replicaset', key, Math.max(1, nextAt - now + 1));
    const status: Record<string, unknown> = {
      replicas: owned.length,
      fullyLabeledReplicas: owned.length,
      observedGeneration: rs.metadata.generation,
    };
    if (ready > 0) status.readyReplicas = ready;
    if (available > 0) status.availableReplicas = available;
    const fresh = store.peek(replicaSets, namespace, name);
    if (fresh) store.update(replicaSets, { ...fresh, status }, { subresource: 'status' });
  }

  return {
    name: 'replicaset',
    *keysFor(event) {
      if (event.kindKey === 'apps/ReplicaSet') yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      else if (event.kindKey === '/Pod') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'ReplicaSet') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}
