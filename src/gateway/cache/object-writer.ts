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
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { countEventsStatement } from '../accounts/account-lease-queries.js';
import { LeaseLostError, type WriteFence } from '../replicas/lease-fence.js';
import type { DecodedBatch, ObjectRow } from './event-decoder.js';
import { sqlNotOlder } from './resource-version.js';

/** Writes decoded batches. Callers must serialise the writes of one stream (order matters). */
export interface ObjectWriter {
  /** Writes the batch; with a fence, rejects with {@link LeaseLostError} for accounts it no longer holds (their part unwritten). */
  write(batch: DecodedBatch, fence?: WriteFence): Promise<void>;
}

/** Options of {@link createObjectWriter}. */
export interface ObjectWriterOptions {
  /**
   * Kinds whose changes move the account's `objects_version` (what readers that keep answers depend on:
   * src/db/schema.ts); every kind when absent. Changes of other kinds — Events, Leases, ConfigMaps, which many clusters
   * rewrite every few seconds — then leave the version, and the answers kept under it, alone.
   */
  versionedKinds?: ReadonlySet<string>;
}

/** Creates the writer over an open database. */
export function createObjectWriter(database: Database, options: ObjectWriterOptions = {}): ObjectWriter {
  const versionedKinds = options.versionedKinds;
  /** Accounts with a change of a versioned kind in `batch` (a change that turns out stale still counts: harmless). */
  const versionedAccounts = (batch: DecodedBatch) => {
    const accounts = new Set<string>();
    for (const rows of [batch.upserts, batch.deletes]) {
      for (const r of rows) if (!versionedKinds || versionedKinds.has(r.kind)) accounts.add(r.account);
    }
    return [...accounts];
  };
  // A row is replaced by a newer event of the same watch, or by any event of a newer full list (a list is
  // authoritative for its scope whatever its resourceVersions say: after an etcd restore they start lower).
  const replaces = sql`(${sqlNotOlder(sql.raw('excluded.resource_version'), sql.raw('o.resource_version'))} or excluded.sync_gen > o.sync_gen)`;
  const pick = (column: string) => sql`case when ${replaces} then ${sql.raw(`excluded.${column}`)} else ${sql.raw(`o.${column}`)} end`;
  return {
    async write(batch, fence) {
      // Every part is a data-modifying CTE of ONE statement: atomic without BEGIN/COMMIT round trips. The parts touch
      // disjoint rows (the decoder collapsed the batch to one operation per object).
      const parts: SQL[] = [];
      // Fenced: the lease check comes first and the other parts keep only the accounts it let through.
      const leased = (column: string) => (fence ? sql` and ${sql.raw(column)} in (select name from fenced)` : sql``);
      if (fence && batch.accounts.length > 0) {
        parts.push(sql`fenced as (${countEventsStatement(batch.eventCounts, fence, versionedAccounts(batch))})`);
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
        parts.push(sql`touched as (${countEventsStatement(batch.eventCounts, undefined, versionedAccounts(batch))})`);
      }
      if (parts.length === 0) return;
      if (!fence || batch.accounts.length === 0) {
        await database.db.execute(sql`with ${sql.join(parts, sql`, `)} select 1`);
        return;
      }
      const result = await database.db.execute(sql`with ${sql.join(parts, sql`, `)} select name from fenced`);
      const held = new Set(rowsOf(result).map((r) => String(r.name)));
      const lost = batch.accounts.filter((a) => !held.has(a));
      if (lost.length > 0) throw new LeaseLostError(lost);
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
