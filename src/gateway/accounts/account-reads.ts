/**
 * Reads of the `accounts` table (and its `account_transitions` history) for everyone above: account views, the
 * dynamic accounts an agent is told to serve, the kinds an account reported, the fleet summary, the accounts gauge,
 * and which replicas hold an account's streams. They live here, with the table's writes, so a column change reaches
 * only this folder (docs/architecture.md, "One owner per table"). None takes a row lock: a caller that must decide
 * on a row's state under a lock uses account-repository.ts.
 */
import { and, asc, count, desc, eq, inArray, notInArray, or, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { rowsOf } from '../../db/query-helpers.js';
import { accountTransitions, accounts } from '../../db/schema.js';
import { STREAMED_STATES_SQL } from './account-states.js';

/** One account's row, as views read it. */
export type AccountRow = typeof accounts.$inferSelect;

/** Whether an account of that name exists (one primary-key probe). */
export async function accountExists(db: Db, name: string): Promise<boolean> {
  const rows = await db.select({ name: accounts.name }).from(accounts).where(eq(accounts.name, name)).limit(1);
  return rows.length > 0;
}

/** Every account's name, sorted. */
export async function listAccountNames(db: Db): Promise<string[]> {
  const rows = await db.select({ name: accounts.name }).from(accounts).orderBy(asc(accounts.name));
  return rows.map((r) => r.name);
}

/**
 * One page of account rows by name (`name` filters to one; `page` is 1-based, `limit` 0 means no bound) and how many
 * match across pages.
 */
export async function readAccountPage(
  db: Db,
  query: { name?: string; page: number; limit: number },
): Promise<{ rows: AccountRow[]; total: number }> {
  const where = query.name ? eq(accounts.name, query.name) : undefined;
  const [{ n }] = (await db.select({ n: count() }).from(accounts).where(where)) as [{ n: number }];
  let select = db.select().from(accounts).where(where).orderBy(asc(accounts.name)).$dynamic();
  if (query.limit > 0) select = select.limit(query.limit).offset((query.page - 1) * query.limit);
  return { rows: await select, total: Number(n) };
}

/** The rows of the named accounts, by name (unknown names are skipped; `names` must not be empty). */
export async function readAccountRows(db: Db, names: string[]): Promise<AccountRow[]> {
  return db.select().from(accounts).where(inArray(accounts.name, names)).orderBy(asc(accounts.name));
}

/** The row of one account; empty when unknown. */
export async function readAccountRow(db: Db, name: string): Promise<AccountRow[]> {
  return db.select().from(accounts).where(eq(accounts.name, name));
}

/** The newest `limit` recorded transitions of an account, newest first. */
export async function readAccountTransitions(db: Db, name: string, limit: number): Promise<(typeof accountTransitions.$inferSelect)[]> {
  return db.select().from(accountTransitions).where(eq(accountTransitions.account, name)).orderBy(desc(accountTransitions.id)).limit(limit);
}

/**
 * An account's state over time from `since` on, for its history chart: the state it was in at `since` (the newest
 * transition at or before it; undefined when none was recorded then) and each transition after it, oldest first
 * (`from` is '' for the account's creation).
 */
export async function readStateChangesSince(
  db: Db,
  name: string,
  since: Date,
): Promise<{ initial?: string; changes: { at: Date; from: string; state: string }[] }> {
  const [before, after] = await Promise.all([
    db
      .select({ state: accountTransitions.toState })
      .from(accountTransitions)
      .where(and(eq(accountTransitions.account, name), sql`${accountTransitions.at} <= ${since.toISOString()}::timestamptz`))
      .orderBy(desc(accountTransitions.id))
      .limit(1),
    db
      .select({ at: accountTransitions.at, from: accountTransitions.fromState, state: accountTransitions.toState })
      .from(accountTransitions)
      .where(and(eq(accountTransitions.account, name), sql`${accountTransitions.at} > ${since.toISOString()}::timestamptz`))
      .orderBy(asc(accountTransitions.id)),
  ]);
  return { initial: before[0]?.state, changes: after };
}

/**
 * The definitions of the dynamic accounts an agent of `zone` should serve: defined at the gateway, wanted ACTIVE, not
 * being deactivated or deleted, in the zone or zone '' — by name.
 */
export async function dynamicDefinitionsFor(db: Db, zone: string): Promise<{ definition: AccountRow['definition'] }[]> {
  return db
    .select({ definition: accounts.definition })
    .from(accounts)
    .where(
      and(
        eq(accounts.source, 'dynamic'),
        eq(accounts.desiredState, 'ACTIVE'),
        notInArray(accounts.state, ['INACTIVE', 'DEACTIVATING', 'DELETING', 'DELETE_FAILED']),
        or(eq(accounts.zoneId, ''), eq(accounts.zoneId, zone)),
      ),
    )
    .orderBy(asc(accounts.name));
}

/** The kinds one account reported; undefined when the account is unknown (one primary-key probe). */
export async function reportedKindsOf(db: Db, name: string): Promise<AccountRow['kinds'] | undefined> {
  const [row] = await db.select({ kinds: accounts.kinds }).from(accounts).where(eq(accounts.name, name)).limit(1);
  return row?.kinds;
}

/** The kinds reported by `name` (by every account when empty), one entry per account. */
export async function reportedKinds(db: Db, name: string): Promise<{ kinds: AccountRow['kinds'] }[]> {
  return name
    ? await db.select({ kinds: accounts.kinds }).from(accounts).where(eq(accounts.name, name))
    : await db.select({ kinds: accounts.kinds }).from(accounts);
}

/**
 * Every account's ingest activity, by name, for the fleet summary: its state, zone and the admin's wish, whether a live
 * lease holder caches it now (`leased`: a streamed state and an unexpired lease, judged by the database's clock as the
 * claims are), and its counters. One scan of the table; callers poll it every second, so it reads nothing per account.
 */
export async function readAccountActivity(db: Db) {
  return db
    .select({
      name: accounts.name,
      state: accounts.state,
      zoneId: accounts.zoneId,
      desiredState: accounts.desiredState,
      leased: sql<boolean>`(${accounts.state} in (${STREAMED_STATES_SQL}) and coalesce(${accounts.leaseExpiresAt} > now(), false))`,
      gatewayId: accounts.gatewayId,
      agentId: accounts.agentId,
      eventsTotal: accounts.eventsTotal,
      lastEventAt: accounts.lastEventAt,
    })
    .from(accounts)
    .orderBy(accounts.name);
}

/** How many accounts are in each state, for the `outpost_gateway_accounts` gauge. */
export async function accountCountsByState(db: Db): Promise<{ state: string; n: number }[]> {
  const result = await db.execute(sql`select state, count(*)::int as n from accounts group by state`);
  return rowsOf(result).map((row) => ({ state: String(row.state), n: Number(row.n) }));
}

/**
 * The replica ids whose streams serve `account`, best first, possibly repeated or empty: the replica holding the
 * account's live lease (rank 0, from `accounts`), then those whose live sessions cache it or stand by for it (rank 1).
 * An allowed join (test/docs/table-owners.test.ts): it reads `agent_sessions` too, because it is about where an
 * account is served; the session columns it names are agent-session-store.ts's `caching`, `standby`, `ended_at`,
 * `last_seen_at`, `gateway_id`.
 */
export async function servingReplicaIds(db: Db, account: string, staleAfterSeconds: number): Promise<string[]> {
  const result = await db.execute(sql`
      select gateway_id, 0 as rank from accounts
        where name = ${account} and state in (${STREAMED_STATES_SQL}) and lease_expires_at > now()
      union all
      select gateway_id, 1 as rank from agent_sessions
        where ended_at is null
          and last_seen_at > now() - (${Math.max(1, Math.ceil(staleAfterSeconds))}::int * interval '1 second')
          and (caching @> jsonb_build_array(${account}::text) or standby @> jsonb_build_array(${account}::text))
      order by rank`);
  return rowsOf(result).map((row) => String(row.gateway_id));
}
