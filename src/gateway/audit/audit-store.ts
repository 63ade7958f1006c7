/**
 * The `audit_entries` rows (the only module that writes the table): batched inserts, the newest-first keyset reads of
 * ListAuditEvents, and the retention delete in bounded batches. Entries are never updated: a request's end is an
 * entry of its own (stage `completed`), beside its `started` one.
 */
import { and, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { createRawQuery } from '../../db/raw-query.js';
import { auditEntries } from '../../db/schema.js';
import { auditKindOf, type AuditEntry, type StoredAuditEntry } from './audit-entry.js';

/** Where a page starts: after the entry with this start time and id (newest-first order). */
export interface AuditCursor {
  startedAt: Date;
  id: number;
}

/** The filters of one read, already validated. */
interface AuditQuery {
  account: string;
  principal: string;
  kind: string;
  since?: Date;
  until?: Date;
  after?: AuditCursor;
  limit: number;
}

/** Database access of the audit log. */
export interface AuditStore {
  /** Inserts the entries in one statement (all or nothing). */
  insertMany(entries: StoredEntryFields[]): Promise<void>;
  /** Entries matching the query, newest first (start time, then id). */
  list(query: AuditQuery): Promise<StoredAuditEntry[]>;
  /**
   * Deletes at most `limit` entries started before `cutoff` (one statement, so a purge never holds a long lock);
   * returns how many it deleted.
   */
  deleteOlderThan(cutoff: Date, limit: number): Promise<number>;
}

/** An entry as the log hands it over: sanitized, its stage and request id set. */
export type StoredEntryFields = AuditEntry & Pick<StoredAuditEntry, 'stage' | 'requestId'>;

/** The columns an entry fills: column, its type in the batch's jsonb records, the entry's field. */
const INSERT_COLUMNS: readonly (readonly [string, string, keyof StoredEntryFields])[] = [
  ['kind', 'text', 'kind'],
  ['stage', 'text', 'stage'],
  ['request_id', 'text', 'requestId'],
  ['principal', 'text', 'principal'],
  ['groups', 'jsonb', 'groups'],
  ['account', 'text', 'account'],
  ['verb', 'text', 'verb'],
  ['api_group', 'text', 'apiGroup'],
  ['resource', 'text', 'resource'],
  ['subresource', 'text', 'subresource'],
  ['namespace', 'text', 'namespace'],
  ['name', 'text', 'name'],
  ['path', 'text', 'path'],
  ['status', 'integer', 'status'],
  ['bytes_in', 'bigint', 'bytesIn'],
  ['bytes_out', 'bigint', 'bytesOut'],
  ['duration_ms', 'integer', 'durationMs'],
  ['impersonated_user', 'text', 'impersonatedUser'],
  ['impersonated_groups', 'jsonb', 'impersonatedGroups'],
  ['gateway_id', 'text', 'gatewayId'],
  ['operation_id', 'text', 'operationId'],
  ['error', 'text', 'error'],
  ['started_at', 'timestamptz', 'startedAt'],
];

/** Inserts the jsonb array `$1` of {@link INSERT_COLUMNS} records, in the array's order. */
const INSERT_BATCH = (() => {
  const names = INSERT_COLUMNS.map(([column]) => column).join(', ');
  const typed = INSERT_COLUMNS.map(([column, type]) => `${column} ${type}`).join(', ');
  return `insert into audit_entries (${names}) select ${names}
    from rows from (jsonb_to_recordset($1::jsonb) as (${typed})) with ordinality as v(${names}, n) order by n`;
})();

/** Creates the store. */
export function createAuditStore(database: Database): AuditStore {
  const { db } = database;
  const query = createRawQuery(database);
  return {
    async insertMany(entries) {
      if (entries.length === 0) return;
      // One fixed statement text whatever the batch (prepared once per connection, no describe round trip; building
      // drizzle's multi-row insert was about 5 % of the gateway's CPU under the operations bench), the batch one jsonb;
      // ids follow the entries' order.
      const batch = entries.map((e) => Object.fromEntries(INSERT_COLUMNS.map(([column, , field]) => [column, e[field]])));
      await query(INSERT_BATCH, [JSON.stringify(batch)]);
    },
    async list(query) {
      const where: SQL[] = [];
      if (query.account) where.push(eq(auditEntries.account, query.account));
      if (query.principal) where.push(eq(auditEntries.principal, query.principal));
      if (query.kind) where.push(eq(auditEntries.kind, query.kind));
      if (query.since) where.push(gte(auditEntries.startedAt, query.since));
      if (query.until) where.push(lt(auditEntries.startedAt, query.until));
      if (query.after)
        where.push(
          sql`(${auditEntries.startedAt}, ${auditEntries.id}) < (${query.after.startedAt.toISOString()}::timestamptz, ${query.after.id})`,
        );
      const rows = await db
        .select()
        .from(auditEntries)
        .where(and(...where))
        .orderBy(desc(auditEntries.startedAt), desc(auditEntries.id))
        .limit(query.limit);
      return rows.map((r) => ({
        ...r,
        kind: auditKindOf(r.kind),
        stage: r.stage === 'started' ? 'started' : 'completed',
        id: String(r.id),
      }));
    },
    async deleteOlderThan(cutoff, limit) {
      const doomed = db.select({ id: auditEntries.id }).from(auditEntries).where(lt(auditEntries.startedAt, cutoff)).limit(limit);
      const deleted = await db.delete(auditEntries).where(inArray(auditEntries.id, doomed)).returning({ id: auditEntries.id });
      return deleted.length;
    },
  };
}
