/**
 * Reads of the object cache for the client API (ObjectService: ListObjects, GetObject, SummarizeHealth, and the check
 * that a wrong filter is not an empty cache) and for account views (objects per kind). They live here, with the
 * `objects` table's writes, so a column change reaches only the cache (docs/architecture.md, "One owner per table").
 * Keyset walks go in primary-key order (object-key-order.ts), so every page is one index range scan however deep;
 * test/gateway/objects-query-plans.test.ts checks the plans. Callers build their filters as SQL conditions on the
 * `objects` columns and must keep them index-friendly.
 */
import { and, asc, count, eq, inArray, sql, type SQL } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { objects } from '../../db/schema.js';
import { STATUS_SPEC_FIELDS } from '../status/workload-health.js';
import { afterObjectKey, OBJECT_KEY_ORDER, type ObjectKey } from './object-key-order.js';

/** One cached object as the client API lists it: the whole object, or only what the status rules read. */
export interface CachedObjectRow {
  account: string;
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  labels: Record<string, string>;
  object?: Record<string, unknown>;
  /** What the status rules read, when the body is omitted. */
  statusInput?: Record<string, unknown>;
  updatedAt: Date;
}

const columns = {
  account: objects.account,
  apiVersion: objects.apiVersion,
  kind: objects.kind,
  namespace: objects.namespace,
  name: objects.name,
  uid: objects.uid,
  resourceVersion: objects.resourceVersion,
  labels: objects.labels,
  updatedAt: objects.updatedAt,
};

/**
 * The object column reduced in SQL to what the status rules read (apiVersion, kind, metadata.generation, the spec
 * fields of STATUS_SPEC_FIELDS, status): the same shape as statusInputOf(), so a health computed from it equals the
 * whole object's. Pod specs and pod templates — most of a workload's bytes — stay in the database.
 */
function statusInputSql(): SQL<Record<string, unknown>> {
  const specFields = sql.join(
    STATUS_SPEC_FIELDS.map((f) => sql`${f}::text, ${objects.object} -> 'spec' -> ${f}::text`),
    sql`, `,
  );
  return sql<Record<string, unknown>>`jsonb_build_object(
    'apiVersion', ${objects.object} -> 'apiVersion',
    'kind', ${objects.object} -> 'kind',
    'metadata', jsonb_build_object('generation', ${objects.object} -> 'metadata' -> 'generation'),
    'spec', jsonb_strip_nulls(jsonb_build_object(${specFields})),
    'status', ${objects.object} -> 'status')`;
}

/**
 * One keyset page of objects matching `conditions` (object-list-filter.ts), after `after` when given, in primary-key
 * order, at most `limit` rows; `omitObject` reads the slim status input instead of the body.
 */
export async function readObjectPage(
  db: Db,
  page: { conditions: (SQL | undefined)[]; after: ObjectKey | undefined; omitObject: boolean; limit: number },
): Promise<CachedObjectRow[]> {
  const select = page.omitObject ? { ...columns, statusInput: statusInputSql() } : { ...columns, object: objects.object };
  return db
    .select(select)
    .from(objects)
    .where(and(...page.conditions, page.after ? afterObjectKey(page.after) : undefined))
    .orderBy(...OBJECT_KEY_ORDER)
    .limit(page.limit);
}

/**
 * The object named by account, kind, namespace and name, in every API group that has it (or only `apiVersion`'s
 * when given), by apiVersion; at most `limit` rows (two tell the caller the name is ambiguous).
 */
export async function readObjectVersions(
  db: Db,
  key: { account: string; kind: string; namespace: string; name: string; apiVersion: string },
  limit: number,
): Promise<CachedObjectRow[]> {
  const conditions = [
    eq(objects.account, key.account),
    eq(objects.kind, key.kind),
    eq(objects.namespace, key.namespace),
    eq(objects.name, key.name),
  ];
  if (key.apiVersion) conditions.push(eq(objects.apiVersion, key.apiVersion));
  return db
    .select({ ...columns, object: objects.object })
    .from(objects)
    .where(and(...conditions))
    .orderBy(asc(objects.apiVersion))
    .limit(limit);
}

/** One row of a status walk: an object's key and its slim status input. */
export interface StatusInputRow {
  account: string;
  kind: string;
  apiVersion: string;
  namespace: string;
  name: string;
  input: Record<string, unknown>;
}

/**
 * One keyset page of the status inputs of the objects of `kinds` (of `account`, every account when empty) after
 * `after`, at most `limit` rows: `kind in (…)` is a prefix of the primary key after the account.
 */
export async function readStatusInputPage(
  db: Db,
  page: { kinds: readonly string[]; account: string; after: ObjectKey | undefined; limit: number },
): Promise<StatusInputRow[]> {
  const conditions: (SQL | undefined)[] = [inArray(objects.kind, [...page.kinds])];
  if (page.account) conditions.push(eq(objects.account, page.account));
  if (page.after) conditions.push(afterObjectKey(page.after));
  return db
    .select({
      account: objects.account,
      kind: objects.kind,
      apiVersion: objects.apiVersion,
      namespace: objects.namespace,
      name: objects.name,
      input: statusInputSql(),
    })
    .from(objects)
    .where(and(...conditions))
    .orderBy(...OBJECT_KEY_ORDER)
    .limit(page.limit);
}

/**
 * Whether any object is cached under `account` — of `kind` when given (then `account` '' means any account): one
 * index probe.
 */
export async function objectsCached(db: Db, account: string, kind?: string): Promise<boolean> {
  const where =
    kind === undefined ? eq(objects.account, account) : and(...(account ? [eq(objects.account, account)] : []), eq(objects.kind, kind));
  const rows = await db.select({ one: sql<number>`1` }).from(objects).where(where).limit(1);
  return rows.length > 0;
}

/** The distinct kinds cached for `account` (every account when empty): a listing, for error messages only. */
export async function cachedKinds(db: Db, account: string): Promise<{ kind: string }[]> {
  return account
    ? await db.selectDistinct({ kind: objects.kind }).from(objects).where(eq(objects.account, account))
    : await db.selectDistinct({ kind: objects.kind }).from(objects);
}

/** Cached objects of the named accounts, counted per account, apiVersion and kind (one GROUP BY). */
export async function objectCountsByKind(
  db: Db,
  accounts: string[],
): Promise<{ account: string; apiVersion: string; kind: string; n: number }[]> {
  return db
    .select({ account: objects.account, apiVersion: objects.apiVersion, kind: objects.kind, n: count() })
    .from(objects)
    .where(inArray(objects.account, accounts))
    .groupBy(objects.account, objects.apiVersion, objects.kind);
}
