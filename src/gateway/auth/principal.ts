/**
 * Who a request (or an agent stream) authenticated as, and what authorization rules grant it. Built once per request
 * by the authentication step and read everywhere else: Connect handlers get it from their context values
 * ({@link principalKey}), REST handlers from the Hono context, agent sessions as an argument.
 */
import { createContextKey } from '@connectrpc/connect';
import type { AuthorizationRule, Role } from '../config/schema.js';
import { ACCOUNT_SCOPED_ROLES } from '../config/security-schema.js';
import { createSubjectMatcher, type SubjectAttributes } from './certificate-subject.js';

/** How the principal proved its identity (`anonymous`: nothing, admitted to read routes under `readAccess: open`). */
export type AuthMethod = 'insecure' | 'token' | 'jwt' | 'oidc' | 'certificate' | 'replica' | 'anonymous';

/** An authenticated identity with its rights. Immutable. */
export interface Principal {
  /** Certificate subject (`CN=agent-1,O=Example`), token subject or JWT subject claim; `anonymous` in insecure mode. */
  readonly subject: string;
  readonly method: AuthMethod;
  readonly roles: ReadonlySet<Role>;
  /**
   * Per account-scoped role, the account name glob patterns the principal may reach with it (the `accounts` of the
   * rules that granted the role): register as an agent, submit operations, `/k8s/{account}`, the Clouddriver API. A
   * role without patterns reaches no account. Read it through {@link mayReach}.
   */
  readonly accounts: AccountReach;
  /**
   * Groups the credential names (a static token's `groups`, a JWT's groups claim, a certificate's `O` values): mapped
   * to Kubernetes groups for kubectl through the gateway (src/gateway/kube/kube-identity.ts).
   */
  readonly groups?: readonly string[];
  /** The certificate's subject attributes (a certificate principal only). */
  readonly attributes?: SubjectAttributes;
  /** When the credentials stop being valid (epoch ms; a JWT's `exp`); undefined when they do not expire. */
  readonly expiresAt?: number;
  /**
   * Present when the credential can be revoked while in use (a token from a token file that is deleted or changed):
   * long streams subscribe and end UNAUTHENTICATED when told. Requests end soon anyway and need not subscribe.
   */
  readonly revocation?: CredentialRevocation;
}

/** Tells the holder of a principal that its credential was revoked. */
export interface CredentialRevocation {
  /**
   * Calls `onRevoked` (once, with an UNAUTHENTICATED-worthy message) as soon as the credential stops being valid;
   * returns the unsubscribe function, which the caller must call when its stream ends.
   */
  subscribe(onRevoked: (message: string) => void): () => void;
}

/** The principal of the current Connect call; undefined only when authentication did not run (a wiring bug). */
// Stryker disable next-line ObjectLiteral,StringLiteral: the description only names the key's symbol for a debugger; nothing reads it
export const principalKey = createContextKey<Principal | undefined>(undefined, { description: 'outpost principal' });

/** A role whose reach a rule's `accounts` narrows (ACCOUNT_SCOPED_ROLES, from the configuration schema). */
export type AccountScopedRole = (typeof ACCOUNT_SCOPED_ROLES)[number];

/** Account name glob patterns per account-scoped role. */
type AccountReach = Readonly<Partial<Record<AccountScopedRole, readonly string[]>>>;

/** Every role: what insecure mode grants. */
const ALL_ROLES: readonly Role[] = ['agent', 'read', 'write', 'admin', 'replica', 'spinnaker', 'kube'];

/**
 * Builds a principal from the rules of its kind (`rule.kind` equals `method`: token, JWT, OIDC and certificate
 * subjects are separate namespaces) whose subject regex, group matchers (one of the credential's groups, a
 * certificate's O values included) and attribute matchers (certificates: `attributes` must be given) all match:
 * roles and account patterns add up. A subject no rule matches gets no rights (authenticated, not authorized).
 */
export function principalFromRules(
  subject: string,
  method: AuthMethod,
  rules: readonly AuthorizationRule[],
  expiresAt?: number,
  attributes: SubjectAttributes = {},
  groups: readonly string[] = [],
): Principal {
  const roles = new Set<Role>();
  const accounts: Partial<Record<AccountScopedRole, string[]>> = {};
  const certificateGroups = method === 'certificate' ? (attributes.O ?? []) : [];
  const allGroups = [...new Set([...groups, ...certificateGroups])];
  for (const rule of rules) {
    if (rule.kind !== method || !createSubjectMatcher(rule)(subject, attributes) || !groupsMatch(rule.groups, allGroups)) continue;
    for (const role of rule.roles) {
      roles.add(role);
      if (isAccountScoped(role)) (accounts[role] ??= []).push(...rule.accounts);
    }
  }
  return {
    subject,
    method,
    roles,
    accounts,
    groups: allGroups,
    attributes: method === 'certificate' ? attributes : undefined,
    expiresAt,
  };
}

/** True when the rule names no groups, or one of `groups` matches one of its anchored patterns. */
function groupsMatch(patterns: readonly string[] | undefined, groups: readonly string[]): boolean {
  if (patterns === undefined) return true;
  return patterns.some((source) => {
    const re = new RegExp(`^(?:${source})$`);
    return groups.some((g) => re.test(g));
  });
}

/** The principal of insecure mode: every role, every account name. */
export function insecurePrincipal(subject = 'anonymous'): Principal {
  const accounts = Object.fromEntries(ACCOUNT_SCOPED_ROLES.map((role) => [role, ['*']]));
  return { subject, method: 'insecure', roles: new Set(ALL_ROLES), accounts };
}

/** True for the roles {@link ACCOUNT_SCOPED_ROLES} lists. */
function isAccountScoped(role: Role): role is AccountScopedRole {
  return (ACCOUNT_SCOPED_ROLES as readonly string[]).includes(role);
}

/**
 * The identity key of a principal: `<method>:<subject>` (`token:agent-a`, `jwt:…`, `certificate:CN=…`,
 * `insecure:anonymous`). Methods stay apart, so a token named like a certificate subject is another identity. Account
 * names are bound to this key at their first claim (docs/accounts.md, "Identity binding"); compare keys, never
 * subjects alone.
 */
export function identityOf(principal: Pick<Principal, 'method' | 'subject'>): string {
  return `${principal.method}:${principal.subject}`;
}

/** True when the principal holds the role. */
export function hasRole(principal: Principal | undefined, role: Role): boolean {
  return principal?.roles.has(role) === true;
}

/**
 * True when the principal holds `role` and one of the rules granting it lists a pattern matching `account`: the one
 * check of every account-scoped right (see {@link ACCOUNT_SCOPED_ROLES}).
 */
export function mayReach(principal: Principal | undefined, role: AccountScopedRole, account: string): boolean {
  if (!hasRole(principal, role)) return false;
  return principal!.accounts[role]?.some((pattern) => globMatch(pattern, account)) === true;
}

/** True when the principal may register (cache or stand by for) the account name as an agent. */
export function mayRegister(principal: Principal | undefined, account: string): boolean {
  return mayReach(principal, 'agent', account);
}

/** True when the principal may reach the account's Kubernetes API through the gateway (`/k8s/{account}`). */
export function mayUseKube(principal: Principal | undefined, account: string): boolean {
  return mayReach(principal, 'kube', account);
}

/** `*` matches any run of characters (including none); everything else matches itself. */
function globMatch(pattern: string, value: string): boolean {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`).test(value);
}
