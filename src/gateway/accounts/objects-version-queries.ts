/**
 * `accounts.objects_version` (schema.ts): the accounts owner's side of "this account's cached objects changed". The
 * object writer's statement sets it in countEventsStatement (account-lease-queries.ts); the other writers of the cache
 * — the prune at a list's END, a released binding's removed cache — call {@link bumpObjectsVersions} in the same
 * transaction, so a reader that sees the new objects also sees the new version, and a reader that read the version
 * first never keeps an answer older than that version. Deleted accounts need no bump: their row is gone, and a row
 * created again under the name starts at a fresh value of the sequence.
 */
import { inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/query-helpers.js';
import { accounts } from '../../db/schema.js';

/** Gives `names` new objects versions. Run it in the transaction that changed their cached objects. */
export async function bumpObjectsVersions(tx: DbOrTx, names: readonly string[]): Promise<void> {
  if (names.length === 0) return;
  await tx
    .update(accounts)
    .set({ objectsVersion: sql`nextval('objects_version_seq')` })
    .where(inArray(accounts.name, [...names]));
}

/**
 * The objects version of each of `names` that has a row (names without one are absent from the map). Read it before
 * the objects an answer is built from (READ COMMITTED): the answer then holds at least every change up to it.
 */
export async function readObjectsVersions(db: DbOrTx, names: readonly string[]): Promise<Map<string, number>> {
  if (names.length === 0) return new Map();
  const rows = await db
    .select({ name: accounts.name, version: accounts.objectsVersion })
    .from(accounts)
    .where(inArray(accounts.name, [...names]));
  return new Map(rows.map((r) => [r.name, Number(r.version)]));
}
