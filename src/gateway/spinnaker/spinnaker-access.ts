/**
 * Who may read or change what through the Clouddriver API: the one check every Clouddriver route calls. Two layers,
 * the second only narrowing the first:
 *
 * 1. Outpost's own rules, always: the caller's `spinnaker` role and its `accounts`, and `X-SPINNAKER-ACCOUNTS` when
 *    present (spinnaker-headers.ts). Unchanged whether or not Fiat is configured.
 * 2. With `spinnaker.fiat.baseUrl` set, Fiat, as Clouddriver asks it (kork's `FiatPermissionEvaluator`): the user of
 *    `X-SPINNAKER-USER` — `anonymous` when the header is absent, as Fiat's authentication filter names such requests —
 *    must hold the authorization on the account (`hasPermission(#account, 'ACCOUNT', 'READ'|'WRITE')`) and, where
 *    Clouddriver checks one, on the application. A refusal is Clouddriver's 403 ("Access denied to account X - required
 *    authorization: READ"); when Fiat cannot answer, a 503 (single objects, writes) or nothing (lists): never allowed.
 *
 * Routes call {@link SpinnakerAccess.requireAccount} / {@link SpinnakerAccess.requireApplication} before touching a
 * single object, {@link SpinnakerAccess.filter} on a list, or {@link SpinnakerAccess.fiatVerdict} where they keep
 * their own answer for the first layer (docs/spinnaker.md, "Fiat").
 */
import type { Context } from 'hono';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import type { Logger } from '../../shared/logger.js';
import type { FiatPermissions, PermissionLookup } from './fiat/fiat-permissions.js';
import {
  legacyFallbackPermission,
  permits,
  type FiatAuthorization,
  type FiatResourceType,
  type UserPermission,
} from './fiat/user-permission.js';
import { accountRefusal, mayTouchAccount, spinnakerContextOf, type SpinnakerRequestContext } from './spinnaker-headers.js';

/** One authorization Fiat must grant. */
interface AccessCheck {
  type: FiatResourceType;
  name: string;
  authorization: FiatAuthorization;
}

/** Fiat's verdict on a set of checks: allowed, refused (403) or not known because Fiat could not answer (503). */
type FiatVerdict = { allowed: true } | { allowed: false; status: 403 | 503; message: string };

/** What a list filter reads from each item; an item for which a selector returns undefined is not checked on it. */
interface AccessSelectors<T> {
  /** The item's account: kept only when the rules, the header and Fiat (READ) allow it. */
  account?: (item: T) => string | undefined;
  /** The item's application: kept only when Fiat allows READ on it (no Outpost rule names applications). */
  application?: (item: T) => string | undefined;
}

/** See the module comment. */
export interface SpinnakerAccess {
  /** True when Fiat is configured. */
  readonly fiatEnabled: boolean;
  /** The user Fiat is asked about for this request: `X-SPINNAKER-USER`, else `anonymous`. */
  fiatUser(context: Pick<SpinnakerRequestContext, 'user'>): string;
  /** Fiat's verdict alone (always allowed without Fiat). The first failing check names the refusal. */
  fiatVerdict(context: FiatContext, checks: readonly AccessCheck[]): Promise<FiatVerdict>;
  /**
   * Both layers for one account; throws a 403 {@link HttpError} (rule, header or Fiat refusal) or a 503 (Fiat could
   * not answer). Call it before reading or changing anything of the account.
   */
  requireAccount(c: Context<RestEnv>, account: string, authorization: 'READ' | 'WRITE'): Promise<void>;
  /** Fiat's check of an application (nothing without Fiat); throws 403 or 503 as {@link requireAccount}. */
  requireApplication(c: Context<RestEnv>, application: string, authorization: FiatAuthorization): Promise<void>;
  /**
   * The items the request may read: by account (both layers, READ) and by application (Fiat, READ). Fiat not
   * answering leaves nothing whenever Fiat has to be asked, as Clouddriver's `@PostFilter` refuses every item then.
   */
  filter<T>(c: Context<RestEnv>, items: readonly T[], selectors: AccessSelectors<T>): Promise<T[]>;
}

/** Options of {@link createSpinnakerAccess}. */
export interface SpinnakerAccessOptions {
  /**
   * `spinnaker.fiat.legacyFallback`: when Fiat cannot answer, use kork's legacy fallback view instead of refusing —
   * every account `X-SPINNAKER-ACCOUNTS` names with every authorization, every application — as Clouddriver does with
   * `services.fiat.legacyFallback: true`. Off by default (fail closed).
   */
  legacyFallback?: boolean;
  /** Where grants made by the fallback are logged (warn for WRITE, debug for READ, as kork logs them). */
  logger?: Logger;
}

/** The request facts a Fiat verdict reads: the user, and the header accounts the legacy fallback grants. */
type FiatContext = Pick<SpinnakerRequestContext, 'user' | 'accounts'>;

/** Creates the check; `permissions` undefined means Fiat is off. */
export function createSpinnakerAccess(permissions: FiatPermissions | undefined, options: SpinnakerAccessOptions = {}): SpinnakerAccess {
  const fiatUser = (context: Pick<SpinnakerRequestContext, 'user'>) => context.user || 'anonymous';

  /** The user's permissions: Fiat's, else the legacy fallback when enabled, else why there are none. */
  const permissionOf = async (context: FiatContext): Promise<PermissionLookup & { fallback?: boolean }> => {
    const found = await permissions!.lookup(fiatUser(context));
    if (found.ok || !options.legacyFallback) return found;
    return { ok: true, permission: legacyFallbackPermission(fiatUser(context), context.accounts), fallback: true };
  };

  const fiatVerdict = async (context: FiatContext, checks: readonly AccessCheck[]): Promise<FiatVerdict> => {
    if (!permissions || checks.length === 0) return { allowed: true };
    const user = fiatUser(context);
    const found = await permissionOf(context);
    if (!found.ok) return { allowed: false, status: 503, message: unavailableMessage(user, found.reason) };
    const failed = checks.find((check) => !permits(found.permission, check.type, check.name, check.authorization));
    if (!failed && found.fallback) {
      for (const check of checks) {
        const log = { user, type: check.type, resource: check.name, authorization: check.authorization };
        if (check.authorization === 'READ') options.logger?.debug(log, 'Fiat legacy fallback granted access');
        else options.logger?.warn(log, 'Fiat legacy fallback granted access');
      }
    }
    return failed ? { allowed: false, status: 403, message: deniedMessage(user, failed) } : { allowed: true };
  };

  const enforce = (verdict: FiatVerdict) => {
    if (!verdict.allowed)
      throw new HttpError(verdict.status, verdict.status === 403 ? 'Forbidden' : 'Service Unavailable', verdict.message);
  };

  return {
    fiatEnabled: permissions !== undefined,
    fiatUser,
    fiatVerdict,
    async requireAccount(c, account, authorization) {
      const context = spinnakerContextOf(c);
      const refusal = accountRefusal(context, account);
      if (refusal) throw new HttpError(403, 'Forbidden', refusal);
      enforce(await fiatVerdict(context, [{ type: 'ACCOUNT', name: account, authorization }]));
    },
    async requireApplication(c, application, authorization) {
      enforce(await fiatVerdict(spinnakerContextOf(c), [{ type: 'APPLICATION', name: application, authorization }]));
    },
    async filter(c, items, selectors) {
      const context = spinnakerContextOf(c);
      const byRules = selectors.account
        ? items.filter((item) => {
            const account = selectors.account!(item);
            return account === undefined || mayTouchAccount(context, account);
          })
        : [...items];
      if (!permissions || byRules.length === 0) return byRules;
      const found = await permissionOf(context);
      if (!found.ok) return [];
      return byRules.filter((item) => readable(found.permission, selectors, item));
    },
  };
}

function readable<T>(permission: UserPermission, selectors: AccessSelectors<T>, item: T): boolean {
  const account = selectors.account?.(item);
  if (account !== undefined && !permits(permission, 'ACCOUNT', account, 'READ')) return false;
  const application = selectors.application?.(item);
  return application === undefined || permits(permission, 'APPLICATION', application, 'READ');
}

/** Clouddriver's wording (fiat's FiatAccessDeniedExceptionHandler), plus the user asked about. */
function deniedMessage(user: string, check: AccessCheck): string {
  const subject = check.name ? `${check.type.toLowerCase()} ${check.name.slice(0, 253)}` : `an unnamed ${check.type.toLowerCase()}`;
  return `Access denied to ${subject} - required authorization: ${check.authorization} (Fiat, user ${JSON.stringify(user.slice(0, 253))})`;
}

function unavailableMessage(user: string, reason: string): string {
  return (
    `Fiat could not answer for user ${JSON.stringify(user.slice(0, 253))}, so nothing that needs its permissions is allowed ` +
    `(spinnaker.fiat fails closed): ${reason}`
  );
}
