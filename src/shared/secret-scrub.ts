/**
 * Secret scrubbing. Applied the moment an object is decoded from the API server, before it is kept anywhere or sent:
 * for a Secret, `data`, `stringData` and the kubectl last-applied annotation (which embeds the data) are removed.
 * Secret metadata (name, labels, type, …) is still forwarded so the gateway knows the object exists.
 */

/** The annotation kubectl writes on client-side apply; it holds the whole applied manifest, data included. */
export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Removes secret material from `object` in place when `kind` (or the object's own kind) is Secret, and returns it.
 * Callers must pass the kind they listed/watched: list items carry no `kind` of their own.
 */
export function scrubObject<T>(object: T, kind?: string): T {
  if (object === null || typeof object !== 'object') return object;
  const record = object as Record<string, unknown>;
  const objectKind = typeof record.kind === 'string' ? record.kind : kind;
  if (objectKind !== 'Secret' && kind !== 'Secret') return object;
  delete record.data;
  delete record.stringData;
  const metadata = record.metadata as { annotations?: Record<string, string> } | undefined;
  if (metadata?.annotations && LAST_APPLIED_ANNOTATION in metadata.annotations) {
    delete metadata.annotations[LAST_APPLIED_ANNOTATION];
  }
  return object;
}
