/**
 * The CLI's side of OpenID Connect, on openid-client: the provider's discovery document as a client configuration
 * for the CLI's public client, the tokens a grant answered turned into what the cache keeps, and openid-client's
 * errors turned into one readable line. Loaded only when a sign-in, a renewal or a sign-out talks to the provider.
 */
import * as oidc from 'openid-client';
import { CliError, ExitCode } from '../errors.js';
import { readIdToken } from './id-token.js';
import type { StoredLogin } from './login-store.js';

/** Hosts an `http://` issuer may name (as the gateway's auth.oidc allows): a provider on this machine. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * One line for any error of openid-client or of the request under it: the provider's OAuth error and description, or
 * the message with the socket's code (`ECONNREFUSED`). Never throws.
 */
export function describeOidcError(err: unknown): string {
  const e = err as { error?: unknown; error_description?: unknown; name?: unknown };
  if (typeof e?.error === 'string') return typeof e.error_description === 'string' ? `${e.error}: ${e.error_description}` : e.error;
  if (e?.name === 'TimeoutError') return 'the provider did not answer in time';
  // fetch's "fetch failed" says nothing; the socket's code and message are in its causes.
  const parts: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; depth < 4 && cur && typeof cur === 'object'; depth++) {
    const { code, message, cause } = cur as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof message === 'string' && message !== '') parts.push(typeof code === 'string' ? `${code}: ${message}` : message);
    cur = cause;
  }
  if (parts.length === 0) return String(err);
  return parts.length === 1 ? parts[0]! : `${parts[0]} (${parts.slice(1).join('; ')})`;
}

/**
 * The client configuration of `clientId` (a public client: no secret, PKCE) at `issuer`, from its discovery document.
 * Plain http is allowed only to a loopback issuer. Throws CliError (exit 1) naming the issuer when the document
 * cannot be read or does not describe that issuer.
 */
export async function discoverProvider(issuer: string, clientId: string): Promise<oidc.Configuration> {
  const url = new URL(issuer);
  const insecure = url.protocol === 'http:';
  if (insecure && !LOOPBACK_HOSTS.has(url.hostname)) {
    throw new CliError(`the issuer ${issuer} is plain http to another machine: only https issuers are used`, ExitCode.FAILED);
  }
  try {
    return await oidc.discovery(url, clientId, undefined, oidc.None(), {
      execute: insecure ? [oidc.allowInsecureRequests] : [],
      timeout: 30,
    });
  } catch (err) {
    throw new CliError(
      `cannot read the discovery document of the issuer ${issuer} (${describeOidcError(err)}); is the provider up, and ` +
        'does this machine trust its certificate (NODE_EXTRA_CA_CERTS for a private CA)?',
      ExitCode.FAILED,
    );
  }
}

/** What a login is, besides the tokens a grant answers. */
export type LoginBase = Omit<StoredLogin, 'idToken' | 'expiresAt' | 'accessToken' | 'refreshToken'> & { refreshToken?: string };

/**
 * The login made of a grant's answer: the ID token (required: it is the bearer) and its `exp`, the access token,
 * the new refresh token or else the one `base` had (a provider that does not rotate them answers none). Throws
 * CliError (exit 1) when the answer has no ID token.
 */
export function loginFromTokens(tokens: oidc.TokenEndpointResponse, base: LoginBase): StoredLogin {
  if (typeof tokens.id_token !== 'string') {
    throw new CliError(
      `the provider ${base.provider} (${base.issuer}) answered without an ID token: the provider's scopes must include openid, ` +
        'and its renewals must return an ID token',
      ExitCode.FAILED,
    );
  }
  const facts = readIdToken(tokens.id_token, `the provider ${base.provider}`);
  const login: StoredLogin = {
    ...base,
    idToken: tokens.id_token,
    expiresAt: facts.expiresAt.toISOString(),
    accessToken: tokens.access_token,
    scopes: typeof tokens.scope === 'string' ? tokens.scope.split(' ').filter(Boolean) : base.scopes,
  };
  const refreshToken = typeof tokens.refresh_token === 'string' ? tokens.refresh_token : base.refreshToken;
  if (refreshToken !== undefined) login.refreshToken = refreshToken;
  return login;
}
