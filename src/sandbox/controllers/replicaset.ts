/**
 * The ReplicaSet controller: keeps spec.replicas pods (named `<replicaset>-<suffix>`, owned by the ReplicaSet) and a
 * status counting them, their readiness and availability. Failed pods are kept and counted (not ready), not
 * replaced: a pod told to fail (pod-controls.ts) must not make the sandbox churn pods. Creates at most a burst of
 * pods per reconcile and stops at the store's pod capacity (FailedCreate). Records SuccessfulCreate / SuccessfulDelete
 * Events.
 */
import type { ObjectStore } from '../store.js';
import { randomSuffix } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef } from './owners.js';
import { BURST_PODS, createPodFor, podFromTemplate } from './pod-template.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

const COMPONENT = 'replicaset-controller';

/** True when a pod reports condition Ready=True. */
export function podReady(pod: KubeObject): boolean {
  const status = isPlainObject(pod.status) ? pod.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Creates the controller; `events` records pod creations and deletions. */
export function createReplicaSetController(store: ObjectStore, events: EventRecorder): Controller {
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
      const victims = [...owned]
        .sort(
          (a, b) =>
            Number(podReady(a)) - Number(podReady(b)) ||
            (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''),
        )
        .slice(0, owned.length - desired);
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
    const status: Record<string, unknown> = {
      replicas: owned.length,
      fullyLabeledReplicas: owned.length,
      observedGeneration: rs.metadata.generation,
    };
    if (ready > 0) {
      status.readyReplicas = ready;
      status.availableReplicas = ready;
    }
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
