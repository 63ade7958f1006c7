/**
 * The `audit_entries` rows (the only module that writes the table): batched inserts, the newest-first keyset reads of
 * ListAuditEvents, and the retention delete in bounded batches. Entries are never updated.
 */
import { and, desc, eq, gte, inArray, lt, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { createRawQuery } from '../../db/raw-query.js';
import { auditEntries } from '../../db/schema.js';
import type { AuditEntry, StoredAuditEntry } from './audit-entry.js';

/** Where a page starts: after the entry with this start time and id (newest-first order). */
export interface AuditCursor {
  startedAt: Date;
  id: number;
}

/** The filters of one read, already validated. */
export interface AuditQuery {
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
  insertMany(entries: AuditEntry[]): Promise<void>;
  /** Entries matching the query, newest first (start time, then id). */
  list(query: AuditQuery): Promise<StoredAuditEntry[]>;
  /**
   * Deletes at most `limit` entries started before `cutoff` (one statement, so a purge never holds a long lock);
   * returns how many it deleted.
   */
  deleteOlderThan(cutoff: Date, limit: number): Promise<number>;
}

/** Creates the store. */
export function createAuditStore(database: Database): AuditStore {
  const { db } = database;
  const query = createRawQuery(database);
  return {
    async insertMany(entries) {
      if (entries.length === 0) return;
      // One fixed statement text whatever the batch (prepared once per connection, no describe round trip; drizzle's
      // builder cost about as much as the rest of an operation's submission), the batch one jsonb; ids follow the
      // entries' order.
      const batch = entries.map((e) => ({
        kind: e.kind,
        principal: e.principal,
        account: e.account,
        verb: e.verb,
        api_group: e.apiGroup,
        resource: e.resource,
        subresource: e.subresource,
        namespace: e.namespace,
        name: e.name,
        path: e.path,
        status: e.status,
        bytes_in: e.bytesIn,
        bytes_out: e.bytesOut,
        duration_ms: e.durationMs,
        impersonated_user: e.impersonatedUser,
        impersonated_groups: e.impersonatedGroups,
        gateway_id: e.gatewayId,
        operation_id: e.operationId,
        error: e.error,
        started_at: e.startedAt,
      }));
      await query(
        `insert into audit_entries (kind, principal, account, verb, api_group, resource, subresource, namespace, name, path,
          status, bytes_in, bytes_out, duration_ms, impersonated_user, impersonated_groups, gateway_id, operation_id, error, started_at)
        select kind, principal, account, verb, api_group, resource, subresource, namespace, name, path,
          status, bytes_in, bytes_out, duration_ms, impersonated_user, impersonated_groups, gateway_id, operation_id, error, started_at
        from rows from (jsonb_to_recordset($1::jsonb) as (kind text, principal text, account text, verb text, api_group text,
          resource text, subresource text, namespace text, name text, path text, status integer, bytes_in bigint, bytes_out bigint,
          duration_ms integer, impersonated_user text, impersonated_groups jsonb, gateway_id text, operation_id text, error text,
          started_at timestamptz)) with ordinality as v(kind, principal, account, verb, api_group, resource, subresource, namespace,
          name, path, status, bytes_in, bytes_out, duration_ms, impersonated_user, impersonated_groups, gateway_id, operation_id, error,
          started_at, n)
        order by n`,
        [JSON.stringify(batch)],
      );
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
      return rows.map((r) => ({ ...r, kind: r.kind === 'operation' ? 'operation' : 'kube', id: String(r.id) }));
    },
    async deleteOlderThan(cutoff, limit) {
      const doomed = db.select({ id: auditEntries.id }).from(auditEntries).where(lt(auditEntries.startedAt, cutoff)).limit(limit);
      const deleted = await db.delete(auditEntries).where(inArray(auditEntries.id, doomed)).returning({ id: auditEntries.id });
      return deleted.length;
    },
  };
}
