/**
 * The request context of a Clouddriver API call: who authenticated (whose `spinnaker` rules list the accounts it may
 * reach: docs/security.md, "Authorization") and what Orca and Gate forward in kork's `X-SPINNAKER-*` headers — the end
 * user, the accounts that user may touch, the application and the pipeline execution. The user and execution are
 * recorded on every task; when `X-SPINNAKER-ACCOUNTS` is present it narrows further which accounts a request may read
 * or change (it can only narrow what the authenticated caller may do, never widen it).
 */
import type { Context } from 'hono';
import { identityOf, mayReach, type Principal } from '../auth/principal.js';
import type { RestEnv } from '../auth/rest-auth.js';

/** What the headers say. */
export interface SpinnakerRequestContext {
  user: string;
  /** Lower-cased account names the user may touch; undefined when the header is absent (no restriction). */
  accounts?: ReadonlySet<string>;
  application: string;
  executionId: string;
  /** The authenticated caller; undefined only where no authentication ran (then no account is reachable). */
  principal?: Principal;
}

/** Reads the principal and the headers of a request. */
export function spinnakerContextOf(c: Context<RestEnv>): SpinnakerRequestContext {
  const header = (name: string) => (c.req.header(name) ?? '').trim().slice(0, 512);
  const accountsHeader = c.req.header('x-spinnaker-accounts');
  return {
    user: header('x-spinnaker-user'),
    accounts:
      accountsHeader === undefined
        ? undefined
        : new Set(
            accountsHeader
              .split(',')
              .map((a) => a.trim().toLowerCase())
              .filter(Boolean),
          ),
    application: header('x-spinnaker-application'),
    executionId: header('x-spinnaker-execution-id'),
    principal: c.get('principal'),
  };
}

/** What operations record as their requester: the caller's identity, and the Spinnaker user when Orca named one. */
export function requesterOf(identity: string, context: Pick<SpinnakerRequestContext, 'user'>): string {
  return context.user ? `${identity} for spinnaker user ${context.user}` : identity;
}

/** {@link requesterOf} of a REST request (its principal and headers). */
export function requesterOfRequest(c: Context<RestEnv>): string {
  const principal = c.get('principal');
  return requesterOf(principal ? identityOf(principal) : 'insecure:anonymous', spinnakerContextOf(c));
}

/**
 * Why the request may not touch `account`, or undefined when it may: the caller's `spinnaker` rules must list it, and
 * `X-SPINNAKER-ACCOUNTS`, when present, too.
 */
export function accountRefusal(context: SpinnakerRequestContext, account: string): string | undefined {
  const name = JSON.stringify(account.slice(0, 253));
  if (!mayReach(context.principal, 'spinnaker', account)) {
    return `${context.principal?.subject ?? 'the caller'} may not reach account ${name} (authorization.rules: the spinnaker role and its accounts)`;
  }
  if (context.accounts !== undefined && !context.accounts.has(account.toLowerCase())) {
    return `${context.user || 'the user'} is not authorized with respect to the ${account} account (X-SPINNAKER-ACCOUNTS)`;
  }
  return undefined;
}

/** True when the context lets the request touch `account` ({@link accountRefusal} says why not). */
export function mayTouchAccount(context: SpinnakerRequestContext, account: string): boolean {
  return accountRefusal(context, account) === undefined;
}
