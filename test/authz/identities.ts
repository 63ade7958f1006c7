/**
 * The identities of the authorization matrix: who each credential is, what the gateway's rules grant it, and the
 * fixture names (accounts, agents, operations) the table's requests point at. One gateway serves every cell, so these
 * are fixed strings shared by the table, the fixtures and the rendered doc.
 */
import type { AuthorizationRule } from '../../src/gateway/config/schema.js';

/** A credential a cell presents. `none` sends nothing. */
export type IdentityName =
  | 'none'
  | 'badToken'
  | 'forgedReplica'
  | 'reader'
  | 'writer'
  | 'admin'
  | 'agentA'
  | 'agentB'
  | 'replica'
  | 'jwtAdmin'
  | 'spinnaker'
  | 'kube'
  | 'jwtKube';

/** What each identity is, for the doc. */
export const IDENTITY_NOTES: Record<IdentityName, string> = {
  none: 'no `Authorization` header',
  badToken: 'a bearer token no configuration knows (`wrong` on every row but the replica routes)',
  forgedReplica: 'a replica token (issuer `outpost-replica`) signed with another secret (`wrong` on the replica routes)',
  reader: 'static token, subject `reader`: role `read`',
  writer: 'static token, subject `writer`: roles `read`, `write` (write: accounts `team-a-*`, `shared-*`)',
  admin: 'static token, subject `admin`: roles `read`, `write`, `admin` (write: every account)',
  agentA: 'static token, subject `agent-a`: role `agent`, accounts `team-a-*`, `shared-*`',
  agentB: 'static token, subject `agent-b`: role `agent`, accounts `team-b-*`, `shared-*`',
  replica: 'replica token signed with `auth.replicaSecretFile` (roles `replica`, `read`)',
  spinnaker: 'static token, subject `spinnaker`: role `spinnaker` (Orca and Gate), accounts `team-a-*`, `shared-*`, `authz-*`',
  kube: 'static token, subject `kube-user`: role `kube`, accounts `team-a-*` (kubectl through `/k8s`)',
  jwtKube: 'a valid JWT, `sub: kube-jwt`, groups claim `[" system:masters"]` (leading space): role `kube`, accounts `team-a-*`',
  jwtAdmin:
    "a valid JWT (`auth.jwt`) whose `sub` is `admin`, the static admin token's subject: no rule of kind `jwt` matches it, so no roles",
};

/** The `auth.jwt` HMAC secret of the matrix gateway (its issuer and audience: `https://authz.test`, `outpost`). */
export const JWT_SECRET = 'authz-jwt-secret-0123456789-0123456789-abcdef';

/** Static bearer tokens of the matrix gateway, by identity. */
export const STATIC_TOKENS = {
  badToken: 'authz-not-a-configured-token-0000',
  reader: 'authz-reader-token-0123456789abcdef',
  writer: 'authz-writer-token-0123456789abcdef',
  admin: 'authz-admin-token-0123456789abcdef',
  agentA: 'authz-agent-a-token-0123456789abcdef',
  agentB: 'authz-agent-b-token-0123456789abcdef',
  spinnaker: 'authz-spinnaker-token-0123456789abcdef',
  kube: 'authz-kube-token-0123456789abcdef',
} as const;

/** The replica secret the gateway reads, and the one a forger signs with. */
export const REPLICA_SECRET = 'authz-replica-secret-0123456789-0123456789-abcdef';
export const FORGED_REPLICA_SECRET = 'authz-forged-secret-9876543210-9876543210-fedcba';

/** `auth.tokens` of the matrix gateway. */
export const TOKEN_CONFIG = [
  { subject: 'reader', token: STATIC_TOKENS.reader },
  { subject: 'writer', token: STATIC_TOKENS.writer },
  { subject: 'admin', token: STATIC_TOKENS.admin },
  { subject: 'agent-a', token: STATIC_TOKENS.agentA },
  { subject: 'agent-b', token: STATIC_TOKENS.agentB },
  { subject: 'spinnaker', token: STATIC_TOKENS.spinnaker },
  { subject: 'kube-user', token: STATIC_TOKENS.kube },
];

/** `authorization.rules` of the matrix gateway. */
export const RULES: AuthorizationRule[] = [
  { kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] },
  { kind: 'token', subject: '^writer$', roles: ['read', 'write'], accounts: ['team-a-*', 'shared-*'] },
  { kind: 'token', subject: '^admin$', roles: ['read', 'write', 'admin'], accounts: ['*'] },
  { kind: 'token', subject: '^agent-a$', roles: ['agent'], accounts: ['team-a-*', 'shared-*'] },
  { kind: 'token', subject: '^agent-b$', roles: ['agent'], accounts: ['team-b-*', 'shared-*'] },
  { kind: 'token', subject: '^spinnaker$', roles: ['spinnaker'], accounts: ['team-a-*', 'shared-*', 'authz-*'] },
  { kind: 'token', subject: '^kube-user$', roles: ['kube'], accounts: ['team-a-*'] },
  { kind: 'jwt', subject: '^kube-jwt$', roles: ['kube'], accounts: ['team-a-*'] },
];

/** The groups claim of the `jwtKube` identity: a `system:` name behind whitespace the cluster would trim. */
export const JWT_KUBE_GROUPS = [' system:masters'];

/** Names of what the fixtures create before the cells run (and the requests of the table point at). */
export const FIXTURE = {
  gatewayId: 'gw-authz',
  /** Agent A's long-lived stream: caches `team-a-web` (holds one ConfigMap, receives forwarded operations). */
  agentA: { agentId: 'agent-a', account: 'team-a-web' },
  /** A second stream of identity agent-a whose session the resume rows try to take. */
  agentAResume: { agentId: 'agent-a-resume', account: 'team-a-resume' },
  /** A second stream of identity agent-a serving `team-a-web` as STANDBY (never sent an operation). */
  agentAStandby: { agentId: 'agent-a-standby-fixture', account: 'team-a-web' },
  /**
   * A stream of identity agent-a caching `shared-bound`, a name both agent identities may register: the name is bound
   * to agent-a, so agent B's claim of it is refused (docs/accounts.md, "Identity binding").
   */
  agentAShared: { agentId: 'agent-a-shared', account: 'shared-bound' },
  /** Agent B's stream: caches `team-b-web`. */
  agentB: { agentId: 'agent-b', account: 'team-b-web' },
  configMap: { namespace: 'default', name: 'authz-cm' },
  /** An apply of a Secret submitted on `team-a-web` during set-up: readers see its value redacted. */
  secretOperationId: 'authz-op-secret',
  /** The Secret value of that operation, which no read may return. */
  secretValue: 'authz-secret-value-never-shown',
  /** An operation submitted on `team-a-web` during set-up (never answered). */
  operationId: 'authz-op-1',
  /** An operation sent to agent A during set-up, which agent A answers in the result row's valid cell. */
  answeredOperationId: 'authz-op-answered',
  /** An operation sent to agent A during set-up, which other agents try to answer in the result row. */
  forgedOperationId: 'authz-op-forged',
  /** Accounts an admin creates during set-up, one per mutating cell, so concurrent cells never share one. */
  adminAccounts: [
    'authz-rest-patch',
    'authz-rest-delete-body',
    'authz-rest-delete-name',
    'authz-rest-binding',
    'authz-rpc-states',
    'authz-rpc-delete',
    'authz-rpc-binding',
    'authz-rest-rebind',
    'authz-rpc-rebind',
  ],
  /** Dynamic accounts created during set-up (zone `elsewhere`: no agent of the matrix is told). */
  dynamicAccounts: ['authz-dyn-patch'],
} as const;
