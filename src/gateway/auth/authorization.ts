/**
 * Which role each Connect method and REST route requires — one table for the whole gateway — and the admission step
 * both surfaces run before any handler (and, on REST, before routing: an unauthenticated request to a route that does
 * not exist gets 401, not 404, so probing reveals nothing). Anything not listed requires `admin`.
 *
 * | Surface | Requires |
 * |---|---|
 * | `outpost.agent.v1.AgentService/Connect` | agent |
 * | `outpost.api.v1.ObjectService/*` | read |
 * | `outpost.api.v1.OperationService/SubmitOperation` | write; its other methods: read |
 * | `outpost.api.v1.AccountService/{ListAccounts,GetAccount,ListAgents}` | read; its other methods: admin |
 * | `outpost.api.v1.FleetService/*` | read |
 * | `outpost.api.v1.MetricsService/*` (GetHistory: the dashboard's charts) | read |
 * | `outpost.api.v1.AuditService/*` (ListAuditEvents) | admin |
 * | `grpc.health.v1.Health/*` (Check, Watch) | nothing (no authentication at all: gRPC probes carry no credentials) |
 * | `grpc.reflection.v1.ServerReflection/*`, `grpc.reflection.v1alpha.ServerReflection/*` | read |
 * | `GET /health` | nothing (no authentication at all) |
 * | `GET /`, `/index.html`, `/favicon.svg`, `/assets/*` (the dashboard's files: no data in them) | nothing |
 * | `/auth/…` (sign-in: the providers, the redirects; the session and sign-out routes check the session themselves) | nothing |
 * | `GET /metrics`, `GET /armory/clouddrivers*`, `/armory/agent/operations*`, `/armory/accounts*`, `/armory/agents*` | read |
 * | `POST /armory/agent/forwardedoperations`, `POST /armory/agent/forwardedreads`, `POST /armory/agent/operationresults`, `POST /armory/agent/operations` (the forwarding route's earlier path, kept for a rolling upgrade) | replica |
 * | `POST/PATCH/PUT/DELETE /armory/accounts*` | admin |
 * | `/k8s/{account}/…`, any method and upgrades (kubectl through the gateway: kube-endpoint.ts admits it itself, from the headers) | kube, and an account its rule lists |
 * | the Clouddriver API, any method: `/ops`, `/kubernetes/ops`, `/task/*`, `/kubernetes/task/*`, `/manifests/*`, `/credentials*`, `/applications*`, `/cache/*`, `/instances/*`, `/securityGroups*`, `/serverGroups*`, `/search`, `/artifacts/*` | spinnaker |
 * | anything else | admin |
 *
 * Under `auth.readAccess: open` routes requiring `read` admit anyone (presented credentials are still verified).
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Role } from '../config/schema.js';
import type { Authenticator } from './authenticator.js';
import type { RequestCredentials } from './credentials.js';
import { hasRole, type Principal } from './principal.js';

/** What a call needs: a role, or nothing at all (not even authentication). */
export type Requirement = Role | 'none';

/**
 * Per service, its methods' requirements (`*`: every method not named). Maps, not object literals: a method named
 * like an `Object.prototype` member (`constructor`, `toString`) must find nothing here and fall to admin. Services
 * not listed (AuditService among them) require admin.
 */
const CONNECT_TABLE = new Map<string, ReadonlyMap<string, Requirement>>([
  ['outpost.agent.v1.AgentService', new Map([['Connect', 'agent']])],
  ['outpost.api.v1.ObjectService', new Map([['*', 'read']])],
  [
    'outpost.api.v1.OperationService',
    new Map([
      ['SubmitOperation', 'write'],
      ['*', 'read'],
    ]),
  ],
  [
    'outpost.api.v1.AccountService',
    new Map([
      ['ListAccounts', 'read'],
      ['GetAccount', 'read'],
      ['ListAgents', 'read'],
    ]),
  ],
  ['outpost.api.v1.FleetService', new Map([['*', 'read']])],
  ['outpost.api.v1.MetricsService', new Map([['*', 'read']])],
  [
    'grpc.health.v1.Health',
    new Map([
      ['Check', 'none'],
      ['Watch', 'none'],
    ]),
  ],
  ['grpc.reflection.v1.ServerReflection', new Map([['*', 'read']])],
  ['grpc.reflection.v1alpha.ServerReflection', new Map([['*', 'read']])],
]);

/**
 * What a Connect/gRPC method requires (`service` is the fully qualified type name): a role, or `none` for the health
 * service. Unknown methods: admin.
 */
export function connectRequirement(service: string, method: string): Requirement {
  const entry = CONNECT_TABLE.get(service);
  return entry?.get(method) ?? entry?.get('*') ?? 'admin';
}

const READ_PREFIXES = ['/metrics', '/armory/clouddrivers', '/armory/agent/operations', '/armory/accounts', '/armory/agents'];
const REPLICA_ROUTES = new Set([
  '/armory/agent/forwardedoperations',
  '/armory/agent/forwardedreads',
  '/armory/agent/operationresults',
  '/armory/agent/operations',
]);

/**
 * Paths a feature serves and what they require, consulted before the core's own table (the Clouddriver API, the
 * Kubernetes API proxy, the dashboard's files). Features export their rules; the gateway passes the list of the
 * features it runs (src/gateway/path-rules.ts), so this table never imports a feature.
 */
export interface PathRule {
  /** What the rule is, for messages and the authorization matrix. */
  name: string;
  requirement: Requirement;
  /** Only these methods (upper case); every method when absent. */
  methods?: readonly string[];
  /** Whether the rule covers `path` (as requested, trailing slashes kept). */
  matches(path: string): boolean;
}

/**
 * The requirement of a REST route, from its method and path (before routing, so unknown paths get one too): the first
 * of `rules` that matches, else the core's table.
 */
export function restRequirement(method: string, path: string, rules: readonly PathRule[] = []): Requirement {
  const m = method.toUpperCase();
  // Trailing slashes go; `/` becomes the empty path, which, like `/`, is no route of the table.
  const p = path.replace(/\/+$/, '');
  const under = (prefix: string) => p === prefix || p.startsWith(`${prefix}/`);
  const rule = rules.find((r) => (r.methods === undefined || r.methods.includes(m)) && r.matches(path));
  if (rule) return rule.requirement;
  if (m === 'GET' || m === 'HEAD') {
    if (p === '/health') return 'none';
    if (READ_PREFIXES.some(under)) return 'read';
    return 'admin';
  }
  if (m === 'POST' && REPLICA_ROUTES.has(p)) return 'replica';
  return 'admin';
}

/**
 * Authenticates the credentials and checks the requirement: resolves the principal (undefined for `none`), rejects
 * with UNAUTHENTICATED (no or bad credentials) or PERMISSION_DENIED naming the missing role and what needed it.
 */
export async function admit(
  authenticator: Authenticator,
  credentials: RequestCredentials,
  requirement: Requirement,
  what: string,
): Promise<Principal | undefined> {
  if (requirement === 'none') return undefined;
  const openRead = requirement === 'read' && authenticator.readAccess === 'open';
  const principal = await authenticator.authenticate(credentials, openRead ? { anonymousRoles: ['read'] } : {});
  if (!openRead && !hasRole(principal, requirement)) {
    throw new ConnectError(`${principal.subject} lacks the role "${requirement}" required for ${what}`, Code.PermissionDenied);
  }
  return principal;
}
