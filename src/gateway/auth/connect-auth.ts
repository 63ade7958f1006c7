/**
 * Authentication and authorization on the Connect/gRPC surface: the adapter's `contextValues` captures the request's
 * credentials (the TLS socket is only reachable there), and an interceptor admits the call before any handler runs —
 * authenticating it and checking the role the method requires (authorization.ts) — storing the principal under
 * {@link principalKey}. Handlers read it with {@link principalOf}.
 */
import { createContextKey, createContextValues, type ContextValues, type Interceptor } from '@connectrpc/connect';
import type http from 'node:http';
import type http2 from 'node:http2';
import type { Authenticator } from './authenticator.js';
import { admit, connectRequirement } from './authorization.js';
import { sessionCookieAccepted } from './browser-session.js';
import { credentialsFromNodeRequest, type RequestCredentials } from './credentials.js';
import { principalKey, type Principal } from './principal.js';

/** The raw credentials of the current call, set by {@link authContextValues}. */
const credentialsKey = createContextKey<RequestCredentials>({ secure: false }, { description: 'outpost credentials' });

/** Principals of requests admitted from their headers before connect-node saw them (pre-admission.ts). */
const preAdmitted = new WeakMap<object, Principal>();

/** Records the principal pre-admission gave `req`: the interceptor takes it instead of authenticating again. */
export function rememberPreAdmitted(req: http.IncomingMessage | http2.Http2ServerRequest, principal: Principal): void {
  preAdmitted.set(req, principal);
}

/**
 * The adapter's `contextValues` option: records the credentials of each request (and its pre-admitted principal);
 * the browser's cookies only for the services that accept the dashboard's session.
 */
export function authContextValues(req: http.IncomingMessage | http2.Http2ServerRequest): ContextValues {
  const service = /^\/([A-Za-z_][\w.]*)\//.exec(req.url ?? '')?.[1] ?? '';
  const credentials = credentialsFromNodeRequest(req, { browser: sessionCookieAccepted(service) });
  const values = createContextValues().set(credentialsKey, credentials);
  const principal = preAdmitted.get(req);
  return principal ? values.set(principalKey, principal) : values;
}

/**
 * Interceptor that admits every call (unary and streaming): UNAUTHENTICATED without valid credentials,
 * PERMISSION_DENIED without the method's role; the principal is then in the call's context values. Methods requiring
 * `none` (the gRPC health service) skip authentication entirely — credentials, even bad ones, are not looked at — and
 * run without a principal.
 */
export function createAuthInterceptor(authenticator: Authenticator): Interceptor {
  return (next) => async (req) => {
    const service = req.service.typeName;
    const method = req.method.name;
    const requirement = connectRequirement(service, method);
    if (requirement === 'none') return next(req);
    // Admitted from its headers, for this very method, before its body was read: nothing more to check.
    if (req.contextValues.get(principalKey) !== undefined) return next(req);
    const principal = await admit(authenticator, req.contextValues.get(credentialsKey), requirement, `${service}/${method}`);
    req.contextValues.set(principalKey, principal);
    return next(req);
  };
}

/** The principal of a call; undefined only when the interceptor is not installed (a wiring bug). */
export function principalOf(values: ContextValues): Principal | undefined {
  return values.get(principalKey);
}
