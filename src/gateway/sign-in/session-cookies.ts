/**
 * The two cookies of the dashboard's sign-in and where they may go (docs/sign-in.md, "The dashboard"):
 *
 * - the **session** cookie: a random 256-bit secret (base64url), `HttpOnly`, `SameSite=Strict`, `Path=/`, kept for
 *   the session's absolute lifetime; `__Host-outpost-session` when it is `Secure`, which it is when the gateway's
 *   external URL is https or loopback (browsers accept Secure cookies from `http://127.0.0.1` and `http://localhost`,
 *   which they count as secure contexts), so a sibling host cannot plant or shadow it;
 * - the **login** cookie: the sealed PKCE verifier, state and nonce of one sign-in, `HttpOnly`, `SameSite=Lax` (it must
 *   come back with the provider's top-level redirect), scoped to the provider's callback path, ten minutes at most.
 *
 * Nothing here reads a request: the routes and the resolver parse the `Cookie` header with {@link readCookie}.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** How long a sign-in may take between the redirect to the provider and its callback (seconds). */
export const LOGIN_COOKIE_SECONDS = 600;

/** Cookie attributes that depend on where browsers reach the gateway. */
export interface CookieScope {
  /** True when cookies carry `Secure` (an https or loopback external URL). */
  secure: boolean;
}

/** The cookie scope for an external URL: Secure for https, and for loopback hosts, which browsers treat as secure. */
export function cookieScopeOf(externalUrl: string): CookieScope {
  const url = new URL(externalUrl);
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  return { secure: url.protocol === 'https:' || loopback };
}

/** The session cookie's name: with the `__Host-` prefix (Secure, Path=/, no Domain) whenever it is Secure. */
export function sessionCookieName(scope: CookieScope): string {
  return scope.secure ? '__Host-outpost-session' : 'outpost-session';
}

/** The login cookie's name. */
export const LOGIN_COOKIE = 'outpost-login';

/** A new session secret: 32 random bytes, base64url (43 characters). */
export function newSessionSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** True for a value shaped like a session secret; anything else names no session. */
export function isSessionSecret(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

/** The row key of a session: the SHA-256 (hex) of its secret, so the table gives no cookie. */
export function sessionKeyOf(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/**
 * The session's CSRF token, derived from its secret (HMAC-SHA-256): only a holder of the cookie's value or of an
 * answer of `GET /auth/session` knows it, and the table holds neither.
 */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('outpost-csrf-v1').digest('base64url');
}

/** Compares two strings in constant time (over their SHA-256, so lengths leak nothing either). */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}

/** The value of cookie `name` in a `Cookie` header, or undefined. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` of the session cookie, kept `maxAgeSeconds`. */
export function sessionCookie(scope: CookieScope, secret: string, maxAgeSeconds: number): string {
  return cookie(sessionCookieName(scope), secret, scope, '/', 'Strict', Math.floor(maxAgeSeconds));
}

/** `Set-Cookie` that removes the session cookie. */
export function clearedSessionCookie(scope: CookieScope): string {
  return cookie(sessionCookieName(scope), '', scope, '/', 'Strict', 0);
}

/** `Set-Cookie` of the login cookie for the callback path `path`. */
export function loginCookie(scope: CookieScope, value: string, path: string): string {
  return cookie(LOGIN_COOKIE, value, scope, path, 'Lax', LOGIN_COOKIE_SECONDS);
}

/** `Set-Cookie` that removes the login cookie of the callback path `path`. */
export function clearedLoginCookie(scope: CookieScope, path: string): string {
  return cookie(LOGIN_COOKIE, '', scope, path, 'Lax', 0);
}

function cookie(name: string, value: string, scope: CookieScope, path: string, sameSite: 'Strict' | 'Lax', maxAge: number): string {
  return `${name}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=${sameSite}${scope.secure ? '; Secure' : ''}`;
}
