/**
 * `GET /auth/providers`: the sign-in options, public (nothing secret: the issuers and client ids are in every token
 * and every redirect). The dashboard draws a "Sign in with …" button per provider; `outpost login` reads the issuer,
 * the CLI's client id and the scopes to sign in with the device grant or a loopback redirect.
 */
import type { Hono } from 'hono';
import type { OidcIssuers } from '../auth/oidc-issuers.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { SIGN_IN_PREFIX } from './sign-in-paths.js';

/** One provider as `GET /auth/providers` lists it. */
interface ProviderListing {
  name: string;
  displayName: string;
  issuer: string;
  /** The public client `outpost login` signs in with (`cliClientId`, else `clientId`). */
  cliClientId: string;
  scopes: string[];
}

/** The listing of every configured provider, in configuration order. */
function listProviders(oidc: OidcIssuers): ProviderListing[] {
  return oidc.all().map(({ config: p }) => ({
    name: p.name,
    displayName: p.displayName ?? p.name,
    issuer: p.issuer,
    cliClientId: p.cliClientId ?? p.clientId,
    scopes: p.scopes,
  }));
}

/** Adds `GET /auth/providers` to the REST app. */
export function addProviderRoutes(app: Hono<RestEnv>, oidc: OidcIssuers): void {
  app.get(`${SIGN_IN_PREFIX}/providers`, (c) => c.json({ providers: listProviders(oidc) }));
}
