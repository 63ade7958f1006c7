/**
 * An admin moving an account name's identity binding (docs/accounts.md, "Identity binding"): from then on only the
 * new identity may claim the name. A live lease held under the old binding is ended in the same transaction (the row
 * goes INACTIVE and its lease is released), so the old holder's writes are fenced off at once, its replica demotes and
 * then refuses its stream at the next lease check, and the new identity claims the name at its next Hello (or is
 * promoted from STANDBY). The cached objects and the cluster binding stay: use ReleaseBinding to forget those too.
 * The move is audited as one `account_transitions` row with the admin as actor, and logged.
 */
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import { AccountAdminError } from '../accounts/account-errors.js';
import { lockAccountRows, moveIdentityBinding } from '../accounts/account-repository.js';
import { STREAMED_STATES, type AccountState, recordAuditedTransition } from '../accounts/account-states.js';

/** Identity methods an account can be bound to (`identityOf` in src/gateway/auth/principal.ts). */
const BINDABLE_METHODS = ['token', 'jwt', 'certificate', 'insecure'] as const;

/** Longest identity accepted (certificate subjects are the long ones). */
const MAX_IDENTITY_LENGTH = 1024;

/**
 * Validates an identity to bind: `<method>:<subject>` with a method of {@link BINDABLE_METHODS}, a non-empty subject,
 * at most {@link MAX_IDENTITY_LENGTH} characters and no control characters. Throws an `invalid` AccountAdminError.
 */
export function parseIdentity(raw: unknown): string {
  const shape = `"<method>:<subject>" with method ${BINDABLE_METHODS.join(', ')} (e.g. "certificate:CN=agent-1,O=Example")`;
  if (typeof raw !== 'string' || raw === '') throw new AccountAdminError('invalid', `identity is required: ${shape}`);
  if (raw.length > MAX_IDENTITY_LENGTH) throw new AccountAdminError('invalid', `identity is longer than ${MAX_IDENTITY_LENGTH} characters`);
  if (/[\u0000-\u001f\u007f]/.test(raw)) throw new AccountAdminError('invalid', 'identity must not contain control characters');
  const colon = raw.indexOf(':');
  const method = colon > 0 ? raw.slice(0, colon) : '';
  const subject = colon > 0 ? raw.slice(colon + 1) : '';
  if (!(BINDABLE_METHODS as readonly string[]).includes(method) || subject.trim() === '' || subject !== subject.trim()) {
    throw new AccountAdminError('invalid', `invalid identity ${JSON.stringify(raw.slice(0, 100))}: expected ${shape}`);
  }
  return raw;
}

/** What a rebind did. */
export interface RebindOutcome {
  /** The identity the name was bound to before ('' when unbound). */
  previous: string;
  /** True when a live lease under the old binding was ended. */
  leaseEnded: boolean;
  /** False when the name was already bound to the identity (nothing was written). */
  changed: boolean;
}

/**
 * Binds account `name` to `identity` (already validated with {@link parseIdentity}), recording the move with `actor`.
 * NOT_FOUND for an unknown account, FAILED_PRECONDITION while it is being deleted; nothing changes then.
 */
export async function rebindAccount(
  database: Database,
  name: string,
  identity: string,
  actor: string,
  log: Logger,
): Promise<RebindOutcome> {
  const outcome = await database.db.transaction(async (tx) => {
    const row = (await lockAccountRows(tx, [name])).get(name);
    if (!row) throw new AccountAdminError('not_found', `unknown account ${JSON.stringify(name)}; nothing was changed`, [name]);
    const state = row.state as AccountState;
    if (state === 'DELETING' || state === 'DELETE_FAILED') {
      throw new AccountAdminError('precondition', `account ${name} is ${state}; delete it again or wait`, [name]);
    }
    const previous = row.boundIdentity;
    if (previous === identity) return { previous, leaseEnded: false, changed: false };
    const leaseEnded = STREAMED_STATES.includes(state);
    const reason =
      `identity binding moved from ${previous || '(unbound)'} to ${identity}` +
      (leaseEnded ? `; the lease of agent ${row.agentId} (session ${row.sessionId}) was ended` : '');
    await moveIdentityBinding(tx, name, identity, leaseEnded);
    // A move without a state change is still audited (recordTransitions would skip it).
    await recordAuditedTransition(tx, { account: name, from: state, to: leaseEnded ? 'INACTIVE' : state, reason, actor });
    return { previous, leaseEnded, changed: true };
  });
  if (outcome.changed) {
    log.warn(
      { account: name, actor, previousIdentity: outcome.previous, identity, leaseEnded: outcome.leaseEnded },
      'account identity binding moved by an admin',
    );
  } else {
    log.info({ account: name, actor, identity }, 'account identity binding unchanged: already bound to that identity');
  }
  return outcome;
}
