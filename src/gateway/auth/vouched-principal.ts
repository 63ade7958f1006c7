/**
 * A principal that one replica authenticated, described for the replica it forwards the request to (kubectl through
 * the gateway: docs/replicas.md, "kubectl requests"). The description says who the caller is — how it authenticated,
 * its subject, the groups its credential names, a certificate's subject attributes — and never what it may do: the
 * receiving replica re-derives roles and account patterns from its OWN `authorization.rules`
 * ({@link principalFromDescription}) and admits the request again as if the caller had come to it directly. Only a
 * replica credential may present one (the caller's credential itself does not travel: a client certificate cannot).
 */
import type { AuthorizationRule } from '../config/schema.js';
import type { SubjectAttributes } from './certificate-subject.js';
import { insecurePrincipal, principalFromRules, type AuthMethod, type Principal } from './principal.js';

/** Who a caller is, as a replica vouches for it. */
export interface PrincipalDescription {
  method: AuthMethod;
  subject: string;
  /** The groups its credential names (a static token's `groups`, a JWT's groups claim, a certificate's O values). */
  groups: string[];
  /** A certificate's subject attributes; absent for other methods. */
  attributes?: Record<string, string[]>;
}

const METHODS: ReadonlySet<AuthMethod> = new Set(['insecure', 'token', 'jwt', 'oidc', 'certificate', 'replica', 'anonymous']);

/** The description of an authenticated principal. */
export function describePrincipal(principal: Principal): PrincipalDescription {
  const out: PrincipalDescription = { method: principal.method, subject: principal.subject, groups: [...(principal.groups ?? [])] };
  if (principal.attributes) {
    out.attributes = Object.fromEntries(Object.entries(principal.attributes).map(([k, v]) => [k, [...v]]));
  }
  return out;
}

/** base64url JSON of a description, for a header. */
export function encodeDescription(description: PrincipalDescription): string {
  return Buffer.from(JSON.stringify(description)).toString('base64url');
}

/** Decodes {@link encodeDescription}; undefined when the value is not a well-formed description. */
export function decodeDescription(value: string | string[] | undefined): PrincipalDescription | undefined {
  if (typeof value !== 'string') return undefined;
  let d: Partial<PrincipalDescription>;
  try {
    // JSON null reads as an empty object: no field, so refused below like any other value that is not an object
    d = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) ?? {};
  } catch {
    return undefined;
  }
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((g) => typeof g === 'string');
  if (!isMethod(d.method) || typeof d.subject !== 'string' || d.subject === '') return undefined;
  if (!strings(d.groups)) return undefined;
  const attributes = d.attributes;
  if (attributes !== undefined && (typeof attributes !== 'object' || attributes === null || !Object.values(attributes).every(strings))) {
    return undefined;
  }
  return { method: d.method, subject: d.subject, groups: d.groups, ...(attributes ? { attributes } : {}) };
}

/** True for the methods a description may name (a Set lookup: no other value, of any type, is one). */
function isMethod(value: unknown): value is AuthMethod {
  return (METHODS as ReadonlySet<unknown>).has(value);
}

/**
 * The principal a description stands for on THIS replica: roles and account patterns from `rules` (those of the
 * description's kind, as at authentication); an `insecure` caller gets every role only when this replica runs
 * insecure mode too. Any other method (a replica, an anonymous reader) matches no rule and gets no role.
 */
export function principalFromDescription(
  description: PrincipalDescription,
  rules: readonly AuthorizationRule[],
  insecure: boolean,
): Principal {
  if (description.method === 'insecure' && insecure) return insecurePrincipal(description.subject);
  const attributes: SubjectAttributes = description.method === 'certificate' ? (description.attributes ?? {}) : {};
  return principalFromRules(description.subject, description.method, rules, undefined, attributes, description.groups);
}
