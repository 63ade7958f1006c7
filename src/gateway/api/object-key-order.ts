/**
 * The objects table's primary-key order (account, kind, apiVersion, namespace, name) as SQL, for the readers that
 * walk it in keyset pages (ListObjects, SummarizeHealth): each page is one index range scan however deep it is.
 */
import { asc, sql, type SQL } from 'drizzle-orm';
import { objects } from '../../db/schema.js';
import type { ObjectKey } from './page-token.js';

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
