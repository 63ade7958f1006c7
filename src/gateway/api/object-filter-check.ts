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
import { and, eq, sql, type SQL } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { accounts, objects, watchStates } from '../../db/schema.js';

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
  let reportedKinds: string[] | undefined;
  if (filter.account) {
    const [row] = await db.select({ kinds: accounts.kinds }).from(accounts).where(eq(accounts.name, filter.account)).limit(1);
    reportedKinds = row?.kinds.map((k) => k.kind);
    if (!row && !(await exists(database, eq(objects.account, filter.account)))) {
      throw new ConnectError(`account "${filter.account}" not found`, Code.NotFound);
    }
  }
  if (!filter.kind || reportedKinds?.includes(filter.kind) || (await kindRecorded(database, filter))) return;
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
    const rows = await db.select({ kinds: accounts.kinds }).from(accounts);
    if (rows.some((r) => r.kinds.some((k) => k.kind === filter.kind))) return true;
  }
  const scope = (column: typeof watchStates.account | typeof objects.account) => (filter.account ? [eq(column, filter.account)] : []);
  return (
    (await exists(database, and(...scope(watchStates.account), eq(watchStates.kind, filter.kind)), watchStates)) ||
    (await exists(database, and(...scope(objects.account), eq(objects.kind, filter.kind))))
  );
}

async function exists(database: Database, where: SQL | undefined, table: typeof objects | typeof watchStates = objects): Promise<boolean> {
  const rows = await database.db.select({ one: sql<number>`1` }).from(table).where(where).limit(1);
  return rows.length > 0;
}

/** Kinds known for one account (or all): reported, watched or cached; `reported` counts the sources that had any. */
async function knownKinds(database: Database, account: string): Promise<{ kinds: Set<string>; reported: number }> {
  const { db } = database;
  const kinds = new Set<string>();
  let reported = 0;
  const rows = account
    ? await db.select({ kinds: accounts.kinds }).from(accounts).where(eq(accounts.name, account))
    : await db.select({ kinds: accounts.kinds }).from(accounts);
  for (const row of rows) {
    if (row.kinds.length > 0) reported++;
    for (const k of row.kinds) kinds.add(k.kind);
  }
  const watched = account
    ? await db.selectDistinct({ kind: watchStates.kind }).from(watchStates).where(eq(watchStates.account, account))
    : await db.selectDistinct({ kind: watchStates.kind }).from(watchStates);
  const cached = account
    ? await db.selectDistinct({ kind: objects.kind }).from(objects).where(eq(objects.account, account))
    : await db.selectDistinct({ kind: objects.kind }).from(objects);
  for (const { kind } of [...watched, ...cached]) kinds.add(kind);
  if (watched.length > 0 || cached.length > 0) reported++;
  return { kinds, reported };
}
