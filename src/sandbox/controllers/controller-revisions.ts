/**
 * ControllerRevisions (apps/v1) for StatefulSets and DaemonSets, as Kubernetes keeps them: one per distinct pod
 * template, named `<owner>-<hash>`, owned by the workload, holding `data.spec.template` (with `$patch: replace`, the
 * form `kubectl rollout undo` patches back) and a `revision` number; returning to an older template gives its
 * revision the next number. Old revisions beyond spec.revisionHistoryLimit (default 10) are deleted. The revision
 * name is what pods carry in their `controller-revision-hash` label and the status in currentRevision/updateRevision.
 */
import type { ObjectStore } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import { controllerRef, ownerRefTo } from './owners.js';
import { prunedTemplateHash, templateOf } from './pod-template.js';

/** The label pods and revisions carry. */
export const REVISION_HASH_LABEL = 'controller-revision-hash';

/** The revisions of one workload after {@link syncRevisions}. */
export interface Revisions {
  /** The name of the revision of the current template. */
  updateRevision: string;
  /** The template a revision name stands for (undefined when that revision is gone). */
  templateFor(revisionName: string): Record<string, unknown> | undefined;
}

function revisionNumber(cr: KubeObject): number {
  return typeof cr.revision === 'number' ? cr.revision : 0;
}

/**
 * Makes sure the owner's current template has a ControllerRevision with the highest revision number, prunes history
 * and returns the revision names. `keep` names revisions that must survive pruning (e.g. the status' currentRevision).
 * Writes to the store: call it from a reconcile only.
 */
export function syncRevisions(store: ObjectStore, owner: KubeObject, keep: string[] = []): Revisions {
  const info = store.registry.byKindKey('apps/ControllerRevision')!;
  const namespace = owner.metadata.namespace;
  const owned = store.scan(info, { namespace }).items.filter((cr) => controllerRef(cr)?.uid === owner.metadata.uid);
  const template = templateOf(owner);
  const hash = prunedTemplateHash(template);
  const name = `${owner.metadata.name}-${hash}`;
  const max = owned.reduce((m, cr) => Math.max(m, revisionNumber(cr)), 0);
  const existing = owned.find((cr) => cr.metadata.name === name);
  const spec = isPlainObject(owner.spec) ? owner.spec : {};
  const selector =
    isPlainObject(spec.selector) && isPlainObject(spec.selector.matchLabels) ? (spec.selector.matchLabels as Record<string, string>) : {};
  if (!existing) {
    if (store.peek(info, namespace, name)) store.delete(info, namespace, name); // a leftover of an earlier owner of that name
    store.create(info, {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name, namespace, labels: { ...selector, 'controller.kubernetes.io/hash': hash }, ownerReferences: [ownerRefTo(owner)] },
      data: { spec: { template: { ...cloneJson(template), $patch: 'replace' } } },
      revision: max + 1,
    });
  } else if (revisionNumber(existing) !== max || owned.filter((cr) => revisionNumber(cr) === max).length > 1) {
    store.update(info, { ...existing, revision: max + 1 });
  }
  const limit = typeof spec.revisionHistoryLimit === 'number' ? spec.revisionHistoryLimit : 10;
  const history = owned
    .filter((cr) => cr.metadata.name !== name && !keep.includes(cr.metadata.name!))
    .sort((a, b) => revisionNumber(a) - revisionNumber(b));
  for (const cr of history.slice(0, Math.max(0, history.length - limit))) {
    try {
      store.delete(info, namespace, cr.metadata.name!);
    } catch {
      // already gone
    }
  }
  return {
    updateRevision: name,
    templateFor(revisionName) {
      if (revisionName === name) return template;
      const cr = store.peek(info, namespace, revisionName);
      const data =
        cr && isPlainObject(cr.data) && isPlainObject(cr.data.spec) && isPlainObject(cr.data.spec.template)
          ? cloneJson(cr.data.spec.template)
          : undefined;
      if (data) delete data.$patch;
      return data;
    },
  };
}
