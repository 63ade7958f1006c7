/**
 * Plain-JSON shapes the sandbox API server stores and serves. Objects are kept exactly as clients send them (after
 * defaulting), so these types only name the fields the server itself reads or writes.
 */

/** Kubernetes ObjectMeta, as far as the sandbox reads or fills it. */
interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
  [key: string]: unknown;
}

/** A reference from a dependent to its owner; drives garbage collection. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** Any stored object: apiVersion, kind and metadata are always present once stored. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  [key: string]: unknown;
}

/** The three change types a watch streams (BOOKMARK and ERROR are produced by the watch handler). */
export type ChangeType = 'ADDED' | 'MODIFIED' | 'DELETED';

/** One committed change, kept in the history window for watch resume. */
export interface StoreEvent {
  type: ChangeType;
  /** `group/Kind` (core kinds: `/Pod`). */
  kindKey: string;
  /** The object after the change (for DELETED: the last state, with the deletion's resourceVersion). */
  object: KubeObject;
  /** The object before the change (MODIFIED and DELETED). */
  oldObject?: KubeObject;
  /** The cluster-wide resourceVersion this change produced. */
  rv: number;
  /** Serialized `{"type":…,"object":…}` line, computed once and shared by every watcher. */
  line?: string;
}

/** Returns true for a plain JSON object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Deep copy of plain JSON data. */
export function cloneJson<T>(value: T): T {
  return structuredClone(value);
}
