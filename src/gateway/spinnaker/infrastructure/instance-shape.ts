/**
 * A pod read from the cache's `pod_instance` column (src/db/schema.ts, POD_INSTANCE) turned back into the pod the
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
