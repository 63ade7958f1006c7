/**
 * The raw SQL statements on the `operations` table: the batched writes of the hot path (one fixed statement text per
 * kind, its batch one jsonb parameter, so each is prepared once per connection) and the rewrite of requests stored
 * before Secret values were sealed (legacy-requests.ts). With operation-store.ts this file is the only place that
 * writes `operations` rows (docs/architecture.md, rule 6); test/docs/table-owners.test.ts enforces it.
 */
import { getTableColumns, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { createRawQuery } from '../../db/raw-query.js';
import { operations } from '../../db/schema.js';
import { SEALED_KEY, type StoredRequest } from './operation-sealing.js';
import type { NewOperationRow, OperationRow, ResultItem, SentTarget } from './operation-store.js';

/** A stored request the legacy rewrite looks at. */
interface LegacyRequestRow {
  id: string;
  account: string;
  state: string;
  request: unknown;
}

/** The raw statements; each batch call is one statement and one commit. */
export interface OperationQueries {
  /** See OperationStore.insertMany. */
  insertMany(rows: NewOperationRow[]): Promise<boolean[]>;
  /** See OperationStore.markSentMany. */
  markSentMany(items: ({ id: string } & SentTarget)[]): Promise<boolean[]>;
  /** See OperationStore.finishMany. */
  finishMany(all: ResultItem[]): Promise<(OperationRow | undefined)[]>;
  /**
   * Up to `limit` apply and patch requests after id `after` (id order) that are not sealed and whose text mentions a
   * Secret or holds an escape that could spell one: those that may hold Secret values in plaintext.
   */
  unsealedRequests(after: string, limit: number): Promise<LegacyRequestRow[]>;
  /**
   * Replaces the stored request of operation `id` by `stored` (its sealed or redacted form); with `failWith`, an
   * operation still open ends FAILED with that error (it can no longer be sent).
   */
  rewriteRequest(id: string, stored: Pick<StoredRequest, 'requestJson' | 'requestHash'>, failWith?: string): Promise<void>;
}

/** Column name → property name of an `operations` row, to map rows of raw statements. */
const ROW_KEYS: [string, keyof OperationRow][] = Object.entries(getTableColumns(operations)).map(([key, column]) => [
  column.name,
  key as keyof OperationRow,
]);

/** A raw `returning *` row as the driver parsed it (timestamps as Date, jsonb as values) → an OperationRow. */
function toRow(raw: Record<string, unknown>): OperationRow {
  const row: Record<string, unknown> = {};
  for (const [name, key] of ROW_KEYS) {
    const value = raw[name];
    row[key] = typeof value === 'string' && key.endsWith('At') ? new Date(value) : value;
  }
  return row as OperationRow;
}

/** Creates the statements over an open database. */
export function createOperationQueries(database: Database): OperationQueries {
  const query = createRawQuery(database);
  return {
    async insertMany(rows) {
      if (rows.length === 0) return [];
      // One fixed statement text whatever the batch size (prepared once per connection); the batch is one jsonb.
      const batch = rows.map((r) => ({
        id: r.id,
        account: r.account,
        type: r.type,
        request: r.request,
        state: r.state,
        gateway_id: r.gatewayId,
        timeout_ms: r.timeoutMs,
        received_at: r.receivedAt,
        stored_at: r.storedAt,
        deadline_at: r.deadlineAt,
        request_hash: r.requestHash,
        requested_by: r.requestedBy ?? '',
      }));
      const result = await query(
        `insert into operations
          (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash, requested_by)
        select id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at, deadline_at, request_hash, requested_by
        from jsonb_to_recordset($1::jsonb) as v(id text, account text, type text, request jsonb, state text,
          gateway_id text, timeout_ms integer, received_at timestamptz, stored_at timestamptz, deadline_at timestamptz, request_hash text,
          requested_by text)
        on conflict (id) do nothing
        returning id`,
        [JSON.stringify(batch)],
      );
      // A repeated id within the batch was inserted (at most) once: only its first occurrence counts.
      const ids = new Set(result.map((r) => r.id as string));
      return rows.map((r) => ids.delete(r.id));
    },

    async markSentMany(items) {
      if (items.length === 0) return [];
      const batch = items.map((i) => ({ id: i.id, agent_id: i.agentId, session_id: i.sessionId, sent_at: i.sentAt }));
      // Rows are locked in id order first: concurrent batches touching the same rows (sent marks, results, the
      // deadline sweeper) then wait for each other instead of deadlocking.
      const result = await query(
        `with v as (select distinct on (id) * from jsonb_to_recordset($1::jsonb)
              as x(id text, agent_id text, session_id text, sent_at timestamptz)),
          locked as materialized (select o.id from operations o join v on v.id = o.id
              where o.state in ('PENDING', 'SENT') order by o.id for update of o)
        update operations o
        set state = 'SENT', sent_at = coalesce(o.sent_at, v.sent_at), agent_id = v.agent_id, session_id = v.session_id
        from v
        where o.id = v.id and o.id in (select id from locked) and o.state in ('PENDING', 'SENT')
        returning o.id`,
        [JSON.stringify(batch)],
      );
      const ids = new Set(result.map((r) => r.id as string));
      return items.map((i) => ids.has(i.id));
    },

    async finishMany(all) {
      if (all.length === 0) return [];
      // A repeated id within the batch: only its first item is written (the others change nothing).
      const seen = new Set<string>();
      const items = all.filter((i) => !seen.has(i.id) && seen.add(i.id));
      const batch = items.map(({ id, account, outcome: o, ...i }) => ({
        id,
        account,
        state: o.state,
        error: o.error ?? '',
        at: o.at,
        result: o.result ?? null,
        has_result: o.result !== undefined,
        agent_id: o.agentId ?? '',
        session_id: o.sessionId ?? '',
        sent_at: o.sentAt ?? null,
        vouched: i.vouched === true,
      }));
      const result = await query(
        `with v as (select * from jsonb_to_recordset($1::jsonb) as x(id text, account text, state text,
              error text, at timestamptz, result jsonb, has_result boolean, agent_id text, session_id text, sent_at timestamptz,
              vouched boolean)),
          locked as materialized (select o.id from operations o join v on v.id = o.id and v.account = o.account
              where o.state in ('PENDING', 'SENT')
                and (v.session_id = '' or o.session_id = v.session_id or (o.session_id = '' and v.vouched))
              order by o.id for update of o)
        update operations o
        set state = v.state, error = v.error, finished_at = v.at,
          result = case when v.has_result then v.result else o.result end,
          result_at = case when v.has_result then v.at else o.result_at end,
          agent_id = case when v.agent_id <> '' then v.agent_id else o.agent_id end,
          session_id = case when v.session_id <> '' then v.session_id else o.session_id end,
          sent_at = coalesce(o.sent_at, v.sent_at)
        from v
        where o.id = v.id and o.account = v.account and o.id in (select id from locked) and o.state in ('PENDING', 'SENT')
        returning o.*`,
        [JSON.stringify(batch)],
      );
      const byRowId = new Map(result.map((r) => [r.id as string, toRow(r)]));
      return all.map((i) => {
        const row = byRowId.get(i.id);
        byRowId.delete(i.id);
        return row;
      });
    },

    async unsealedRequests(after, limit) {
      // Only apply and patch requests can carry Secret values, and only those whose text mentions a Secret in any case
      // (a patch's kind may be `secrets`) or holds an escape that could spell one — \x, \u, \U, an escaped line break
      // — as secret-redaction.ts decides; in the JSON text a YAML backslash is doubled and a line break is `\n`.
      const rows = await query(
        `select id, account, state, request from operations
        where id > $1 and not (request ? '${SEALED_KEY}') and (request ? 'apply' or request ? 'patch')
          and request::text ~* 'secret|\\\\\\\\([xuU]|\\\\[rn])'
        order by id limit ${Math.trunc(limit)}`,
        [after],
      );
      return rows as unknown as LegacyRequestRow[];
    },

    async rewriteRequest(id, stored, failWith) {
      const fail = failWith !== undefined;
      await database.db.execute(sql`update operations set request = ${JSON.stringify(stored.requestJson)}::jsonb, request_hash = ${stored.requestHash},
          state = case when ${fail} then 'FAILED' else state end,
          error = case when ${fail} then ${failWith ?? ''} else error end,
          finished_at = case when ${fail} then now() else finished_at end
        where id = ${id}`);
    },
  };
}
