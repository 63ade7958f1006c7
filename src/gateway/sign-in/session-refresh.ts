/**
 * Renewing a session's tokens with its refresh token once they are due (docs/sign-in.md, "The dashboard"): one
 * replica at a time — the row is locked for the call to the provider, so two replicas (or two requests) never spend
 * the same refresh token, which a provider rotating refresh tokens would punish by revoking the grant — and the
 * others, once the lock is theirs, find the row renewed and use it. The new ID token is checked like any bearer token
 * of the provider (its signature too) and its groups replace the session's: a person removed from a group loses its
 * roles at the next renewal. A refusal by the provider (`invalid_grant`: revoked, expired, the person disabled) or a
 * new ID token naming someone else ends the session; a provider that cannot be reached does not (UNAVAILABLE, the
 * next request tries again).
 */
import { Code, ConnectError } from '@connectrpc/connect';
import * as client from 'openid-client';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { OidcIssuers } from '../auth/oidc-issuers.js';
import type { KeyRing } from '../secrets/key-ring.js';
import { clientConfiguration } from './oidc-client.js';
import { openTokens, refreshAtOf, sealTokens } from './session-tokens.js';
import { lockWebSession, updateWebSessionTokens, type WebSessionRow } from './web-session-store.js';

/** What a refresh needs. */
export interface SessionRefreshDeps {
  database: Database;
  keys: KeyRing;
  oidc: OidcIssuers;
  logger: Logger;
}

/** The outcome of one refresh: the row as it now is, or why the session ended (the caller deletes it). */
export type RefreshOutcome = { kind: 'renewed'; row: WebSessionRow } | { kind: 'ended'; reason: string };

/**
 * Renews the tokens of session `key` if they are still due at `now` (epoch ms) once its row is locked. Rejects
 * UNAVAILABLE when the provider cannot be reached (nothing changed).
 */
export async function refreshSession(deps: SessionRefreshDeps, key: string, now: number): Promise<RefreshOutcome> {
  return deps.database.db.transaction(async (tx): Promise<RefreshOutcome> => {
    const row = await lockWebSession(tx, key);
    if (!row) return { kind: 'ended', reason: 'it was ended meanwhile' };
    if (row.refreshAt.getTime() > now) return { kind: 'renewed', row };
    const issuer = deps.oidc.byName(row.provider);
    if (!issuer) return { kind: 'ended', reason: `its provider ${row.provider} is no longer configured` };
    let tokens: Awaited<ReturnType<typeof openTokens>>;
    try {
      tokens = await openTokens(deps.keys, key, row.tokens);
    } catch (err) {
      return { kind: 'ended', reason: `its tokens cannot be read: they were ${(err as Error).message}` };
    }
    if (!tokens.refreshToken) {
      return { kind: 'ended', reason: `its tokens expired and provider ${row.provider} issued no refresh token (scope offline_access)` };
    }
    const configuration = await clientConfiguration(issuer);
    let response: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
    try {
      response = await client.refreshTokenGrant(configuration, tokens.refreshToken);
    } catch (err) {
      if (err instanceof client.ResponseBodyError) {
        return { kind: 'ended', reason: `provider ${row.provider} refused to renew it (${err.error})` };
      }
      deps.logger.warn({ provider: row.provider, err: (err as Error).message }, 'renewing a dashboard session failed; trying again later');
      throw new ConnectError(
        `OIDC provider ${row.provider} cannot be reached to renew the session: ${(err as Error).message}`,
        Code.Unavailable,
      );
    }
    let groups = row.groups;
    const claims = response.claims();
    if (response.id_token) {
      let identity: Awaited<ReturnType<typeof issuer.verify>>;
      try {
        identity = await issuer.verify(response.id_token);
      } catch (err) {
        if (err instanceof ConnectError && err.code === Code.Unauthenticated)
          return { kind: 'ended', reason: `its renewed ${err.rawMessage}` };
        throw err;
      }
      if (identity.subject !== row.subject) return { kind: 'ended', reason: `the renewed ID token names ${identity.subject}` };
      groups = identity.groups;
    }
    const renewed: WebSessionRow = {
      ...row,
      groups,
      tokens: await sealTokens(deps.keys, key, {
        idToken: response.id_token ?? tokens.idToken,
        accessToken: response.access_token,
        refreshToken: response.refresh_token ?? tokens.refreshToken,
      }),
      refreshAt: refreshAtOf(now, { expiresIn: response.expires_in, idTokenIat: claims?.iat, idTokenExp: claims?.exp }),
      lastUsedAt: new Date(now),
    };
    await updateWebSessionTokens(tx, key, {
      tokens: renewed.tokens,
      groups: renewed.groups,
      refreshAt: renewed.refreshAt,
      lastUsedAt: renewed.lastUsedAt,
    });
    return { kind: 'renewed', row: renewed };
  });
}
