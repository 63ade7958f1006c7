/**
 * One sign-in in flight, kept by the browser rather than by the gateway: the PKCE verifier, `state`, `nonce` and
 * where to go afterwards, sealed with the key ring (bound to the provider) into the login cookie, so the callback
 * may reach any replica and nothing is stored for sign-ins never finished. It expires after
 * {@link LOGIN_COOKIE_SECONDS} by the gateway's clock, whatever the browser does with the cookie.
 */
import type { KeyRing } from '../secrets/key-ring.js';
import { envelopeFromCookie, envelopeToCookie, openJson, sealJson } from './sealed-json.js';
import { LOGIN_COOKIE_SECONDS } from './session-cookies.js';

/** What the callback must check and where it goes on. */
export interface LoginState {
  state: string;
  nonce: string;
  verifier: string;
  /** A same-origin path ({@link sameOriginPath}). */
  next: string;
  /** Epoch ms. */
  expiresAt: number;
}

function contextOf(provider: string): string {
  return `outpost-login:${provider}`;
}

/** The login cookie's value for a sign-in started at `now` (epoch ms). */
export async function sealLoginState(keys: KeyRing, provider: string, state: Omit<LoginState, 'expiresAt'>, now: number): Promise<string> {
  const value: LoginState = { ...state, expiresAt: now + LOGIN_COOKIE_SECONDS * 1000 };
  return envelopeToCookie(await sealJson(keys, value, contextOf(provider)));
}

/** The sign-in a login cookie holds, or undefined when it is missing, altered, of another provider or expired. */
export async function openLoginState(
  keys: KeyRing,
  provider: string,
  cookie: string | undefined,
  now: number,
): Promise<LoginState | undefined> {
  let value: Partial<LoginState>;
  try {
    // openJson refuses what is no envelope (no cookie, not one): no sign-in either
    value = (await openJson(keys, cookie ? envelopeFromCookie(cookie) : undefined, contextOf(provider))) as Partial<LoginState>;
  } catch {
    return undefined;
  }
  const { state, nonce, verifier, next, expiresAt } = value;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof verifier !== 'string' || typeof next !== 'string') return undefined;
  if (typeof expiresAt !== 'number' || expiresAt <= now) return undefined;
  return { state, nonce, verifier, next: sameOriginPath(next), expiresAt };
}

/**
 * `next` when it is a path of this origin — it starts with one `/`, not `//` nor `/\` (which browsers read as another
 * host), and holds printable ASCII without spaces or backslashes (a tab or newline is dropped by URL parsers, which
 * would turn `/\t/evil.example` into `//evil.example`) — else `/`. Never an open redirect.
 */
export function sameOriginPath(next: string | undefined): string {
  // Stryker disable next-line StringLiteral: any other fallback is no path of this origin either, and lands on / too
  const path = next ?? '/';
  return /^\/(?![/\\])[\x21-\x5b\x5d-\x7e]*$/.test(path) ? path : '/';
}
