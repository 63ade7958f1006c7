/**
 * The dashboard's sign-in, the authorization-code flow with PKCE (openid-client; docs/sign-in.md, "The dashboard"):
 *
 * - `GET /auth/oidc/<provider>/login?next=/…` keeps a new PKCE verifier (S256), `state` and `nonce` in the sealed
 *   login cookie and redirects to the provider's authorization endpoint, with the redirect URI
 *   `<externalUrl>/auth/oidc/<provider>/callback`;
 * - `GET /auth/oidc/<provider>/callback` redeems the code (state, nonce and PKCE checked; the ID token checked again
 *   by the core's verifier, its signature too), creates the session row, sets the session cookie and redirects to
 *   `next` — a path of this origin, else `/`.
 *
 * A sign-in that fails — the provider cannot be reached, its `?error=`, a missing or expired login cookie, a state
 * that does not match, a code the provider refuses — creates nothing and redirects to `/?sign_in_error=<code>`, which the dashboard shows as
 * a fixed sentence (a code, never text from the URL, so a crafted link cannot put words on the page). An unknown
 * provider is a 404 `{error, message}`.
 */
import type { Context, Hono } from 'hono';
import * as client from 'openid-client';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import { openLoginState, sameOriginPath, sealLoginState } from './login-state.js';
import { clientConfiguration } from './oidc-client.js';
import { clearedLoginCookie, cookieScopeOf, LOGIN_COOKIE, loginCookie, readCookie, sessionCookie } from './session-cookies.js';
import { sessionAuditEntry } from './sign-in-audit.js';
import { callbackPath, type SignInContext } from './sign-in-context.js';
import { SIGN_IN_PREFIX } from './sign-in-paths.js';

/** Why a sign-in failed, as the dashboard reads it from `/?sign_in_error=`. */
type SignInFailure = 'access_denied' | 'provider_error' | 'login_expired' | 'state_mismatch' | 'token_refused' | 'unavailable';

/** Adds the login and callback routes. */
export function addLoginRoutes(app: Hono<RestEnv>, ctx: SignInContext): void {
  const issuerOf = (c: Context) => {
    const name = c.req.param('provider') ?? '';
    const issuer = ctx.oidc.byName(name);
    if (!issuer) {
      const known = ctx.oidc.all().map((i) => i.config.name);
      throw new HttpError(404, 'not_found', `no OIDC provider ${JSON.stringify(name)}: auth.oidc.providers has ${known.join(', ')}`);
    }
    return issuer;
  };

  app.get(`${SIGN_IN_PREFIX}/oidc/:provider/login`, async (c) => {
    const issuer = issuerOf(c);
    const external = ctx.externalUrl();
    c.header('Cache-Control', 'no-store');
    let configuration: client.Configuration;
    try {
      configuration = await clientConfiguration(issuer);
    } catch (err) {
      ctx.logger.warn({ provider: issuer.config.name, detail: (err as Error).message }, 'dashboard sign-in cannot start');
      return c.redirect('/?sign_in_error=unavailable', 302);
    }
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(configuration, {
      redirect_uri: `${external}${callbackPath(issuer.config.name)}`,
      scope: issuer.config.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const next = sameOriginPath(c.req.query('next'));
    const sealed = await sealLoginState(ctx.keys, issuer.config.name, { state, nonce, verifier, next }, ctx.clock());
    c.header('Set-Cookie', loginCookie(cookieScopeOf(external), sealed, callbackPath(issuer.config.name)));
    return c.redirect(authorizationUrl.href, 302);
  });

  app.get(`${SIGN_IN_PREFIX}/oidc/:provider/callback`, async (c) => {
    const issuer = issuerOf(c);
    const name = issuer.config.name;
    const external = ctx.externalUrl();
    const scope = cookieScopeOf(external);
    // The login cookie serves one callback, whatever its outcome.
    c.header('Set-Cookie', clearedLoginCookie(scope, callbackPath(name)), { append: true });
    c.header('Cache-Control', 'no-store');
    const failed = (code: SignInFailure, detail: string) => {
      ctx.logger.warn({ provider: name, failure: code, detail }, 'dashboard sign-in failed');
      return c.redirect(`/?sign_in_error=${code}`, 302);
    };

    const login = await openLoginState(ctx.keys, name, readCookie(c.req.header('cookie'), LOGIN_COOKIE), ctx.clock());
    const query = new URL(c.req.url).searchParams;
    const providerError = query.get('error');
    if (providerError !== null) {
      return failed(providerError === 'access_denied' ? 'access_denied' : 'provider_error', `the provider answered ${providerError}`);
    }
    if (!login) return failed('login_expired', 'no valid login cookie (expired, missing, or sealed for another provider)');
    if (query.get('state') !== login.state) return failed('state_mismatch', 'the state parameter is not the one this browser was given');

    let configuration: client.Configuration;
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    try {
      configuration = await clientConfiguration(issuer);
    } catch (err) {
      return failed('unavailable', (err as Error).message);
    }
    try {
      tokens = await client.authorizationCodeGrant(configuration, new URL(`${external}${callbackPath(name)}?${query}`), {
        pkceCodeVerifier: login.verifier,
        expectedState: login.state,
        expectedNonce: login.nonce,
        idTokenExpected: true,
      });
    } catch (err) {
      return failed('provider_error', (err as Error).message);
    }
    let identity: Awaited<ReturnType<typeof issuer.verify>>;
    try {
      identity = await issuer.verify(tokens.id_token!);
    } catch (err) {
      return failed('token_refused', (err as Error).message);
    }
    const claims = tokens.claims();
    const created = await ctx.sessions.create(
      identity,
      { idToken: tokens.id_token!, accessToken: tokens.access_token, refreshToken: tokens.refresh_token },
      { expiresIn: tokens.expires_in, idTokenIat: claims?.iat, idTokenExp: claims?.exp },
    );
    const maxAge = Math.round((created.expiresAt.getTime() - ctx.clock()) / 1000);
    c.header('Set-Cookie', sessionCookie(scope, created.secret, maxAge), { append: true });
    ctx.audit.record(
      sessionAuditEntry({
        verb: 'sign-in',
        subject: identity.subject,
        groups: identity.groups,
        path: c.req.path,
        status: 302,
        at: new Date(ctx.clock()),
      }),
    );
    ctx.logger.info({ subject: identity.subject, provider: name }, 'signed in to the dashboard');
    return c.redirect(login.next, 302);
  });
}
