/**
 * The account state machine's vocabulary (see docs/accounts.md) and the record of a state change: the row update
 * (account-repository.ts and its sibling query files) and its `account_transitions` record go in the same
 * transaction, so the history never disagrees with the row.
 */
import { sql } from 'drizzle-orm';
import type { DbOrTx } from '../../db/query-helpers.js';
import { accountTransitions } from '../../db/schema.js';
import type { Principal } from '../auth/principal.js';

/** Every state an account can be in. */
const ACCOUNT_STATES = [
  'INACTIVE',
  'TO_MIGRATE',
  'ACTIVATING',
  'ACTIVE',
  'TO_DEACTIVATE',
  'DEACTIVATING',
  'DELETING',
  'FAILED',
  'DELETE_FAILED',
  'ORPHANED',
] as const;

/** One account state. */
export type AccountState = (typeof ACCOUNT_STATES)[number];

/** States in which an agent stream caches the account right now (a binding release must wait). */
export const STREAMED_STATES: readonly AccountState[] = ['ACTIVE', 'TO_DEACTIVATE', 'DEACTIVATING'];

/** {@link STREAMED_STATES} as an SQL list, for `state in (…)` (in them, a live lease holder caches the account). */
export const STREAMED_STATES_SQL = sql.raw(STREAMED_STATES.map((s) => `'${s}'`).join(', '));

/** `from` of the transition recorded when a row is created. */
export const NEW_ACCOUNT = '';

/** The gateway itself (timeouts, sweeps). */
export const GATEWAY_ACTOR = 'gateway';

/** The actor string of an agent. */
export function agentActor(agentId: string): string {
  return `agent:${agentId}`;
}

/** The actor string of an admin request; `anonymous` when no principal was attached (routes tested alone). */
export function adminActor(principal: Principal | undefined): string {
  return `admin:${principal?.subject ?? 'anonymous'}`;
}

/** One transition to record. */
export interface Transition {
  account: string;
  from: string;
  to: AccountState;
  reason?: string;
  actor: string;
}

/** Inserts the transition records (no-op for an empty list; transitions to the same state are skipped). */
export async function recordTransitions(db: DbOrTx, transitions: Transition[]): Promise<void> {
  const changed = transitions.filter((t) => t.from !== t.to);
  if (changed.length === 0) return;
  await db
    .insert(accountTransitions)
    .values(changed.map((t) => ({ account: t.account, fromState: t.from, toState: t.to, reason: t.reason ?? '', actor: t.actor })));
}

/** Inserts one transition record even when the state does not change (an audited change of something else). */
export async function recordAuditedTransition(db: DbOrTx, t: Transition): Promise<void> {
  await db
    .insert(accountTransitions)
    .values({ account: t.account, fromState: t.from, toState: t.to, reason: t.reason ?? '', actor: t.actor });
}
