/**
 * The StatefulSet controller: pods `<name>-0 … <name>-(N-1)` with stable names, the `controller-revision-hash`,
 * `statefulset.kubernetes.io/pod-name` and `apps.kubernetes.io/pod-index` labels, hostname and subdomain. With the
 * default OrderedReady policy a pod is created only once every lower ordinal is Running and Ready; Parallel creates
 * them all. Scaling down removes the highest ordinals first (one at a time under OrderedReady). A template change
 * makes a new revision (controller-revisions.ts); RollingUpdate replaces pods from the highest ordinal down to
 * `rollingUpdate.partition`, one at a time, each only once every pod is Ready; OnDelete replaces nothing (a deleted
 * pod comes back at the new revision). Failed pods are not replaced. Status follows the pods. Creates at most a burst
 * of pods per reconcile and stops at the store's pod capacity (FailedCreate).
 */
import type { ObjectStore } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { REVISION_HASH_LABEL, syncRevisions } from './controller-revisions.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef } from './owners.js';
import { BURST_PODS, createPodFor, isControlledBy, podFromTemplate } from './pod-template.js';
import { podReady } from './pod-availability.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

const COMPONENT = 'statefulset-controller';

/** Creates the controller; `events` records SuccessfulCreate / SuccessfulDelete. */
export function createStatefulSetController(store: ObjectStore, events: EventRecorder): Controller {
  const statefulSets = store.registry.byKindKey('apps/StatefulSet')!;
  const pods = store.registry.byKindKey('/Pod')!;

  function ordinalPods(sts: KubeObject): Map<number, KubeObject> {
    const prefix = `${sts.metadata.name}-`;
    const out = new Map<number, KubeObject>();
    for (const pod of store.scan(pods, { namespace: sts.metadata.namespace }).items) {
      if (!isControlledBy(pod, sts) || !pod.metadata.name!.startsWith(prefix)) continue;
      const ordinal = pod.metadata.name!.slice(prefix.length);
      if (/^(0|[1-9]\d*)$/.test(ordinal)) out.set(Number(ordinal), pod);
    }
    return out;
  }

  function remove(sts: KubeObject, pod: KubeObject): void {
    try {
      store.delete(pods, pod.metadata.namespace, pod.metadata.name!);
      events.record(
        sts,
        'Normal',
        'SuccessfulDelete',
        `delete Pod ${pod.metadata.name} in StatefulSet ${sts.metadata.name} successful`,
        COMPONENT,
      );
    } catch {
      // already gone
    }
  }

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const sts = store.peek(statefulSets, namespace, name);
    if (!sts || sts.metadata.deletionTimestamp || !isPlainObject(sts.spec)) return;
    const spec = sts.spec;
    const replicas = typeof spec.replicas === 'number' ? spec.replicas : 1;
    const old = isPlainObject(sts.status) ? sts.status : {};
    const previousCurrent = typeof old.currentRevision === 'string' ? old.currentRevision : undefined;
    const revisions = syncRevisions(store, sts, previousCurrent ? [previousCurrent] : []);
    const updateRevision = revisions.updateRevision;
    let currentRevision = previousCurrent && revisions.templateFor(previousCurrent) ? previousCurrent : updateRevision;
    const strategy = isPlainObject(spec.updateStrategy) ? spec.updateStrategy : {};
    const onDelete = strategy.type === 'OnDelete';
    const rolling = isPlainObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
    const partition = typeof rolling.partition === 'number' ? Math.max(0, rolling.partition) : 0;
    const parallel = spec.podManagementPolicy === 'Parallel';
    const revisionOf = (pod: KubeObject) => pod.metadata.labels?.[REVISION_HASH_LABEL];

    let byOrdinal = ordinalPods(sts);
    let changed = false;
    // create missing ordinals, in order unless Parallel (then at most a burst per reconcile: each pod's event queues
    // this key again for the rest)
    let created = 0;
    for (let i = 0; i < replicas && created < BURST_PODS; i++) {
      if (byOrdinal.has(i)) continue;
      if (!parallel && [...byOrdinal.entries()].some(([j, p]) => j < i && !podReady(p))) break;
      const revision = !onDelete && i < partition ? currentRevision : updateRevision;
      const template = revisions.templateFor(revision) ?? revisions.templateFor(updateRevision)!;
      const podName = `${name}-${i}`;
      const labels = {
        [REVISION_HASH_LABEL]: revision,
        'statefulset.kubernetes.io/pod-name': podName,
        'apps.kubernetes.io/pod-index': String(i),
      };
      const specExtra = {
        hostname: podName,
        ...(typeof spec.serviceName === 'string' && spec.serviceName ? { subdomain: spec.serviceName } : {}),
      };
      const pod = createPodFor(store, pods, sts, podFromTemplate(sts, template, podName, labels, specExtra), events, COMPONENT);
      if (!pod) break;
      events.record(sts, 'Normal', 'SuccessfulCreate', `create Pod ${podName} in StatefulSet ${name} successful`, COMPONENT);
      byOrdinal.set(i, pod);
      created++;
      changed = true;
      if (!parallel) break; // the next one waits for this one to be Ready
    }
    // scale down: highest ordinals first
    const excess = [...byOrdinal.keys()].filter((i) => i >= replicas).sort((a, b) => b - a);
    for (const i of parallel ? excess : excess.slice(0, 1)) {
      remove(sts, byOrdinal.get(i)!);
      changed = true;
    }
    // rolling update: highest ordinal first, down to the partition, one pod at a time while everything is Ready
    if (!changed && !onDelete) {
      const allReady = [...byOrdinal.values()].every(podReady) && byOrdinal.size === replicas;
      for (let i = replicas - 1; i >= partition && allReady; i--) {
        const pod = byOrdinal.get(i);
        if (pod && revisionOf(pod) !== updateRevision) {
          remove(sts, pod);
          break;
        }
      }
    }
    byOrdinal = ordinalPods(sts);
    const all = [...byOrdinal.values()];
    const ready = all.filter(podReady).length;
    const updated = all.filter((p) => revisionOf(p) === updateRevision).length;
    let current = all.filter((p) => revisionOf(p) === currentRevision).length;
    if (!onDelete && updated === replicas && all.length === replicas && ready === replicas) {
      currentRevision = updateRevision;
      current = updated;
    }
    const status: Record<string, unknown> = {
      observedGeneration: sts.metadata.generation,
      replicas: all.length,
      ...(ready > 0 ? { readyReplicas: ready } : {}),
      ...(current > 0 ? { currentReplicas: current } : {}),
      ...(updated > 0 ? { updatedReplicas: updated } : {}),
      currentRevision,
      updateRevision,
      collisionCount: 0,
      availableReplicas: ready,
    };
    const fresh = store.peek(statefulSets, namespace, name);
    if (fresh) store.update(statefulSets, { ...fresh, status }, { subresource: 'status' });
  }

  return {
    name: 'statefulset',
    *keysFor(event) {
      if (event.kindKey === 'apps/StatefulSet') {
        if (event.type !== 'DELETED') yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      } else if (event.kindKey === '/Pod') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'StatefulSet') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}
