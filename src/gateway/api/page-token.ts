/**
 * Opaque keyset page tokens for ListObjects: the sort key of the last row returned, bound to the filters of the
 * request that produced it (a token replayed with other filters is refused instead of returning a wrong page).
 */
import { createHash } from 'node:crypto';
import type { ObjectKey } from '../cache/object-key-order.js';
import { invalidArgument } from '../http/errors.js';

/** The filters a token is bound to. */
export interface PageFilters {
  account: string;
  kind: string;
  namespace: string;
  labelSelector: string;
  omitObject: boolean;
  ownerUid: string;
  involvedObjectUid: string;
}

/** Encodes the position after `key` for these filters. */
export function encodePageToken(key: ObjectKey, filters: PageFilters): string {
  return Buffer.from(JSON.stringify({ v: 1, k: key, f: fingerprint(filters) })).toString('base64url');
}

/** Decodes a token; throws INVALID_ARGUMENT when it is malformed or was issued for different filters. */
export function decodePageToken(token: string, filters: PageFilters): ObjectKey {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidArgument('page_token is malformed');
  }
  const p = parsed as { v?: unknown; k?: unknown; f?: unknown };
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    p.v !== 1 ||
    !Array.isArray(p.k) ||
    p.k.length !== 5 ||
    !p.k.every((x) => typeof x === 'string')
  ) {
    throw invalidArgument('page_token is malformed');
  }
  if (p.f !== fingerprint(filters)) throw invalidArgument('page_token was issued for a request with different filters');
  return p.k as ObjectKey;
}

function fingerprint(f: PageFilters): string {
  // owner_uid and involved_object_uid join the list only when set, so tokens issued before they existed (a rolling
  // upgrade) stay valid.
  const text = JSON.stringify([
    f.account,
    f.kind,
    f.namespace,
    f.labelSelector,
    f.omitObject,
    ...(f.ownerUid ? [f.ownerUid] : []),
    ...(f.involvedObjectUid ? [`involved:${f.involvedObjectUid}`] : []),
  ]);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
