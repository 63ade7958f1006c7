/**
 * Fiat's `UserPermission.View` (`GET /authorize/{user}`) as the gateway keeps it, and the one rule that reads it — the
 * rule of kork's `FiatPermissionEvaluator.permissionContains`, which Clouddriver's `hasPermission(…)` checks apply:
 *
 * - an admin (`admin`; `isAdmin` is accepted too) may do everything;
 * - an account is allowed when the view lists it (names compared ignoring case) with the authorization asked for;
 * - an application likewise, except that an application the view does not list at all is allowed when
 *   `allowAccessToUnknownApplications` is true (Fiat's server setting, copied into every view);
 * - an empty resource name is refused, the admin included (the evaluator refuses a null resource before anything).
 *
 * Only what these rules read is kept; the rest of the view (roles, service accounts, build services) is ignored.
 */

/** Authorizations Fiat grants on accounts and applications. */
export type FiatAuthorization = 'READ' | 'WRITE' | 'EXECUTE';
/** The resource types the Clouddriver routes check. */
export type FiatResourceType = 'ACCOUNT' | 'APPLICATION';

/** A user's permissions as Fiat answered them. */
export interface UserPermission {
  /** The name Fiat answered for (its `name`), or the user asked for. */
  name: string;
  admin: boolean;
  allowAccessToUnknownApplications: boolean;
  /** Lower-cased account name → authorizations. */
  accounts: ReadonlyMap<string, ReadonlySet<string>>;
  /** Lower-cased application name → authorizations. */
  applications: ReadonlyMap<string, ReadonlySet<string>>;
}

/** Thrown by {@link parseUserPermission} for an answer that is not a permission view. */
export class UserPermissionFormatError extends Error {
  override name = 'UserPermissionFormatError';
}

/** The permissions of a user Fiat does not know (its 404, "user not found"): nothing at all. */
export function noPermissions(name: string): UserPermission {
  return { name, admin: false, allowAccessToUnknownApplications: false, accounts: new Map(), applications: new Map() };
}

const ALL_AUTHORIZATIONS: ReadonlySet<string> = new Set(['READ', 'WRITE', 'EXECUTE']);

/**
 * kork's legacy fallback view (`FiatPermissionEvaluator.buildFallbackView`), used only when Fiat cannot answer and
 * `spinnaker.fiat.legacyFallback` is on: the accounts of the request's `X-SPINNAKER-ACCOUNTS` (an account without
 * permissions grants every authorization) and every application. Built per request, never cached, so one request's
 * header never widens another's.
 */
export function legacyFallbackPermission(name: string, headerAccounts: ReadonlySet<string> | undefined): UserPermission {
  const accounts = new Map<string, ReadonlySet<string>>();
  for (const account of headerAccounts ?? []) accounts.set(account.toLowerCase(), ALL_AUTHORIZATIONS);
  return { name, admin: false, allowAccessToUnknownApplications: true, accounts, applications: new Map() };
}

/**
 * Reads Fiat's JSON answer. Throws {@link UserPermissionFormatError} when it is not an object or its resource lists
 * are not lists of `{name, authorizations}`: a view the gateway cannot read is treated as Fiat not answering (closed),
 * never as a view with fewer resources.
 */
export function parseUserPermission(json: unknown, asked: string): UserPermission {
  if (!isObject(json)) throw new UserPermissionFormatError('the answer is not a JSON object');
  return {
    name: typeof json.name === 'string' ? json.name : asked,
    admin: json.admin === true || json.isAdmin === true,
    allowAccessToUnknownApplications: json.allowAccessToUnknownApplications === true,
    accounts: resources(json.accounts, 'accounts'),
    applications: resources(json.applications, 'applications'),
  };
}

/** True when `permission` grants `authorization` on the resource (see the module comment for the rules). */
export function permits(permission: UserPermission, type: FiatResourceType, name: string, authorization: FiatAuthorization): boolean {
  if (!name) return false;
  if (permission.admin) return true;
  const key = name.toLowerCase();
  if (type === 'ACCOUNT') return permission.accounts.get(key)?.has(authorization) ?? false;
  const granted = permission.applications.get(key);
  if (granted === undefined) return permission.allowAccessToUnknownApplications;
  return granted.has(authorization);
}

function resources(value: unknown, field: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  if (value === undefined || value === null) return out;
  if (!Array.isArray(value)) throw new UserPermissionFormatError(`${field} is not a list`);
  for (const item of value) {
    if (!isObject(item) || typeof item.name !== 'string') throw new UserPermissionFormatError(`an entry of ${field} has no name`);
    const authorizations = item.authorizations ?? [];
    if (!Array.isArray(authorizations)) throw new UserPermissionFormatError(`authorizations of ${field} entry ${item.name} is not a list`);
    const key = item.name.toLowerCase();
    const set = out.get(key) ?? new Set<string>();
    for (const a of authorizations) if (typeof a === 'string') set.add(a.toUpperCase());
    out.set(key, set);
  }
  return out;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
