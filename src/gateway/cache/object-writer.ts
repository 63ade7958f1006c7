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
 * The same statement writes the fenced batches of several streams at once (`writeGroup`, used by the replica's write
 * coalescer, write-coalescer.ts): every row carries the index of its batch, and the lease check lets each (account,
 * batch) pair through only for the batch's own session, so one stream's lost lease writes nothing of its batch and
 * changes nothing for the others.
 */
import { sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { type AccountCount, countEventsStatement, fencedCountsStatement } from '../accounts/account-lease-queries.js';
import { LeaseLostError, type WriteFence } from '../accounts/lease-fence.js';
import type { DecodedBatch, ObjectRow } from './event-decoder.js';
import { sqlNotOlder } from './resource-version.js';

/** One stream's fenced batch, as a group write takes it. */
export interface FencedBatch {
  batch: DecodedBatch;
  fence: WriteFence;
}

/** Writes decoded batches. Callers must serialise the writes of one stream (order matters). */
export interface ObjectWriter {
  /** Writes the batch; with a fence, rejects with {@link LeaseLostError} for accounts it no longer holds (their part unwritten). */
  write(batch: DecodedBatch, fence?: WriteFence): Promise<void>;
}

/** An {@link ObjectWriter} that can also write several streams' fenced batches in one statement (write-coalescer.ts). */
export interface GroupObjectWriter extends ObjectWriter {
  /**
   * Writes `entries` — fenced batches of distinct sessions — in ONE statement, each account still fenced by its own
   * session's lease: returns, per entry in order, the accounts it no longer holds (written for nothing). One failure
   * of the statement fails every entry (the caller retries them alone).
   */
  writeGroup(entries: readonly FencedBatch[]): Promise<string[][]>;
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
export function createObjectWriter(database: Database, options: ObjectWriterOptions = {}): GroupObjectWriter {
  const versionedKinds = options.versionedKinds;
  /** Accounts with a change of a versioned kind in `batch` (a change that turns out stale still counts: harmless). */
  const versionedAccounts = (batch: DecodedBatch) => {
    const accounts = new Set<string>();
    for (const rows of [batch.upserts, batch.deletes]) {
      for (const r of rows) if (!versionedKinds || versionedKinds.has(r.kind)) accounts.add(r.account);
    }
    return accounts;
  };
  // A row is replaced by a newer event of the same watch, or by any event of a newer full list (a list is
  // authoritative for its scope whatever its resourceVersions say: after an etcd restore they start lower).
  const replaces = sql`(${sqlNotOlder(sql.raw('excluded.resource_version'), sql.raw('o.resource_version'))} or excluded.sync_gen > o.sync_gen)`;
  const pick = (column: string) => sql`case when ${replaces} then ${sql.raw(`excluded.${column}`)} else ${sql.raw(`o.${column}`)} end`;

  /**
   * The object parts of the statement: upserts, deletes and positions of every entry, each row tagged with its
   * entry's index `b`; `leased` keeps only the rows whose (account, entry) passed the fence (all rows without one).
   */
  const objectParts = (batches: readonly DecodedBatch[], fenced: boolean): SQL[] => {
    const parts: SQL[] = [];
    const leased = fenced ? sql` and (r.account, r.b) in (select name, b from fenced)` : sql``;
    const tagged = <T>(rows: (b: DecodedBatch) => T[]) => batches.flatMap((batch, b) => rows(batch).map((row) => ({ row, b })));
    const upserts = tagged((b) => b.upserts);
    if (upserts.length > 0) {
      parts.push(sql`upserted as (
            insert into objects as o (account, api_version, kind, namespace, name, uid, resource_version, labels, object,
                                      watch_namespace, sync_gen, updated_at)
            select r.account, r.api_version, r.kind, r.namespace, r.name, r.uid, r.resource_version, r.labels, r.object,
                   r.watch_namespace, r.sync_gen, now()
            from json_to_recordset(${upsertsJson(upserts)}::json) as r(b int, account text, api_version text,
                 kind text, namespace text, name text, uid text, resource_version text, labels jsonb, object jsonb,
                 watch_namespace text, sync_gen bigint)
            where true${leased}
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
    const deletes = tagged((b) => b.deletes).map(({ row, b }) => ({ ...row, b }));
    if (deletes.length > 0) {
      parts.push(sql`deleted as (
            delete from objects o
            using json_to_recordset(${JSON.stringify(deletes)}::json) as r(b int, account text, api_version text,
                  kind text, namespace text, name text, resource_version text)
            where o.account = r.account and o.kind = r.kind and o.api_version = r.api_version
              and o.namespace = r.namespace and o.name = r.name
              and ${sqlNotOlder(sql.raw('r.resource_version'), sql.raw('o.resource_version'))}${leased})`);
    }
    const scopes = tagged((b) => b.scopes).map(({ row, b }) => ({ ...row, b }));
    if (scopes.length > 0) {
      parts.push(sql`positions as (
            insert into watch_states as w (account, api_version, kind, watch_namespace, resource_version, updated_at)
            select r.account, r.api_version, r.kind, r.watch_namespace, r.resource_version, now()
            from json_to_recordset(${JSON.stringify(scopes)}::json) as r(b int, account text, api_version text,
                 kind text, watch_namespace text, resource_version text)
            where true${leased}
            on conflict (account, api_version, kind, watch_namespace) do update set
              resource_version = excluded.resource_version, updated_at = now())`);
    }
    return parts;
  };

  const writeGroup = async (entries: readonly FencedBatch[]): Promise<string[][]> => {
    const counts: AccountCount[] = [];
    entries.forEach(({ batch, fence }, b) => {
      const versioned = versionedAccounts(batch);
      const epochs = new Map(fence.leases.map((l) => [l.name, l.epoch]));
      for (const name of batch.accounts) {
        counts.push({
          b,
          name,
          session: fence.sessionId,
          epoch: epochs.get(name) ?? 0,
          n: batch.eventCounts[name] ?? 0,
          versioned: versioned.has(name),
        });
      }
    });
    // Every part is a data-modifying CTE of ONE statement: atomic without BEGIN/COMMIT round trips. The lease check
    // comes first and the other parts keep only the (account, entry) pairs it let through; the parts touch disjoint
    // rows (the decoder collapsed each batch to one operation per object, and an account passes for one session only).
    const parts = [
      sql`fenced as (${fencedCountsStatement(counts)})`,
      ...objectParts(
        entries.map((e) => e.batch),
        true,
      ),
    ];
    const result =
      counts.length === 0 ? [] : rowsOf(await database.db.execute(sql`with ${sql.join(parts, sql`, `)} select name, b from fenced`));
    const held = new Set(result.map((r) => `${Number(r.b)}\u0000${String(r.name)}`));
    return entries.map(({ batch }, b) => batch.accounts.filter((a) => !held.has(`${b}\u0000${a}`)));
  };

  return {
    writeGroup,
    async write(batch, fence) {
      if (fence) {
        if (batch.accounts.length === 0) return;
        const [lost] = await writeGroup([{ batch, fence }]);
        if (lost!.length > 0) throw new LeaseLostError(lost!);
        return;
      }
      const parts = objectParts([batch], false);
      if (batch.accounts.length > 0) {
        parts.push(sql`touched as (${countEventsStatement(batch.eventCounts, [...versionedAccounts(batch)])})`);
      }
      if (parts.length === 0) return;
      await database.db.execute(sql`with ${sql.join(parts, sql`, `)} select 1`);
    },
  };
}

/** The upserts as one JSON array, splicing each object's JSON text in as is (it was validated by the decoder). */
function upsertsJson(rows: { row: ObjectRow; b: number }[]): string {
  const parts = rows.map(({ row, b }) => {
    const { object, ...rest } = row;
    const head = JSON.stringify({ b, ...rest });
    return `${head.slice(0, -1)},"object":${object}}`;
  });
  return `[${parts.join(',')}]`;
}
