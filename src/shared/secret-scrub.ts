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
  removeSecretMaterial(record);
  return object;
}

/**
 * Removes `data`, `stringData` and the last-applied annotation from a Secret object in place (the caller decided it
 * is a Secret). Returns true when there was anything to remove: a gateway that had to do it logs that the agent did
 * not.
 */
export function removeSecretMaterial(secret: Record<string, unknown>): boolean {
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
  return removed;
}
