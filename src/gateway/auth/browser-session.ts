/**
 * The dashboard's session cookie as a credential, declared here and implemented above (src/gateway/sign-in/): the
 * core authenticates, but sessions live in a feature that imports the core, so the sign-in module hands the
 * authenticator a {@link SessionResolver} (docs/architecture.md, "Which way imports go"). The cookie is read only on
 * the dashboard's surfaces — the client API's Connect calls, the REST routes, and on `/k8s` the one read the page
 * makes there, a pod's log ({@link sessionCookieAcceptedOnKube}) — never on other `/k8s` requests, on agent streams
 * or on the gRPC port (servers.ts drops the header there), and a bearer token always takes precedence over it.
 */
import type { Principal } from './principal.js';

/** What a browser's request presents for a session: the cookies, and the headers the CSRF rules read. */
export interface BrowserRequest {
  /** The `Cookie` header as sent. */
  cookie: string;
  /** `X-Outpost-CSRF`. */
  csrf?: string;
  /** `Origin`. */
  origin?: string;
  /** `Sec-Fetch-Site`. */
  fetchSite?: string;
  /** The HTTP method. */
  method: string;
  /** The request path without its query (`/outpost.api.v1.AccountService/ListAccounts`, `/armory/accounts`). */
  path: string;
}

/** Resolves the dashboard session a request's cookie names. */
export interface SessionResolver {
  /**
   * The principal of the session (its roles from the rules, as for a bearer ID token of the same person), or
   * undefined when the request carries no session cookie. Rejects UNAUTHENTICATED when the session ended (signed
   * out, expired, idle, its refresh refused) and PERMISSION_DENIED when the request breaks the CSRF rules (the
   * resolver audits that refusal itself: the caller was authenticated).
   */
  authenticate(request: BrowserRequest): Promise<Principal | undefined>;
}

/** The Connect/gRPC services whose calls may authenticate with the session cookie: the client API the dashboard calls. */
export function sessionCookieAccepted(service: string): boolean {
  return service.startsWith('outpost.api.v1.');
}

/** A pod's log below `/k8s/{account}`: `/api/v1/namespaces/{ns}/pods/{pod}/log`, nothing before or after. */
const POD_LOG_PATH = /^\/api\/v1\/namespaces\/[^/]+\/pods\/[^/]+\/log$/;

/**
 * Whether a `/k8s/{account}` request may authenticate with the session cookie: only a plain GET of a pod's log (what
 * the dashboard's pod page reads), never an upgrade (exec, attach, port-forward) nor any other path. `path` is the
 * path below `/k8s/{account}`, without its query. The CSRF rules still apply, the header included.
 */
export function sessionCookieAcceptedOnKube(method: string, path: string, upgrade: boolean): boolean {
  return !upgrade && method.toUpperCase() === 'GET' && POD_LOG_PATH.test(path);
}

/** The CSRF header every cookie-authenticated request must carry (sign-in/csrf-rules.ts). */
export const CSRF_HEADER = 'X-Outpost-CSRF';
