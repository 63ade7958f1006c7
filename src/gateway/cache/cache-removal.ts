/**
 * Removing an account's cache: its objects and its watch states (resume points). The cache owns these two tables
 * (docs/architecture.md, "Inside the gateway"); account deletion, release of a binding and the clean-up of accounts
 * without agents call this inside their own transaction, so the account row and its cache go together.
 */
import { inArray } from 'drizzle-orm';
import type { DbOrTx } from '../../db/query-helpers.js';
import { objects, watchStates } from '../../db/schema.js';

/** Deletes every cached object and watch state of `accounts` (nothing for an empty list). Run it in the caller's transaction. */
export async function removeAccountCaches(tx: DbOrTx, accounts: readonly string[]): Promise<void> {
  if (accounts.length === 0) return;
  await tx.delete(objects).where(inArray(objects.account, [...accounts]));
  await tx.delete(watchStates).where(inArray(watchStates.account, [...accounts]));
}
