/**
 * What Clouddriver's Kubernetes provider reads off one cached object for Deck's infrastructure views
 * (docs/spinnaker.md, "Infrastructure views"): its Spinnaker class (§3.1 of the Deck contract), full name, moniker in
 * kork's shape (§3.3, through moniker.ts), owners (§3.4–3.5), the `traffic.spinnaker.io/load-balancers` annotation
 * (§3.6), capacity, images and creation time (§3.8). Pure functions of the object; nothing here reads the database.
 */
import { registeredKindOf, spinnakerKindOf, type SpinnakerCategory } from '../../status/kind-names.js';
import { monikerOf } from '../moniker.js';

/** A cached Kubernetes object, as the `objects` table stores it. */
export type CachedObject = Record<string, unknown>;

/** Kork's `Moniker`, nulls included (Deck copies every key onto the server group). */
export interface KorkMoniker {
  app: string | null;
  cluster: string | null;
  detail: string | null;
  stack: string | null;
  sequence: number | null;
}

/** The Kubernetes kinds of Spinnaker's server groups (Jobs and CronJobs too, as Clouddriver's handlers class them). */
export const SERVER_GROUP_KINDS = ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'Job', 'CronJob'] as const;
/** The kinds of server-group managers. */
export const MANAGER_KINDS = ['Deployment'] as const;
/** The kinds of load balancers. */
export const LOAD_BALANCER_KINDS = ['Service', 'Ingress'] as const;
/** The kinds of firewalls (security groups). */
export const SECURITY_GROUP_KINDS = ['NetworkPolicy'] as const;

const IGNORE = 'caching.spinnaker.io/ignore';
const TRAFFIC = 'traffic.spinnaker.io/load-balancers';

/** A plain-object field, or {} (never throws on odd shapes: the cache holds whatever the cluster served). */
export function recordAt(value: unknown, ...path: string[]): Record<string, unknown> {
  let current = value;
  for (const key of path)
    current =
      current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>)[key] : undefined;
  return current !== null && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
}

/** An array field, or []. */
export function arrayAt(value: unknown, ...path: string[]): unknown[] {
  const last = path.at(-1);
  const parent = recordAt(value, ...path.slice(0, -1));
  const found = last === undefined ? value : parent[last];
  return Array.isArray(found) ? found : [];
}

/** A string field, or ''. */
export function textAt(value: unknown, ...path: string[]): string {
  const last = path.at(-1);
  const found = last === undefined ? value : recordAt(value, ...path.slice(0, -1))[last];
  return typeof found === 'string' ? found : '';
}

/** The object's Spinnaker class (§3.1); `unclassified` for kinds of other groups and for everything else. */
export function spinnakerClassOf(object: CachedObject): SpinnakerCategory {
  const kind = textAt(object, 'kind');
  const registered = registeredKindOf(textAt(object, 'apiVersion'), kind);
  return registered ? registered.category : 'unclassified';
}

/** True for objects Clouddriver does not cache at all (`caching.spinnaker.io/ignore: "true"`). */
export function isIgnored(object: CachedObject): boolean {
  return textAt(object, 'metadata', 'annotations', IGNORE) === 'true';
}

/** `"<spinnaker kind> <name>"`: `replicaSet hello-6d4cf56db6`. */
export function fullNameOf(object: CachedObject): string {
  return `${spinnakerKindOf(textAt(object, 'apiVersion'), textAt(object, 'kind'))} ${textAt(object, 'metadata', 'name')}`;
}

/** Spinnaker's kind spelling of the object (`replicaSet`). */
export function kindNameOf(object: CachedObject): string {
  return spinnakerKindOf(textAt(object, 'apiVersion'), textAt(object, 'kind'));
}

/** The moniker in kork's shape: annotations first, Frigga's parse of the name after, ReplicaSet revisions as sequence. */
export function korkMonikerOf(object: CachedObject): KorkMoniker {
  const m = monikerOf(object);
  return { app: m.app || null, cluster: m.cluster || null, detail: m.detail ?? null, stack: m.stack ?? null, sequence: m.sequence ?? null };
}

/** `metadata.creationTimestamp` in epoch milliseconds; null when absent or unreadable. */
export function createdTimeOf(object: CachedObject): number | null {
  const time = Date.parse(textAt(object, 'metadata', 'creationTimestamp'));
  return Number.isFinite(time) ? time : null;
}

/** `metadata.labels`, or null when there are none (as Clouddriver serializes an empty label map on view models). */
export function labelsOrNull(object: CachedObject): Record<string, string> | null {
  const labels = recordAt(object, 'metadata', 'labels') as Record<string, string>;
  return Object.keys(labels).length > 0 ? labels : null;
}

/** `metadata.labels` as a map ({} when none). */
export function labelsOf(object: CachedObject): Record<string, string> {
  return recordAt(object, 'metadata', 'labels') as Record<string, string>;
}

/** An owner named by `metadata.ownerReferences[]`. */
export interface OwnerRef {
  kind: string;
  name: string;
  uid: string;
  controller: boolean;
}

/** Every owner reference (not only the controller), as Clouddriver links them. */
export function ownersOf(object: CachedObject): OwnerRef[] {
  return arrayAt(object, 'metadata', 'ownerReferences').map((ref) => ({
    kind: textAt(ref, 'kind'),
    name: textAt(ref, 'name'),
    uid: textAt(ref, 'uid'),
    controller: recordAt(ref).controller === true,
  }));
}

/** `spec.replicas` (0 when absent, as for a DaemonSet). */
export function desiredReplicasOf(object: CachedObject): number {
  const replicas = recordAt(object, 'spec').replicas;
  return typeof replicas === 'number' ? replicas : 0;
}

/** The distinct images of the pod template (`spec.template`, or a CronJob's `spec.jobTemplate.spec.template`), in order. */
export function imagesOf(object: CachedObject): string[] {
  const images = new Set<string>();
  for (const podSpec of [
    recordAt(object, 'spec', 'template', 'spec'),
    recordAt(object, 'spec', 'jobTemplate', 'spec', 'template', 'spec'),
  ]) {
    for (const key of ['containers', 'initContainers']) {
      for (const container of arrayAt(podSpec, key)) {
        const image = textAt(container, 'image');
        if (image) images.add(image);
      }
    }
  }
  return [...images];
}

/** The load balancers the `traffic.spinnaker.io/load-balancers` annotation lists (a JSON array of full names). */
export function annotatedLoadBalancersOf(object: CachedObject): string[] {
  const text = textAt(object, 'metadata', 'annotations', TRAFFIC);
  if (!text) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter((n): n is string => typeof n === 'string') : [];
  } catch {
    return [];
  }
}
