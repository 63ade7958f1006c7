/**
 * Who is signed in, and signing out (docs/sign-in.md, "The dashboard"):
 *
 * - `GET /auth/session`: for the session cookie, `{signedIn, identity, subject, provider, groups, roles, expiresAt,
 *   csrfToken}` — the one request exempt from the CSRF header (the page learns the token here; the Origin and
 *   Sec-Fetch-Site rules still apply, and no CORS header is ever answered, so another origin cannot read it); for a
 *   bearer token the same without `csrfToken` (a `whoami`); without credentials, or for a session that ended,
 *   `{signedIn: false}` (and the dead cookie is cleared).
 * - `POST /auth/logout` (the cookie and the CSRF rules, header included): deletes the session row, clears the cookie
 *   and answers `{endSessionUrl}` when the provider publishes an `end_session_endpoint` (with `id_token_hint`,
 *   `post_logout_redirect_uri` `<externalUrl>/` and `client_id`), else `{}`. The body is never read.
 *
 * Both are audited through the sessions: sign-out here, refusals in session-resolver.ts.
 */
import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Context, Hono } from 'hono';
import * as client from 'openid-client';
import { CSRF_HEADER, type BrowserRequest } from '../auth/browser-session.js';
import { credentialsFromNodeRequest, type RequestCredentials } from '../auth/credentials.js';
import { identityOf, type Principal } from '../auth/principal.js';
import type { RestEnv } from '../auth/rest-auth.js';
import { HttpError } from '../http/errors.js';
import { clientConfiguration } from './oidc-client.js';
import { clearedSessionCookie, cookieScopeOf, csrfTokenOf } from './session-cookies.js';
import { enforceCsrfRules, sessionPrincipal, sessionSecretOf } from './session-resolver.js';
import { sessionAuditEntry } from './sign-in-audit.js';
import type { SignInContext } from './sign-in-context.js';
import { SIGN_IN_PREFIX } from './sign-in-paths.js';

/** Adds `GET /auth/session` and `POST /auth/logout`. */
export function addSessionRoutes(app: Hono<RestEnv>, ctx: SignInContext): void {
  app.get(`${SIGN_IN_PREFIX}/session`, async (c) => {
    c.header('Cache-Control', 'no-store');
    const { credentials, browser } = requestOf(c);
    if (credentials.bearer !== undefined || credentials.otherAuthorization !== undefined) {
      return c.json(describe(await ctx.authenticator.authenticate(credentials)));
    }
    const secret = sessionSecretOf(ctx, browser.cookie);
    if (secret === undefined) return c.json({ signedIn: false });
    await enforceCsrfRules(ctx, browser, secret, false);
    try {
      const session = await ctx.sessions.resolve(secret);
      return c.json({ ...describe(sessionPrincipal(ctx.rules, session)), csrfToken: csrfTokenOf(secret) });
    } catch (err) {
      if (!(err instanceof ConnectError) || err.code !== Code.Unauthenticated) throw err;
      c.header('Set-Cookie', clearedSessionCookie(cookieScopeOf(ctx.externalUrl())));
      return c.json({ signedIn: false, message: err.rawMessage });
    }
  });

  app.post(`${SIGN_IN_PREFIX}/logout`, async (c) => {
    c.header('Cache-Control', 'no-store');
    const { browser } = requestOf(c);
    const secret = sessionSecretOf(ctx, browser.cookie);
    if (secret === undefined) throw new HttpError(401, 'unauthenticated', 'no dashboard session to sign out of (no session cookie)');
    await enforceCsrfRules(ctx, browser, secret, true);
    const ended = await ctx.sessions.end(secret);
    const external = ctx.externalUrl();
    c.header('Set-Cookie', clearedSessionCookie(cookieScopeOf(external)));
    if (!ended) throw new HttpError(401, 'unauthenticated', 'no such dashboard session (signed out, ended, or of another gateway)');
    const { session, idToken } = ended;
    ctx.audit.record(
      sessionAuditEntry({
        verb: 'sign-out',
        subject: session.subject,
        groups: session.groups,
        path: c.req.path,
        status: 200,
        at: new Date(ctx.clock()),
      }),
    );
    ctx.logger.info({ subject: session.subject }, 'signed out of the dashboard');
    const endSessionUrl = await endSessionUrlOf(ctx, session.provider, idToken, `${external}/`);
    return c.json(endSessionUrl ? { endSessionUrl } : {});
  });
}

/** What `GET /auth/session` says about a principal. */
function describe(principal: Principal) {
  const provider = principal.method === 'oidc' ? principal.subject.slice(0, principal.subject.indexOf(':')) : '';
  return {
    signedIn: true,
    identity: identityOf(principal),
    subject: principal.subject,
    provider,
    groups: [...(principal.groups ?? [])],
    roles: [...principal.roles].sort(),
    expiresAt: principal.expiresAt === undefined ? null : new Date(principal.expiresAt).toISOString(),
  };
}

/**
 * The provider's sign-out URL for the person, or undefined when it publishes none (or cannot be reached now: the
 * gateway's session is over either way).
 */
async function endSessionUrlOf(
  ctx: SignInContext,
  provider: string,
  idToken: string | undefined,
  back: string,
): Promise<string | undefined> {
  const issuer = ctx.oidc.byName(provider);
  if (!issuer) return undefined;
  try {
    const configuration = await clientConfiguration(issuer);
    if (!configuration.serverMetadata().end_session_endpoint) return undefined;
    const parameters: Record<string, string> = { post_logout_redirect_uri: back };
    if (idToken) parameters.id_token_hint = idToken;
    return client.buildEndSessionUrl(configuration, parameters).href;
  } catch (err) {
    ctx.logger.warn({ provider, err: (err as Error).message }, 'no provider sign-out URL');
    return undefined;
  }
}

/** The request's credentials (without cookies) and its browser part (cookies and the CSRF rules' headers). */
function requestOf(c: Context<RestEnv>): { credentials: RequestCredentials; browser: BrowserRequest } {
  const env = c.env as Partial<HttpBindings | Http2Bindings> | undefined;
  return {
    credentials: env?.incoming ? credentialsFromNodeRequest(env.incoming) : { secure: false },
    browser: {
      cookie: c.req.header('cookie') ?? '',
      csrf: c.req.header(CSRF_HEADER),
      origin: c.req.header('origin'),
      fetchSite: c.req.header('sec-fetch-site'),
      method: c.req.method,
      path: c.req.path,
    },
  };
}
