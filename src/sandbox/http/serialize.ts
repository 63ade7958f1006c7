/**
 * JSON encoding of stored objects with a per-object cache. Stored objects are immutable, so the text of an object is
 * computed once and reused by every list page and watch that sends it (this is what keeps 100k-object lists and
 * many parallel watches cheap). Objects served under a non-storage version of a CRD get their apiVersion rewritten.
 */
import type { KubeObject } from '../types.js';

const cache = new WeakMap<KubeObject, string>();

/** JSON text of a stored object, as `apiVersion` when given and different from the stored one. */
export function objectJson(obj: KubeObject, apiVersion?: string): string {
  if (apiVersion && apiVersion !== obj.apiVersion) return JSON.stringify({ ...obj, apiVersion });
  let text = cache.get(obj);
  if (text === undefined) {
    text = JSON.stringify(obj);
    cache.set(obj, text);
  }
  return text;
}

/** JSON text of a List of stored objects. */
export function listJson(listKind: string, apiVersion: string, metadata: Record<string, unknown>, items: KubeObject[]): string {
  const head = `{"kind":${JSON.stringify(listKind)},"apiVersion":${JSON.stringify(apiVersion)},"metadata":${JSON.stringify(metadata)},"items":[`;
  const parts: string[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) parts[i] = objectJson(items[i]!, apiVersion);
  return `${head}${parts.join(',')}]}`;
}
