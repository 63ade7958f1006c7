/**
 * The DaemonSet controller for the sandbox's single node: one pod `<name>-<suffix>` bound to `sandbox-node`, labelled
 * with `controller-revision-hash` (its template's revision, controller-revisions.ts) and `pod-template-generation`.
 * A template change under RollingUpdate (the default) deletes the old pod and creates one from the new template;
 * under OnDelete the old pod stays until someone deletes it. Failed pods are not replaced. The status counts against
 * one desired pod: desiredNumberScheduled 1, currentNumberScheduled, updatedNumberScheduled (pods at the current
 * revision), numberReady, numberAvailable, numberUnavailable, observedGeneration.
 */
import type { ObjectStore } from '../store.js';
import { randomSuffix } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import { REVISION_HASH_LABEL, syncRevisions } from './controller-revisions.js';
import type { EventRecorder } from './event-recorder.js';
import { SANDBOX_NODE } from './kubelet.js';
import { controllerRef } from './owners.js';
import { createPodFor, isControlledBy, podFromTemplate } from './pod-template.js';
import { podReady } from './pod-availability.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

const COMPONENT = 'daemonset-controller';

/** Creates the controller; `events` records SuccessfulCreate / SuccessfulDelete. */
export function createDaemonSetController(store: ObjectStore, events: EventRecorder): Controller {
  const daemonSets = store.registry.byKindKey('apps/DaemonSet')!;
  const pods = store.registry.byKindKey('/Pod')!;

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const ds = store.peek(daemonSets, namespace, name);
    if (!ds || ds.metadata.deletionTimestamp || !isPlainObject(ds.spec)) return;
    const spec = ds.spec;
    const revisions = syncRevisions(store, ds);
    const updateRevision = revisions.updateRevision;
    const strategy = isPlainObject(spec.updateStrategy) ? spec.updateStrategy : {};
    const onDelete = strategy.type === 'OnDelete';
    const revisionOf = (pod: KubeObject) => pod.metadata.labels?.[REVISION_HASH_LABEL];
    let owned = store.scan(pods, { namespace }).items.filter((p) => isControlledBy(p, ds));
    // one pod per node: extra pods go, newest first
    const sorted = [...owned].sort((a, b) => Number(revisionOf(b) === updateRevision) - Number(revisionOf(a) === updateRevision));
    for (const pod of sorted.slice(1)) remove(ds, pod);
    owned = sorted.slice(0, 1);
    if (owned.length === 1 && !onDelete && revisionOf(owned[0]!) !== updateRevision) {
      remove(ds, owned[0]!);
      owned = [];
    }
    if (owned.length === 0) {
      const template = revisions.templateFor(updateRevision)!;
      const labels = { [REVISION_HASH_LABEL]: updateRevision, 'pod-template-generation': String(ds.metadata.generation ?? 1) };
      const body = podFromTemplate(ds, template, `${name}-${randomSuffix()}`, labels, { nodeName: SANDBOX_NODE });
      const pod = createPodFor(store, pods, ds, body, events, COMPONENT);
      if (pod) {
        events.record(ds, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
        owned = [pod];
      }
    }
    const ready = owned.filter(podReady).length;
    const updated = owned.filter((p) => revisionOf(p) === updateRevision).length;
    const status: Record<string, unknown> = {
      observedGeneration: ds.metadata.generation,
      desiredNumberScheduled: 1,
      currentNumberScheduled: owned.length,
      numberMisscheduled: 0,
      numberReady: ready,
      ...(ready > 0 ? { numberAvailable: ready } : {}),
      ...(updated > 0 ? { updatedNumberScheduled: updated } : {}),
      ...(1 - ready > 0 ? { numberUnavailable: 1 - ready } : {}),
    };
    const fresh = store.peek(daemonSets, namespace, name);
    if (fresh) store.update(daemonSets, { ...fresh, status }, { subresource: 'status' });
  }

  function remove(ds: KubeObject, pod: KubeObject): void {
    try {
      store.delete(pods, pod.metadata.namespace, pod.metadata.name!);
      events.record(ds, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
    } catch {
      // already gone
    }
  }

  return {
    name: 'daemonset',
    *keysFor(event) {
      if (event.kindKey === 'apps/DaemonSet') {
        if (event.type !== 'DELETED') yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      } else if (event.kindKey === '/Pod') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'DaemonSet') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}
