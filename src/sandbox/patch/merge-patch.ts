/**
 * JSON merge patch (RFC 7386), `application/merge-patch+json`: objects merge recursively, `null` deletes a member,
 * everything else (arrays included) replaces. What kubectl sends for CRDs and `kubectl patch --type merge`.
 */
import { PatchError, cloneJson, isObject } from './errors.js';

function merge(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return cloneJson(patch);
  const out: Record<string, unknown> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = merge(out[k], v);
  }
  return out;
}

/**
 * Applies an RFC 7386 merge patch to a copy of `target` and returns it; `target` is never mutated. The patch must be
 * a JSON object (a merge patch that is not an object would replace the whole resource) — anything else is a 400
 * {@link PatchError}.
 */
export function applyMergePatch(target: object, patch: unknown): Record<string, unknown> {
  if (!isObject(patch)) throw new PatchError(400, 'merge patch must be a JSON object');
  return merge(cloneJson(target), patch) as Record<string, unknown>;
}
