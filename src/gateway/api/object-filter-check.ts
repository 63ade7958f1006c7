/**
 * A wrong ListObjects filter must not look like an empty cache: when a first page comes back empty, this check says
 * whether the account and kind asked for are known, and answers NOT_FOUND naming them (and the kinds there are)
 * when they are not.
 *
 * "Known" is what the gateway has recorded, not whether objects exist right now:
 * - an account is known when it has a row in `accounts` (any state: declared by an agent, defined dynamically, or
 *   left INACTIVE) or the cache still holds objects under its name. An account that exists but has cached nothing
 *   yet answers an empty list, as before.
 * - a kind is known for an account when the account reported it (its kinds list), a watch of it was recorded, or
 *   objects of it are cached; without an account filter, when any account knows it. While no account in scope has
 *   reported any kind yet (an agent still connecting), every kind is accepted: there is nothing to compare with.
 * Kinds compare exactly (`Deployment`, not `deploy`): clients map kubectl names themselves.
 *
 * Authorization: ObjectService requires the `read` role for every account (auth/authorization.ts), checked before
 * any handler runs, so a caller who may not read gets PERMISSION_DENIED/UNAUTHENTICATED whatever the filter and
 * learns nothing about which accounts exist.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Database } from '../../db/database.js';
import { reportedKinds, reportedKindsOf } from '../accounts/account-reads.js';
import { cachedKinds, objectsCached } from '../cache/object-reads.js';
import { watchedKinds, watchRecorded } from '../cache/watch-state-reads.js';

/** The filter fields of a ListObjects request the check looks at. */
export interface ObjectFilter {
  account: string;
  kind: string;
}

/** How many kind names an error lists before it says "and N more". */
const MAX_LISTED_KINDS = 40;

/**
 * Rejects with NOT_FOUND when `filter.account` is not a known account, or `filter.kind` is not a kind known for it
 * (for all accounts when no account is given). Call it only when the listing came back empty on its first page:
 * a non-empty answer proves the filter right. A right filter costs a few index lookups; only a wrong kind lists the
 * kinds in scope (for the message).
 */
export async function checkObjectFilter(database: Database, filter: ObjectFilter): Promise<void> {
  const { db } = database;
  let reported: string[] | undefined;
  if (filter.account) {
    const kinds = await reportedKindsOf(db, filter.account);
    reported = kinds?.map((k) => k.kind);
    if (!kinds && !(await objectsCached(db, filter.account))) {
      throw new ConnectError(`account "${filter.account}" not found`, Code.NotFound);
    }
  }
  if (!filter.kind || reported?.includes(filter.kind) || (await kindRecorded(database, filter))) return;
  // The error path: every kind known in scope, for the message.
  const known = await knownKinds(database, filter.account);
  if (known.reported === 0) return;
  const names = [...known.kinds].sort();
  const listed = names.slice(0, MAX_LISTED_KINDS).join(', ');
  const more = names.length > MAX_LISTED_KINDS ? ` and ${names.length - MAX_LISTED_KINDS} more` : '';
  const where = filter.account ? `account "${filter.account}"` : 'any account';
  const whose = filter.account ? 'its kinds' : 'the kinds of all accounts';
  throw new ConnectError(`kind "${filter.kind}" not found in ${where}; ${whose}: ${listed}${more}`, Code.NotFound);
}

/** True when the filter's kind was reported by (any) account, watched, or is cached: index lookups, no listing. */
async function kindRecorded(database: Database, filter: ObjectFilter): Promise<boolean> {
  const { db } = database;
  if (!filter.account) {
    const rows = await reportedKinds(db, '');
    if (rows.some((r) => r.kinds.some((k) => k.kind === filter.kind))) return true;
  }
  return (await watchRecorded(db, filter.account, filter.kind)) || (await objectsCached(db, filter.account, filter.kind));
}

/** Kinds known for one account (or all): reported, watched or cached; `reported` counts the sources that had any. */
async function knownKinds(database: Database, account: string): Promise<{ kinds: Set<string>; reported: number }> {
  const { db } = database;
  const kinds = new Set<string>();
  let reported = 0;
  const rows = await reportedKinds(db, account);
  for (const row of rows) {
    if (row.kinds.length > 0) reported++;
    for (const k of row.kinds) kinds.add(k.kind);
  }
  const watched = await watchedKinds(db, account);
  const cached = await cachedKinds(db, account);
  for (const { kind } of [...watched, ...cached]) kinds.add(kind);
  if (watched.length > 0 || cached.length > 0) reported++;
  return { kinds, reported };
}
