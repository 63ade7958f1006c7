/**
 * The gateway's own periodic changes of `accounts` rows (part of the accounts repository, see account-repository.ts):
 * failing account changes no agent confirmed in time (account-sweeper.ts) and removing agent accounts nobody served
 * for longer than the grace period (account-cleanup.ts). Both run on every replica: each statement re-checks its
 * conditions under the row lock, so concurrent sweeps change a row once and a row changed meanwhile is left alone.
 */
import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { accounts } from '../../db/schema.js';
import type { RemoveCaches } from './account-claim-queries.js';
import { GATEWAY_ACTOR, recordTransitions } from './account-states.js';

/** An account change the sweep failed. */
export interface TimedOutChange {
  name: string;
  /** ACTIVATING or DEACTIVATING: the state it timed out in. */
  from: string;
}

/**
 * In one transaction: accounts ACTIVATING or DEACTIVATING for longer than `timeoutSeconds` become FAILED with a reason
 * saying which, recorded with the gateway as actor. Rows another replica has locked are skipped (it fails them).
 */
export async function failTimedOutChanges(db: Db, timeoutSeconds: number): Promise<TimedOutChange[]> {
  const cutoff = sql`now() - make_interval(secs => ${timeoutSeconds})`;
  return db.transaction(async (tx) => {
    const rows = await tx
      .select({ name: accounts.name, state: accounts.state })
      .from(accounts)
      .where(and(inArray(accounts.state, ['ACTIVATING', 'DEACTIVATING']), lt(accounts.updatedAt, cutoff)))
      .orderBy(accounts.name)
      .for('update', { skipLocked: true });
    if (rows.length === 0) return [];
    const reasonOf = (state: string) =>
      state === 'ACTIVATING'
        ? `no agent started serving it within ${timeoutSeconds}s`
        : `its agent did not stop serving it within ${timeoutSeconds}s`;
    for (const state of ['ACTIVATING', 'DEACTIVATING']) {
      const names = rows.filter((r) => r.state === state).map((r) => r.name);
      if (names.length === 0) continue;
      await tx
        .update(accounts)
        .set({ state: 'FAILED', reason: reasonOf(state), updatedAt: sql`now()` })
        .where(inArray(accounts.name, names));
    }
    await recordTransitions(
      tx,
      rows.map((r) => ({ account: r.name, from: r.state, to: 'FAILED' as const, reason: reasonOf(r.state), actor: GATEWAY_ACTOR })),
    );
    return rows.map((r) => ({ name: r.name, from: r.state }));
  });
}

/** One account removed by the clean-up. */
export interface CleanedAccount {
  name: string;
  /** How long it had been without an agent, in seconds. */
  withoutAgentSeconds: number;
}

/**
 * Everything that makes an agent account removable after `graceSeconds` without an agent: registered by an agent (not
 * dynamic), INACTIVE but not deactivated by an admin (its refusal must survive), unchanged for the grace period, and
 * offered by no live agent session (standby or caching, by its recent `last_seen_at`).
 */
function removable(graceSeconds: number) {
  const cutoff = sql`now() - make_interval(secs => ${graceSeconds})`;
  return and(
    eq(accounts.source, 'agent'),
    eq(accounts.state, 'INACTIVE'),
    eq(accounts.desiredState, 'ACTIVE'),
    lt(accounts.updatedAt, cutoff),
    sql`not exists (select 1 from agent_sessions s where s.ended_at is null and s.last_seen_at > ${cutoff}
            and (s.caching @> jsonb_build_array(${accounts.name}) or s.standby @> jsonb_build_array(${accounts.name})))`,
  );
}

/** Names of the accounts {@link removeAccountWithoutAgent} would remove now, in name order (a plain read). */
export async function findAccountsWithoutAgent(db: Db, graceSeconds: number): Promise<string[]> {
  const rows = await db.select({ name: accounts.name }).from(accounts).where(removable(graceSeconds)).orderBy(accounts.name);
  return rows.map((r) => r.name);
}

/**
 * Removes one account in one transaction when it is still removable (one conditional DELETE re-checks everything under
 * the row lock), with its cached objects and watch state (`removeCaches`), and records the transition to DELETING. Undefined when the
 * row is gone or no longer removable (another replica removed it, or an agent came back).
 */
export async function removeAccountWithoutAgent(
  db: Db,
  name: string,
  graceSeconds: number,
  removeCaches: RemoveCaches,
): Promise<CleanedAccount | undefined> {
  return db.transaction(async (tx) => {
    const [row] = await tx
      .delete(accounts)
      .where(and(eq(accounts.name, name), removable(graceSeconds)))
      .returning({ name: accounts.name, idle: sql<string>`extract(epoch from now() - ${accounts.updatedAt})` });
    if (!row) return undefined;
    await removeCaches(tx, [name]);
    const withoutAgentSeconds = Math.round(Number(row.idle));
    const reason = `no agent for ${withoutAgentSeconds}s (grace ${graceSeconds}s): cache, watch state and name binding removed`;
    await recordTransitions(tx, [{ account: name, from: 'INACTIVE', to: 'DELETING', reason, actor: GATEWAY_ACTOR }]);
    return { name, withoutAgentSeconds };
  });
}
