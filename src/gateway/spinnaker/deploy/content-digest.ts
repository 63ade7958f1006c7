/**
 * The content digest of a manifest: sha256 (hex) of a canonical JSON (keys sorted at every level) of the object
 * without `metadata` and `status`. Versioned objects carry it in the `outpost.dev/content-digest` annotation so a
 * re-deploy of identical content can reuse the existing version without reading the object's content back (Secret
 * data may not be readable).
 */
import { createHash } from 'node:crypto';
import { isRecord } from './deploy-types.js';

export const CONTENT_DIGEST_ANNOTATION = 'outpost.dev/content-digest';

/** JSON with object keys sorted, so equal content gives equal text whatever the key order. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  if (isRecord(value)) {
    const entries = Object.keys(value)
      .filter((k) => value[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The object without `metadata` and `status`, as canonical JSON. */
export function contentText(object: Record<string, unknown>): string {
  const { metadata: _metadata, status: _status, ...content } = object;
  return canonicalJson(content);
}

/** The content digest of an object (see the top of this file). */
export function contentDigest(object: Record<string, unknown>): string {
  return createHash('sha256').update(contentText(object)).digest('hex');
}
