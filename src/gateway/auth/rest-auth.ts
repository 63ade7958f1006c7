/**
 * Authentication and authorization on the REST surface (Hono): the middleware reads the credentials from the Node
 * request behind the fetch Request (`c.env.incoming`), admits the request against the role its method and path
 * require (authorization.ts) — before routing, so an unauthenticated request to a missing route gets 401, not 404 —
 * and stores the principal in the Hono context under `principal`. The dashboard's session cookie is a credential here
 * (browser-session.ts). Refusals become 401 `{error: "unauthenticated"}` or 403 `{error: "permission_denied"}` with
 * the reason in `message`.
 */
import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import type { MiddlewareHandler } from 'hono';
import { Code, ConnectError } from '@connectrpc/connect';
import { HttpError } from '../http/errors.js';
import type { Authenticator } from './authenticator.js';
import { admit, type PathRule, restRequirement } from './authorization.js';
import { credentialsFromNodeRequest, type RequestCredentials } from './credentials.js';
import type { Principal } from './principal.js';

/** Hono variables set by {@link createRestAuth}. */
export interface AuthVariables {
  /** Set on every route but those requiring nothing (`GET /health`). */
  principal: Principal;
}

/**
 * Middleware admitting every request against what its route requires: the features' `rules` first, then the core's
 * table (authorization.ts); paths in `open` (exact, any method) additionally skip it.
 */
export function createRestAuth(
  authenticator: Authenticator,
  rules: readonly PathRule[] = [],
  open: readonly string[] = [],
): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async (c, next) => {
    if (open.includes(c.req.path)) return next();
    const requirement = restRequirement(c.req.method, c.req.path, rules);
    if (requirement === 'none') return next();
    const env = c.env as Partial<HttpBindings | Http2Bindings> | undefined;
    const credentials: RequestCredentials = env?.incoming
      ? credentialsFromNodeRequest(env.incoming, { browser: true })
      : bearerOnly(c.req.header('authorization'));
    let principal: Principal | undefined;
    try {
      principal = await admit(authenticator, credentials, requirement, `${c.req.method} ${c.req.path}`);
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unauthenticated) throw new HttpError(401, 'unauthenticated', err.rawMessage);
      if (err instanceof ConnectError && err.code === Code.PermissionDenied) throw new HttpError(403, 'permission_denied', err.rawMessage);
      throw err;
    }
    if (principal) c.set('principal', principal);
    return next();
  };
}

/** Credentials of a request without a Node socket behind it (`app.request()` in tests). */
function bearerOnly(header: string | undefined): RequestCredentials {
  const m = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return { secure: false, bearer: m?.[1], otherAuthorization: header && !m ? header.split(/\s+/)[0] : undefined };
}

/** The Hono environment of every REST route: handlers read `c.get('principal')`. */
export type RestEnv = { Variables: AuthVariables };
