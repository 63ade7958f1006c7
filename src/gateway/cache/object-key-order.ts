/**
 * The objects table's primary-key order (account, kind, apiVersion, namespace, name) as SQL, for the readers that
 * walk it in keyset pages (ListObjects, SummarizeHealth): each page is one index range scan however deep it is. The
 * cache owns it (cache/object-reads.ts runs the walks); the client API only carries the key in its page tokens.
 */
import { asc, sql, type SQL } from 'drizzle-orm';
import { objects } from '../../db/schema.js';

/** Sort key of one object row, in primary-key order (ListObjects' page tokens carry it). */
export type ObjectKey = [account: string, kind: string, apiVersion: string, namespace: string, name: string];

/** ORDER BY of a keyset walk: the primary key's columns, ascending. */
export const OBJECT_KEY_ORDER = [
  asc(objects.account),
  asc(objects.kind),
  asc(objects.apiVersion),
  asc(objects.namespace),
  asc(objects.name),
] as const;

/** The rows after `key` in {@link OBJECT_KEY_ORDER}. */
export function afterObjectKey(key: ObjectKey): SQL {
  return sql`(${objects.account}, ${objects.kind}, ${objects.apiVersion}, ${objects.namespace}, ${objects.name}) > (${key[0]}, ${key[1]}, ${key[2]}, ${key[3]}, ${key[4]})`;
}
