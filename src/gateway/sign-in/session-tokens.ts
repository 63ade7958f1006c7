/**
 * A session's provider tokens — ID, access and refresh — as the session row keeps them: sealed with the key ring and
 * bound to the row's key (sealed-json.ts), never in clear. Also when they are renewed: their lifetime as the provider
 * states it (`expires_in`, the ID token's `exp - iat`), measured from the moment the gateway received them on its
 * own clock, so a provider whose clock is off does not make the gateway renew too early or too late.
 */
import type { Envelope } from '../secrets/envelope.js';
import type { KeyRing } from '../secrets/key-ring.js';
import { openJson, sealJson } from './sealed-json.js';

/** The tokens of a session. */
export interface SessionTokens {
  idToken: string;
  accessToken: string;
  /** Absent when the provider issued none (no `offline_access`): the session then ends when the tokens expire. */
  refreshToken?: string;
}

/** What the provider's token answer says about lifetimes. */
export interface TokenLifetimes {
  /** `expires_in` of the access token (seconds). */
  expiresIn?: number;
  /** The ID token's `iat` and `exp` (epoch seconds). */
  idTokenIat?: number;
  idTokenExp?: number;
}

/** Lifetime assumed when the provider states none (seconds). */
const DEFAULT_LIFETIME_SECONDS = 300;

/**
 * When tokens received at `now` (epoch ms) are renewed: a minute before the shorter of their lifetimes ends, or
 * half-way through a lifetime of under two minutes.
 */
export function refreshAtOf(now: number, lifetimes: TokenLifetimes): Date {
  // A lifetime not stated (no expires_in, no exp or iat) is NaN, which is dropped with the other unusable ones.
  const stated = [lifetimes.expiresIn ?? Number.NaN, (lifetimes.idTokenExp ?? Number.NaN) - (lifetimes.idTokenIat ?? Number.NaN)];
  const known = stated.filter((s) => Number.isFinite(s) && s > 0);
  const lifetime = known.length > 0 ? Math.min(...known) : DEFAULT_LIFETIME_SECONDS;
  return new Date(now + Math.max(lifetime - 60, lifetime / 2) * 1000);
}

/** The sealing context of a session's tokens: its row key. */
function contextOf(sessionKey: string): string {
  return `outpost-web-session:${sessionKey}`;
}

/** Seals the tokens for the row `sessionKey`. */
export function sealTokens(keys: KeyRing, sessionKey: string, tokens: SessionTokens): Promise<Envelope> {
  return sealJson(keys, tokens, contextOf(sessionKey));
}

/** Opens the tokens of the row `sessionKey`; throws an Error saying why they do not open. */
export async function openTokens(keys: KeyRing, sessionKey: string, sealed: Envelope): Promise<SessionTokens> {
  const value = (await openJson(keys, sealed, contextOf(sessionKey))) as Partial<SessionTokens> | null;
  if (typeof value?.idToken !== 'string' || typeof value.accessToken !== 'string') throw new Error('the sealed tokens are incomplete');
  return {
    idToken: value.idToken,
    accessToken: value.accessToken,
    refreshToken: typeof value.refreshToken === 'string' ? value.refreshToken : undefined,
  };
}
