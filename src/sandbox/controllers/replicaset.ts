/**
 * The ReplicaSet controller: keeps spec.replicas pods (named `<replicaset>-<suffix>`, owned by the ReplicaSet) and a
 * status counting them, their readiness and availability.
 */
import type { ObjectStore } from '../store.js';
import { randomSuffix } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import { controllerRef, ownerRefTo } from './owners.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

/** True when a pod reports condition Ready=True. */
export function podReady(pod: KubeObject): boolean {
  const status = isPlainObject(pod.status) ? pod.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  return conditions.some((c) => c.type === 'Ready' && c.status === 'True');
}

/** Creates the controller. */
export function createReplicaSetController(store: ObjectStore): Controller {
  const replicaSets = store.registry.byKindKey('apps/ReplicaSet')!;
  const pods = store.registry.byKindKey('/Pod')!;

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const rs = store.peek(replicaSets, namespace, name);
    if (!rs || rs.metadata.deletionTimestamp || !isPlainObject(rs.spec)) return;
    const spec = rs.spec;
    const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const owned = store.scan(pods, { namespace }).items.filter((p) => controllerRef(p)?.uid === rs.metadata.uid && !p.metadata.deletionTimestamp);
    const template = isPlainObject(spec.template) ? spec.template : {};
    const tmeta = isPlainObject(template.metadata) ? template.metadata : {};
    for (let i = owned.length; i < desired; i++) {
      owned.push(
        store.create(pods, {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: {
            name: `${name}-${randomSuffix()}`,
            namespace,
            labels: cloneJson(tmeta.labels ?? {}),
            ...(isPlainObject(tmeta.annotations) ? { annotations: cloneJson(tmeta.annotations) } : {}),
            ownerReferences: [ownerRefTo(rs)],
          },
          spec: cloneJson(template.spec ?? {}),
          status: { phase: 'Pending', qosClass: 'BestEffort' },
        }),
      );
    }
    if (owned.length > desired) {
      const victims = [...owned]
        .sort((a, b) => Number(podReady(a)) - Number(podReady(b)) || (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''))
        .slice(0, owned.length - desired);
      for (const pod of victims) {
        try {
          store.delete(pods, namespace, pod.metadata.name!);
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
