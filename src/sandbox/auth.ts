/**
 * Authentication: bearer tokens mapped to users. The sandbox has exactly two token users (admin and restricted);
 * anonymous requests are refused with 401, as on a cluster with anonymous auth disabled.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { errors } from './errors.js';

/** An authenticated user as RBAC sees it. */
export interface UserInfo {
  username: string;
  groups: string[];
  /** Set only for an impersonated user given `Impersonate-Uid`. */
  uid?: string;
  /** Set only for an impersonated user given `Impersonate-Extra-*` headers (keys lower-case, unescaped). */
  extra?: Record<string, string[]>;
}

/** The admin user: in `system:masters`, which RBAC always allows. */
export const ADMIN_USER: UserInfo = { username: 'sandbox-admin', groups: ['system:masters', 'system:authenticated'] };
/** The restricted user: allowed only what the seeded `sandbox-restricted` ClusterRole grants. */
export const RESTRICTED_USER: UserInfo = { username: 'sandbox-restricted', groups: ['system:authenticated'] };

/** Maps tokens to users. */
export interface Authenticator {
  readonly adminToken: string;
  readonly restrictedToken: string;
  /** Returns the user for a request's `Authorization: Bearer` header; throws 401 otherwise. */
  authenticate(req: IncomingMessage): UserInfo;
}

/** Creates an authenticator with two fresh random tokens. */
export function createAuthenticator(): Authenticator {
  const adminToken = `admin-${randomBytes(18).toString('base64url')}`;
  const restrictedToken = `restricted-${randomBytes(18).toString('base64url')}`;
  const users = new Map<string, UserInfo>([
    [adminToken, ADMIN_USER],
    [restrictedToken, RESTRICTED_USER],
  ]);
  return {
    adminToken,
    restrictedToken,
    authenticate(req) {
      const header = req.headers.authorization;
      const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
      const user = match ? users.get(match[1]!) : undefined;
      if (!user) throw errors.unauthorized();
      return user;
    },
  };
}
