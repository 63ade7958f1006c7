/**
 * The reduced forms the cache keeps for the lists of many server groups (src/db/schema.ts), turned back into objects
 * the views read. A pod read from the cache's `pod_instance` column (src/db/schema.ts, POD_INSTANCE) turned back into the pod the
 * views read: the same apiVersion, kind, name, namespace, uid, ownerReferences and ignore annotation, and a status with
 * the phase and each container's name and readiness — everything infrastructure-views.ts and pod-health.ts read of a
 * pod in a summary, nothing else (test/spinnaker/infrastructure-indexes.test.ts compares both forms).
 */
import type { CachedObject } from './object-facts.js';

const IGNORE = 'caching.spinnaker.io/ignore';

/** The stored instance fields of a pod, as POD_INSTANCE writes them. */
interface PodInstance {
  apiVersion?: unknown;
  kind?: unknown;
  metadata?: { name?: unknown; namespace?: unknown; uid?: unknown; ignore?: unknown; ownerReferences?: unknown };
  status?: { phase?: unknown; names?: unknown; ready?: unknown };
}

/** The pod of a `pod_instance` value. */
export function podFromInstance(value: unknown): CachedObject {
  const inst = (value ?? {}) as PodInstance;
  const meta = inst.metadata ?? {};
  const status = inst.status ?? {};
  const names = Array.isArray(status.names) ? status.names : [];
  const ready = Array.isArray(status.ready) ? status.ready : [];
  return {
    apiVersion: inst.apiVersion,
    kind: inst.kind,
    metadata: {
      name: meta.name,
      namespace: meta.namespace,
      uid: meta.uid,
      ownerReferences: Array.isArray(meta.ownerReferences) ? meta.ownerReferences : [],
      annotations: typeof meta.ignore === 'string' && meta.ignore !== '' ? { [IGNORE]: meta.ignore } : {},
    },
    status:
      Object.keys(status).length === 0
        ? {}
        : { phase: status.phase, containerStatuses: names.map((name, i) => ({ name, ready: ready[i] === true })) },
  };
}

/**
 * The server group of a `server_group_summary` value: the object as stored, with its `images` back in a pod template
 * (`spec.template.spec.containers`, in the order imagesOf reads them) — what infrastructure-views.ts reads of a server
 * group in a summary (test/spinnaker/infrastructure-indexes.test.ts compares the summaries of both forms).
 */
export function serverGroupFromSummary(value: unknown): CachedObject {
  const { images, ...object } = (value ?? {}) as CachedObject & { images?: unknown };
  const spec = (typeof object.spec === 'object' && object.spec !== null ? object.spec : {}) as Record<string, unknown>;
  const template = (typeof spec.template === 'object' && spec.template !== null ? spec.template : {}) as Record<string, unknown>;
  const containers = (Array.isArray(images) ? images : []).filter((i): i is string => typeof i === 'string').map((image) => ({ image }));
  return { ...object, spec: { ...spec, template: { ...template, spec: { containers } } } };
}
