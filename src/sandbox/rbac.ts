/**
 * RBAC authorization evaluated from the Role, ClusterRole, RoleBinding and ClusterRoleBinding objects in the store,
 * with Kubernetes' matching rules (wildcards, `resource/subresource`, resourceNames, nonResourceURLs with a trailing
 * `*`). `system:masters` is always allowed, as in kube-apiserver. The same evaluation answers
 * SelfSubjectAccessReview and SelfSubjectRulesReview, so what a client is told matches what it gets.
 */
import type { UserInfo } from './auth.js';
import { isPlainObject, type KubeObject } from './types.js';
import type { ObjectStore } from './store.js';

/** What a request wants to do. */
export interface AccessAttributes {
  verb: string;
  resourceRequest: boolean;
  group?: string;
  resource?: string;
  subresource?: string;
  name?: string;
  namespace?: string;
  /** For non-resource requests. */
  path?: string;
}

/** The decision and why. */
interface Decision {
  allowed: boolean;
  reason: string;
}

/** One PolicyRule as stored in a Role/ClusterRole. */
interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** Authorizer over a store. */
export interface Authorizer {
  authorize(user: UserInfo, attrs: AccessAttributes): Decision;
  /** Every rule that applies to the user in a namespace (for SelfSubjectRulesReview). */
  rulesFor(user: UserInfo, namespace: string): { resourceRules: PolicyRule[]; nonResourceRules: PolicyRule[] };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function rulesOf(role: KubeObject | undefined): PolicyRule[] {
  if (!role || !Array.isArray(role.rules)) return [];
  return role.rules.filter(isPlainObject).map((r) => ({
    verbs: strings(r.verbs),
    apiGroups: r.apiGroups === undefined ? undefined : strings(r.apiGroups),
    resources: r.resources === undefined ? undefined : strings(r.resources),
    resourceNames: r.resourceNames === undefined ? undefined : strings(r.resourceNames),
    nonResourceURLs: r.nonResourceURLs === undefined ? undefined : strings(r.nonResourceURLs),
  }));
}

function subjectMatches(user: UserInfo, binding: KubeObject): boolean {
  const subjects = Array.isArray(binding.subjects) ? binding.subjects.filter(isPlainObject) : [];
  return subjects.some((s) => {
    if (s.kind === 'User') return s.name === user.username;
    if (s.kind === 'Group') return typeof s.name === 'string' && user.groups.includes(s.name);
    if (s.kind === 'ServiceAccount') return user.username === `system:serviceaccount:${String(s.namespace)}:${String(s.name)}`;
    return false;
  });
}

/** True when a rule allows the attributes. */
function ruleAllows(rule: PolicyRule, attrs: AccessAttributes): boolean {
  if (!rule.verbs.includes('*') && !rule.verbs.includes(attrs.verb)) return false;
  if (!attrs.resourceRequest) {
    const path = attrs.path ?? '';
    return (rule.nonResourceURLs ?? []).some(
      (url) => url === '*' || url === path || (url.endsWith('*') && path.startsWith(url.slice(0, -1))),
    );
  }
  if (rule.nonResourceURLs && rule.nonResourceURLs.length > 0 && !rule.resources) return false;
  const groups = rule.apiGroups ?? [];
  if (!groups.includes('*') && !groups.includes(attrs.group ?? '')) return false;
  const resources = rule.resources ?? [];
  const resource = attrs.resource ?? '';
  const combined = attrs.subresource ? `${resource}/${attrs.subresource}` : resource;
  const resourceOk = resources.some((r) => r === '*' || r === combined || (attrs.subresource ? r === `*/${attrs.subresource}` : false));
  if (!resourceOk) return false;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || (attrs.name !== undefined && names.includes(attrs.name));
}

/** Creates an authorizer reading RBAC objects from `store` on every decision. */
export function createAuthorizer(store: ObjectStore): Authorizer {
  const kind = (k: string) => store.registry.byKindKey(`rbac.authorization.k8s.io/${k}`)!;

  function roleRules(roleRef: unknown, namespace: string | undefined): PolicyRule[] {
    if (!isPlainObject(roleRef) || typeof roleRef.name !== 'string') return [];
    if (roleRef.kind === 'ClusterRole') return rulesOf(store.peek(kind('ClusterRole'), undefined, roleRef.name));
    if (roleRef.kind === 'Role' && namespace) return rulesOf(store.peek(kind('Role'), namespace, roleRef.name));
    return [];
  }

  function collect(user: UserInfo, namespace: string | undefined): { rules: PolicyRule[]; via: string[] } {
    const rules: PolicyRule[] = [];
    const via: string[] = [];
    for (const binding of store.scan(kind('ClusterRoleBinding')).items) {
      if (!subjectMatches(user, binding)) continue;
      const found = roleRules(binding.roleRef, undefined);
      rules.push(...found.map((r) => ({ ...r, __via: `ClusterRoleBinding "${binding.metadata.name}"` }) as PolicyRule));
    }
    if (namespace) {
      for (const binding of store.scan(kind('RoleBinding'), { namespace }).items) {
        if (!subjectMatches(user, binding)) continue;
        // namespace-scoped bindings grant only resource rules, only in their namespace
        const found = roleRules(binding.roleRef, namespace).filter((r) => !r.nonResourceURLs || r.resources);
        rules.push(...found.map((r) => ({ ...r, __via: `RoleBinding "${binding.metadata.name}/${namespace}"` }) as PolicyRule));
      }
    }
    return { rules, via };
  }

  return {
    authorize(user, attrs) {
      if (user.groups.includes('system:masters')) return { allowed: true, reason: 'member of system:masters' };
      const { rules } = collect(user, attrs.resourceRequest ? attrs.namespace : undefined);
      const hit = rules.find((r) => ruleAllows(r, attrs));
      if (hit) return { allowed: true, reason: `RBAC: allowed by ${(hit as PolicyRule & { __via?: string }).__via ?? 'a rule'}` };
      return { allowed: false, reason: '' };
    },
    rulesFor(user, namespace) {
      if (user.groups.includes('system:masters')) {
        return {
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        };
      }
      const { rules } = collect(user, namespace);
      const clean = (r: PolicyRule): PolicyRule => {
        const { verbs, apiGroups, resources, resourceNames, nonResourceURLs } = r;
        return JSON.parse(JSON.stringify({ verbs, apiGroups, resources, resourceNames, nonResourceURLs })) as PolicyRule;
      };
      return {
        resourceRules: rules.filter((r) => r.resources && r.resources.length > 0).map(clean),
        nonResourceRules: rules.filter((r) => r.nonResourceURLs && r.nonResourceURLs.length > 0).map(clean),
      };
    },
  };
}

/** The 403 message kube-apiserver writes. */
export function forbiddenMessage(user: UserInfo, attrs: AccessAttributes): string {
  if (!attrs.resourceRequest) return `forbidden: User "${user.username}" cannot ${attrs.verb} path "${attrs.path}"`;
  const qualified = attrs.group ? `${attrs.resource}.${attrs.group}` : attrs.resource;
  const target = attrs.name ? `${qualified} "${attrs.name}"` : qualified;
  const res = attrs.subresource ? `${attrs.resource}/${attrs.subresource}` : attrs.resource;
  const scope = attrs.namespace ? `in the namespace "${attrs.namespace}"` : 'at the cluster scope';
  return `${target} is forbidden: User "${user.username}" cannot ${attrs.verb} resource "${res}" in API group "${attrs.group ?? ''}" ${scope}`;
}
