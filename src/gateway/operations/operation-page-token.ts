/**
 * Opaque keyset page tokens for ListOperations: the (received_at, id) of the last row returned, bound to the filters
 * of the request that produced it, so a token replayed with other filters is refused instead of skipping rows.
 */
import { createHash } from 'node:crypto';
import { invalidArgument } from '../http/errors.js';
import type { ListPosition } from './operation-store.js';

/** Filters a token is bound to. */
export interface OperationListFilters {
  account: string;
  state: string;
}

/** Encodes the position after `last`. */
export function encodeOperationPageToken(last: ListPosition, filters: OperationListFilters): string {
  return Buffer.from(JSON.stringify({ v: 1, t: last.receivedAt.getTime(), i: last.id, f: fingerprint(filters) })).toString('base64url');
}

/** Decodes a token; INVALID_ARGUMENT when it is malformed or was issued for other filters. */
export function decodeOperationPageToken(token: string, filters: OperationListFilters): ListPosition {
  let p: { v?: unknown; t?: unknown; i?: unknown; f?: unknown };
  try {
    p = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidArgument('page_token is malformed');
  }
  if (typeof p !== 'object' || p === null || p.v !== 1 || typeof p.t !== 'number' || !Number.isFinite(p.t) || typeof p.i !== 'string') {
    throw invalidArgument('page_token is malformed');
  }
  if (p.f !== fingerprint(filters)) throw invalidArgument('page_token was issued for a request with different filters');
  return { receivedAt: new Date(p.t), id: p.i };
}

function fingerprint(f: OperationListFilters): string {
  return createHash('sha256')
    .update(JSON.stringify([f.account, f.state]))
    .digest('base64url')
    .slice(0, 16);
}
