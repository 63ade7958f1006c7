/**
 * Reading the audit log for ListAuditEvents: the filter is checked (INVALID_ARGUMENT names the bad field), then one
 * keyset page is read newest first, with a page token bound to the filters when more entries follow.
 */
import { invalidArgument } from '../http/errors.js';
import { AUDIT_KINDS, type AuditFilter, DEFAULT_AUDIT_PAGE_SIZE, MAX_AUDIT_PAGE_SIZE, type StoredAuditEntry } from './audit-entry.js';
import { decodeAuditPageToken, encodeAuditPageToken, type AuditTokenFilters } from './audit-page-token.js';
import type { AuditStore } from './audit-store.js';

/** One page of entries matching `filter`; rejects with INVALID_ARGUMENT for a bad filter or page token. */
export async function listAuditEntries(
  store: AuditStore,
  filter: AuditFilter,
): Promise<{ entries: StoredAuditEntry[]; nextPageToken: string }> {
  const requested = filter.pageSize ?? 0;
  if (!Number.isInteger(requested) || requested < 0) throw invalidArgument('page_size must be a non-negative integer');
  const pageSize = requested === 0 ? DEFAULT_AUDIT_PAGE_SIZE : Math.min(requested, MAX_AUDIT_PAGE_SIZE);
  const kind = filter.kind ?? '';
  if (kind !== '' && !(AUDIT_KINDS as readonly string[]).includes(kind))
    throw invalidArgument(`kind must be one of ${AUDIT_KINDS.join(', ')} (or empty for all), not ${JSON.stringify(kind)}`);
  for (const [field, at] of [
    ['since', filter.since],
    ['until', filter.until],
  ] as const) {
    if (at !== undefined && Number.isNaN(at.getTime())) throw invalidArgument(`${field} is not a valid time`);
  }
  if (filter.since && filter.until && filter.since.getTime() > filter.until.getTime())
    throw invalidArgument('since must not be after until');
  const bound: AuditTokenFilters = {
    account: filter.account ?? '',
    principal: filter.principal ?? '',
    kind,
    since: filter.since,
    until: filter.until,
  };
  const after = filter.pageToken ? decodeAuditPageToken(filter.pageToken, bound) : undefined;
  const rows = await store.list({ ...bound, after, limit: pageSize + 1 });
  const more = rows.length > pageSize;
  const entries = more ? rows.slice(0, pageSize) : rows;
  const last = entries.at(-1);
  const nextPageToken = more && last ? encodeAuditPageToken({ startedAt: last.startedAt, id: Number(last.id) }, bound) : '';
  return { entries, nextPageToken };
}
