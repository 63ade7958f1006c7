/**
 * Opaque page tokens of ListAuditEvents: the start time and id of the last entry returned, bound to the filters of the
 * request that produced it (a token replayed with other filters is refused instead of returning a wrong page).
 */
import { createHash } from 'node:crypto';
import { invalidArgument } from '../http/errors.js';
import type { AuditCursor } from './audit-store.js';

/** The filters a token is bound to. */
export interface AuditTokenFilters {
  account: string;
  principal: string;
  kind: string;
  since?: Date;
  until?: Date;
}

/** Encodes the position after `cursor` for these filters. */
export function encodeAuditPageToken(cursor: AuditCursor, filters: AuditTokenFilters): string {
  const body = { v: 1, t: cursor.startedAt.toISOString(), i: cursor.id, f: fingerprint(filters) };
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/** Decodes a token; throws INVALID_ARGUMENT when it is malformed or was issued for different filters. */
export function decodeAuditPageToken(token: string, filters: AuditTokenFilters): AuditCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalidArgument('page_token is malformed');
  }
  const p = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as { v?: unknown; t?: unknown; i?: unknown; f?: unknown };
  const startedAt = typeof p.t === 'string' ? new Date(p.t) : undefined;
  if (p.v !== 1 || !startedAt || Number.isNaN(startedAt.getTime()) || !Number.isSafeInteger(p.i) || (p.i as number) < 0)
    throw invalidArgument('page_token is malformed');
  if (p.f !== fingerprint(filters)) throw invalidArgument('page_token was issued for a request with different filters');
  return { startedAt, id: p.i as number };
}

function fingerprint(f: AuditTokenFilters): string {
  const text = JSON.stringify([f.account, f.principal, f.kind, f.since?.toISOString() ?? '', f.until?.toISOString() ?? '']);
  return createHash('sha256').update(text).digest('base64url').slice(0, 16);
}
