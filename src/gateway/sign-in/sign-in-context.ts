/**
 * What the sign-in routes and the session resolver share: the providers, the sessions, the key ring, the audit log,
 * the rules that give a session its roles, and where browsers reach the gateway. Built once by the sign-in module
 * (modules/sign-in-module.ts).
 */
import type { Logger } from '../../shared/logger.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { Authenticator } from '../auth/authenticator.js';
import type { OidcIssuers } from '../auth/oidc-issuers.js';
import type { AuthorizationRule } from '../config/schema.js';
import type { KeyRing } from '../secrets/key-ring.js';
import { SIGN_IN_PREFIX } from './sign-in-paths.js';
import type { WebSessions } from './web-sessions.js';

/** The shared parts of sign-in. */
export interface SignInContext {
  oidc: OidcIssuers;
  sessions: WebSessions;
  /** `secrets.keyFile`: seals the login cookie. */
  keys: KeyRing;
  audit: Pick<AuditLog, 'record'>;
  /** `authorization.rules`: a session's roles, as for a bearer ID token of the same person. */
  rules: readonly AuthorizationRule[];
  /** For `GET /auth/session` with a bearer token. */
  authenticator: Authenticator;
  /**
   * The URL browsers reach the gateway at, without a trailing slash: `auth.oidc.externalUrl`, else `baseUrl`, else
   * the bound HTTP URL — never a request's Host header, which the client writes.
   */
  externalUrl(): string;
  /** Epoch milliseconds (the sessions' clock). */
  clock: () => number;
  logger: Logger;
}

/** The external URL: the configured one, else the gateway's base URL; without a trailing slash. */
export function externalUrlOf(configured: string | undefined, baseUrl: string): string {
  return (configured ?? baseUrl).replace(/\/+$/, '');
}

/** The path of a provider's callback (the redirect URI is the external URL followed by it). */
export function callbackPath(provider: string): string {
  return `${SIGN_IN_PREFIX}/oidc/${provider}/callback`;
}
