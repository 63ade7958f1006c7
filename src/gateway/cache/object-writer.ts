/**
 * Stores a decoded event batch atomically with ONE SQL statement, whatever the batch size: data-modifying CTEs for
 * the multi-row upsert (the whole batch travels as a single JSON parameter expanded by `json_to_recordset`), the
 * multi-row delete, the watch_states positions and the accounts' last_event_at and events_total. Within a watch, a row
 * is only replaced by an event whose resourceVersion is not older (when both are comparable: resource-version.ts), so
 * stale or replayed events never overwrite newer data; an event of a newer full list replaces the row whatever the
 * versions say (docs/agent-protocol.md, "Lists": a complete list is authoritative).
 *
 * With a fence (every agent stream's writes), the accounts update is the lease check: it locks the rows of the
 * accounts still leased to the writing session with the presented epochs, and every other part writes only for those
 * accounts. Accounts whose lease is gone are written for nothing and reported with a {@link LeaseLostError}. That
 * accounts part is the accounts repository's (account-lease-queries.ts): only `accounts`' owner writes `accounts`.
 *
 * On Postgres, the rows of a full list whose scope held nothing when the list started (`copyable`) need no
 * ON CONFLICT: they are appended with COPY in the same transaction, right after that statement, and only for the
 * accounts its lease check let through — the check's row locks hold until the commit, so the fencing is the same as
 * for the single statement (docs/architecture.md, rule 4). Copied keys already stored (a list that repeats an object)
 * are found first and upserted instead: COPY never meets a conflict.
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql, type SQL } from 'drizzle-orm';
import { PgDialect } from 'drizzle-orm/pg-core';
import type { Sql, TransactionSql } from 'postgres';
import type { Database } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { countEventsStatement } from '../accounts/account-lease-queries.js';
import { LeaseLostError, type WriteFence } from '../replicas/lease-fence.js';
import type { DecodedBatch, ObjectRow } from './event-decoder.js';
import { sqlNotOlder } from './resource-version.js';

/** Writes decoded batches. Callers must serialise the writes of one stream (order matters). */
export interface ObjectWriter {
  /**
   * Writes the batch; with a fence, rejects with {@link LeaseLostError} for accounts it no longer holds (their part
   * unwritten). `copyable` picks the upserts that may be appended with COPY: only rows of a running full list whose
   * scope held no row when the list started (list-tracker.ts) — anything else must go through the upsert.
   */
  write(batch: DecodedBatch, fence?: WriteFence, copyable?: (row: ObjectRow) => boolean): Promise<void>;
}

/** Columns a COPY'd row fills (updated_at takes its default, now(): the transaction's time as for the upsert). */
const COPY_COLUMNS = 'account, api_version, kind, namespace, name, uid, resource_version, labels, object, watch_namespace, sync_gen';

/** Creates the writer over an open database. */
export function createObjectWriter(database: Database): ObjectWriter {
  // A row is replaced by a newer event of the same watch, or by any event of a newer full list (a list is
  // authoritative for its scope whatever its resourceVersions say: after an etcd restore they start lower).
  const replaces = sql`(${sqlNotOlder(sql.raw('excluded.resource_version'), sql.raw('o.resource_version'))} or excluded.sync_gen > o.sync_gen)`;
  const pick = (column: string) => sql`case when ${replaces} then ${sql.raw(`excluded.${column}`)} else ${sql.raw(`o.${column}`)} end`;
  /** The single statement of a batch (undefined when it has nothing to write). */
  const statement = (batch: DecodedBatch, fence?: WriteFence): SQL | undefined => {
    // Every part is a data-modifying CTE of ONE statement: atomic without BEGIN/COMMIT round trips. The parts touch
    // disjoint rows (the decoder collapsed the batch to one operation per object).
    const parts: SQL[] = [];
    // Fenced: the lease check comes first and the other parts keep only the accounts it let through.
    const leased = (column: string) => (fence ? sql` and ${sql.raw(column)} in (select name from fenced)` : sql``);
    if (fence && batch.accounts.length > 0) {
      parts.push(sql`fenced as (${countEventsStatement(batch.eventCounts, fence)})`);
    }
    if (batch.upserts.length > 0) {
      parts.push(sql`upserted as (
          insert into objects as o (account, api_version, kind, namespace, name, uid, resource_version, labels, object,
                                    watch_namespace, sync_gen, updated_at)
          select r.account, r.api_version, r.kind, r.namespace, r.name, r.uid, r.resource_version, r.labels, r.object,
                 r.watch_namespace, r.sync_gen, now()
          from json_to_recordset(${upsertsJson(batch.upserts)}::json) as r(account text, api_version text,
               kind text, namespace text, name text, uid text, resource_version text, labels jsonb, object jsonb,
               watch_namespace text, sync_gen bigint)
          where true${leased('r.account')}
          on conflict (account, kind, api_version, namespace, name) do update set
            uid = ${pick('uid')},
            resource_version = ${pick('resource_version')},
            labels = ${pick('labels')},
            object = ${pick('object')},
            watch_namespace = ${pick('watch_namespace')},
            updated_at = ${pick('updated_at')},
            sync_gen = greatest(o.sync_gen, excluded.sync_gen)
          where ${replaces})`);
    }
    if (batch.deletes.length > 0) {
      parts.push(sql`deleted as (
          delete from objects o
          using json_to_recordset(${JSON.stringify(batch.deletes)}::json) as r(account text, api_version text,
                kind text, namespace text, name text, resource_version text)
          where o.account = r.account and o.kind = r.kind and o.api_version = r.api_version
            and o.namespace = r.namespace and o.name = r.name
            and ${sqlNotOlder(sql.raw('r.resource_version'), sql.raw('o.resource_version'))}${leased('r.account')})`);
    }
    if (batch.scopes.length > 0) {
      parts.push(sql`positions as (
          insert into watch_states as w (account, api_version, kind, watch_namespace, resource_version, updated_at)
          select r.account, r.api_version, r.kind, r.watch_namespace, r.resource_version, now()
          from json_to_recordset(${JSON.stringify(batch.scopes)}::json) as r(account text, api_version text,
               kind text, watch_namespace text, resource_version text)
          where true${leased('r.account')}
          on conflict (account, api_version, kind, watch_namespace) do update set
            resource_version = excluded.resource_version, updated_at = now())`);
    }
    if (!fence && batch.accounts.length > 0) {
      parts.push(sql`touched as (${countEventsStatement(batch.eventCounts)})`);
    }
    if (parts.length === 0) return undefined;
    const fenced = fence && batch.accounts.length > 0;
    return sql`with ${sql.join(parts, sql`, `)} ${fenced ? sql`select name from fenced` : sql`select 1`}`;
  };
  /** The accounts of the batch its lease check let through (all of them without a fence). */
  const heldOf = (batch: DecodedBatch, fence: WriteFence | undefined, rows: Record<string, unknown>[]): Set<string> =>
    fence && batch.accounts.length > 0 ? new Set(rows.map((r) => String(r.name))) : new Set(batch.accounts);
  const throwLost = (batch: DecodedBatch, held: Set<string>) => {
    const lost = batch.accounts.filter((a) => !held.has(a));
    if (lost.length > 0) throw new LeaseLostError(lost);
  };
  const writeStatement = async (batch: DecodedBatch, fence?: WriteFence) => {
    const query = statement(batch, fence);
    if (!query) return;
    throwLost(batch, heldOf(batch, fence, rowsOf(await database.db.execute(query))));
  };
  const dialect = new PgDialect();
  /** A statement as text and parameters for postgres-js. */
  const queryOf = (batch: DecodedBatch, fence: WriteFence | undefined): [string, never[]] => {
    const { sql: text, params } = dialect.sqlToQuery(statement(batch, fence)!);
    return [text, params as never[]];
  };
  const copyRows = async (tx: TransactionSql, rows: ObjectRow[]) => {
    if (rows.length === 0) return;
    const writable = await tx.unsafe(`copy objects (${COPY_COLUMNS}) from stdin`).writable();
    await pipeline(Readable.from([copyText(rows)]), writable);
  };
  return {
    async write(batch, fence, copyable) {
      // Only fenced writes: the lease check's row lock keeps every other writer of the account out until the commit.
      const copies = copyable && fence && database.driver === 'postgres' ? batch.upserts.filter(copyable) : [];
      if (copies.length === 0) return writeStatement(batch, fence);
      const rest: DecodedBatch = { ...batch, upserts: batch.upserts.filter((r) => !copyable!(r)) };
      const held = await (database.client as Sql).begin(async (tx) => {
        const query = statement(rest, fence);
        const { sql: text, params } = dialect.sqlToQuery(query!);
        const granted = heldOf(batch, fence, await tx.unsafe(text, params as never[]));
        // Only the accounts the statement's lease check locked (until the commit) get rows.
        const rows = copies.filter((r) => granted.has(r.account));
        if (rows.length === 0) return granted;
        // A stored row with a copied key (a list repeating an object, events of the scope during its list): upsert
        // those rows instead. COPY must not meet a conflict: postgres-js then never ends the COPY (it waits forever).
        const clashing = await tx.unsafe(CLASHES, [keysJson(rows)]);
        if (clashing.length > 0) {
          const clash = new Set(clashing.map((r) => keyOf(r as unknown as ObjectRow)));
          const upserts = rows.filter((r) => clash.has(keyOf(r)));
          await tx.unsafe(...queryOf({ ...rest, upserts, deletes: [], scopes: [], accounts: [] }, undefined));
          await copyRows(
            tx,
            rows.filter((r) => !clash.has(keyOf(r))),
          );
        } else {
          await copyRows(tx, rows);
        }
        return granted;
      });
      throwLost(batch, held);
    },
  };
}

/** The upserts as one JSON array, splicing each object's JSON text in as is (it was validated by the decoder). */
function upsertsJson(rows: ObjectRow[]): string {
  const parts = rows.map((r) => {
    const { object, ...rest } = r;
    const head = JSON.stringify(rest);
    return `${head.slice(0, -1)},"object":${object}}`;
  });
  return `[${parts.join(',')}]`;
}

/** The keys of `rows` that are stored already (parameter: {@link keysJson}). */
const CLASHES = `select k.account, k.kind, k.api_version, k.namespace, k.name
  from json_to_recordset($1::text::json) as k(account text, kind text, api_version text, namespace text, name text)
  where exists (select 1 from objects o where o.account = k.account and o.kind = k.kind and o.api_version = k.api_version
                and o.namespace = k.namespace and o.name = k.name)`;

function keysJson(rows: ObjectRow[]): string {
  return JSON.stringify(
    rows.map((r) => ({ account: r.account, kind: r.kind, api_version: r.api_version, namespace: r.namespace, name: r.name })),
  );
}

function keyOf(r: Pick<ObjectRow, 'account' | 'kind' | 'api_version' | 'namespace' | 'name'>): string {
  return JSON.stringify([r.account, r.kind, r.api_version, r.namespace, r.name]);
}

/** COPY text-format rows: fields tab-separated, backslash, tab, newline and carriage return escaped. */
function copyText(rows: ObjectRow[]): string {
  let out = '';
  for (const r of rows) {
    out += `${copyField(r.account)}\t${copyField(r.api_version)}\t${copyField(r.kind)}\t${copyField(r.namespace)}\t${copyField(r.name)}\t${copyField(r.uid)}\t${copyField(r.resource_version)}\t${copyField(JSON.stringify(r.labels))}\t${copyField(r.object)}\t${copyField(r.watch_namespace)}\t${r.sync_gen}\n`;
  }
  return out;
}

const COPY_SPECIAL = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

function copyField(text: string): string {
  return text.replace(COPY_SPECIAL, (c) => COPY_ESCAPES[c]!);
}
