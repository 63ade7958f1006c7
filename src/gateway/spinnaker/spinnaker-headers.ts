/**
 * The request context Orca and Gate forward (kork's `X-SPINNAKER-*` headers): the end user, the accounts that user
 * may touch, the application and the pipeline execution. The user and execution are recorded on every task; when
 * `X-SPINNAKER-ACCOUNTS` is present it restricts which accounts a request may read or change (it can only narrow
 * what the authenticated caller may do, never widen it).
 */
import type { Context } from 'hono';
import { identityOf } from '../auth/principal.js';
import type { RestEnv } from '../auth/rest-auth.js';

/** What the headers say. */
export interface SpinnakerRequestContext {
  user: string;
  /** Lower-cased account names the user may touch; undefined when the header is absent (no restriction). */
  accounts?: ReadonlySet<string>;
  application: string;
  executionId: string;
}

/** Reads the headers of a request. */
export function spinnakerContextOf(c: Context): SpinnakerRequestContext {
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

/** True when the context lets the request touch `account`. */
export function mayTouchAccount(context: SpinnakerRequestContext, account: string): boolean {
  return context.accounts === undefined || context.accounts.has(account.toLowerCase());
}
