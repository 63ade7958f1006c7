/**
 * The accounts repository: the one owner of the `accounts` table. Every statement that writes `accounts` lives in
 * this file or in its siblings account-claim-queries.ts (agent streams), account-lease-queries.ts (lease upkeep and
 * fenced cache writes) and account-sweep-queries.ts (timeouts and clean-up); test/docs/table-owners.test.ts fails
 * when one appears anywhere else (docs/architecture.md, "Inside the gateway"). This file holds the row locks and the
 * writes of account administration (account-admin.ts, account-rebind.ts). The functions take the caller's
 * transaction: a state change and its `account_transitions` record (account-states.ts) must commit together.
 */
import { eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/query-helpers.js';
import { accounts } from '../../db/schema.js';
import { definitionToJson, type AccountInput } from './account-input.js';
import type { AccountState } from './account-states.js';

/** One `accounts` row as drizzle reads it. */
export type AccountRow = typeof accounts.$inferSelect;

/**
 * Current states of the named rows, locked for update until the transaction ends (names sorted: no deadlocks). Call
 * it inside a transaction before reading a row to change it; absent names are missing from the map.
 */
export async function lockStates(tx: DbOrTx, names: string[]): Promise<Map<string, string>> {
  if (names.length === 0) return new Map();
  const rows = await tx
    .select({ name: accounts.name, state: accounts.state })
    .from(accounts)
    .where(inArray(accounts.name, [...names].sort()))
    .orderBy(accounts.name)
    .for('update');
  return new Map(rows.map((r) => [r.name, r.state]));
}

/** The named rows, locked as {@link lockStates} locks them (inside a transaction); absent names are missing. */
export async function lockAccountRows(tx: DbOrTx, names: string[]): Promise<Map<string, AccountRow>> {
  await lockStates(tx, names);
  const rows = await tx.select().from(accounts).where(inArray(accounts.name, names));
  return new Map(rows.map((r) => [r.name, r]));
}

/** Inserts dynamic accounts (defined at the gateway) in `state`; desired ACTIVE unless created INACTIVE. */
export async function insertDynamicAccounts(tx: DbOrTx, inputs: AccountInput[], state: AccountState): Promise<void> {
  await tx.insert(accounts).values(
    inputs.map((input) => ({
      name: input.definition.name,
      state,
      source: 'dynamic',
      zoneId: input.zoneId,
      definition: definitionToJson(input.definition),
      desiredState: state === 'INACTIVE' ? 'INACTIVE' : 'ACTIVE',
    })),
  );
}

/** Sets the state and reason of one row (record the transition in the same transaction). */
export async function setAccountState(tx: DbOrTx, name: string, state: AccountState, reason: string): Promise<void> {
  await tx.update(accounts).set({ state, reason, updatedAt: sql`now()` }).where(eq(accounts.name, name));
}

/** What an admin's change writes to one row: desired and current state, zone, and for a dynamic account its definition. */
export interface AdminChange {
  desiredState: string;
  zoneId: string;
  state: AccountState;
  reason: string;
  /** Protobuf JSON of the new definition (dynamic accounts); the stored one stays when absent. */
  definition?: Record<string, unknown>;
}

/** Writes an admin's change to one row (record its transitions in the same transaction). */
export async function applyAdminChange(tx: DbOrTx, name: string, change: AdminChange): Promise<void> {
  await tx
    .update(accounts)
    .set({
      ...(change.definition !== undefined && { definition: change.definition }),
      zoneId: change.zoneId,
      desiredState: change.desiredState,
      state: change.state,
      reason: change.reason,
      updatedAt: sql`now()`,
    })
    .where(eq(accounts.name, name));
}

/** Deletes the rows (the caller removes their cache in the same transaction). */
export async function deleteAccountRows(tx: DbOrTx, names: string[]): Promise<void> {
  await tx.delete(accounts).where(inArray(accounts.name, names));
}

/** Forgets the cluster a name is bound to and the last refused claim (the caller removes that cluster's cache). */
export async function clearClusterBinding(tx: DbOrTx, name: string): Promise<void> {
  await tx
    .update(accounts)
    .set({ apiHost: '', caFingerprint: '', refusedClaim: null, kubernetesVersion: '', updatedAt: sql`now()` })
    .where(eq(accounts.name, name));
}

/**
 * Binds the name to `identity`; with `endLease`, also ends a live lease under the old binding (INACTIVE, lease
 * released), so the old holder's writes are fenced off at once. The caller records the move.
 */
export async function moveIdentityBinding(tx: DbOrTx, name: string, identity: string, endLease: boolean): Promise<void> {
  await tx
    .update(accounts)
    .set({
      boundIdentity: identity,
      ...(endLease && { state: 'INACTIVE', reason: '', leaseExpiresAt: null }),
      updatedAt: sql`now()`,
    })
    .where(eq(accounts.name, name));
}
