/**
 * Secret scrubbing. Applied the moment an object is decoded from the API server, before it is kept anywhere or sent:
 * for a Secret, `data`, `stringData` and the kubectl last-applied annotation (which embeds the data) are removed, and
 * so is any other string of the object that holds one of its values — a value some client copied into an annotation,
 * a label, a finalizer… (a JSON patch's `copy`, `kubectl annotate` run in the cluster, an older agent's patch). Secret
 * metadata (name, labels, type, …) is still forwarded so the gateway knows the object exists.
 *
 * Only the agent can do the second part: it compares with the values, which nothing downstream ever sees. The
 * gateway, scrubbing again, can do it only for an object that still carries its data.
 */
import { createSecretValueMatcher, secretValuesOf, type SecretValueMatcher } from './secret-values.js';

/** The annotation kubectl writes on client-side apply; it holds the whole applied manifest, data included. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The fields that say which object this is: set by the API server or fixed at creation, never holding a copied
 * value, and needed to key the object. Never removed, never compared. (`generation` and `deletionGracePeriodSeconds`
 * are numbers, which never hold a value: only strings are compared.)
 */
const IDENTITY = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'selfLink']);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Removes secret material from `object` in place when `kind` (or the object's own kind) is Secret, and returns it.
 * Callers must pass the kind they listed/watched: list items carry no `kind` of their own.
 */
export function scrubObject<T>(object: T, kind?: string): T {
  if (object === null || typeof object !== 'object') return object;
  const record = object as Record<string, unknown>;
  if (record.kind !== 'Secret' && kind !== 'Secret') return object;
  removeSecretMaterial(record);
  return object;
}

/**
 * Removes `data`, `stringData`, the last-applied annotation and every string holding one of the Secret's values
 * (see {@link removeCopiedValues}) from a Secret object in place (the caller decided it is a Secret). Returns true
 * when there was anything to remove: a gateway that had to do it logs that the agent did not.
 */
export function removeSecretMaterial(secret: Record<string, unknown>): boolean {
  const values = exposableValues(secret);
  let removed = false;
  for (const field of ['data', 'stringData']) {
    if (field in secret) {
      delete secret[field];
      removed = true;
    }
  }
  const annotations = (secret.metadata as { annotations?: unknown } | undefined)?.annotations;
  if (annotations !== null && typeof annotations === 'object' && LAST_APPLIED_ANNOTATION in annotations) {
    delete (annotations as Record<string, unknown>)[LAST_APPLIED_ANNOTATION];
    removed = true;
  }
  // Values come only from data and stringData, so with any value `removed` is already true. (Without any, the
  // matcher holds nothing and the walk removes nothing.)
  removeCopiedValues(secret, createSecretValueMatcher(values));
  return removed;
}

/** A matcher for the values of `secret` that other strings of it may not hold (see {@link removeCopiedValues}). */
export function copiedValueMatcher(secret: Record<string, unknown>): SecretValueMatcher {
  return createSecretValueMatcher(exposableValues(secret));
}

/**
 * The Secret's values (./secret-values.ts) except those its identity shows anyway: a service account token Secret's
 * `namespace` value is the Secret's own namespace, and its `kubernetes.io/service-account.name` annotation is often
 * the same word — hiding it would hide nothing.
 */
function exposableValues(secret: Record<string, unknown>): string[] {
  const meta = isRecord(secret.metadata) ? secret.metadata : {};
  const shown = new Set<unknown>([meta.name, meta.namespace]);
  return secretValuesOf(secret).filter((value) => !shown.has(value));
}

/** True when any string in `value` holds a value, or any key of an object in it contains one. */
function holdsAnywhere(value: unknown, matcher: SecretValueMatcher): boolean {
  if (typeof value === 'string') return matcher.holds(value);
  if (Array.isArray(value)) return value.some((item) => holdsAnywhere(item, matcher));
  if (isRecord(value)) return Object.entries(value).some(([k, v]) => matcher.contains(k) || holdsAnywhere(v, matcher));
  return false;
}

/**
 * Removes, in place, each place outside the Secret's identity where a string holds one of its values (or a key
 * contains one), with the smallest unit that holds it: a label or an annotation (key and value), an entry of a metadata list
 * (a finalizer, an owner reference, a managedFields entry), any other metadata field, or a top-level field (`type`).
 */
function removeCopiedValues(secret: Record<string, unknown>, matcher: SecretValueMatcher): void {
  const meta = secret.metadata;
  if (isRecord(meta)) {
    for (const [field, value] of Object.entries(meta)) {
      if (IDENTITY.has(field)) continue;
      if ((field === 'labels' || field === 'annotations') && isRecord(value)) {
        for (const [key, text] of Object.entries(value)) {
          if (matcher.contains(key) || holdsAnywhere(text, matcher)) delete value[key];
        }
      } else if (Array.isArray(value)) {
        meta[field] = value.filter((item) => !holdsAnywhere(item, matcher));
      } else if (holdsAnywhere(value, matcher)) {
        delete meta[field];
      }
    }
  }
  for (const [field, value] of Object.entries(secret)) {
    if (field === 'apiVersion' || field === 'kind' || field === 'metadata') continue;
    if (holdsAnywhere(value, matcher)) delete secret[field];
  }
}
