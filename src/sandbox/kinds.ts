/**
 * The kind registry: which resources the sandbox serves, under which group/version and plural, and how (namespaced,
 * verbs, subresources). Built-in kinds are fixed; CustomResourceDefinitions add and remove entries at run time, which
 * is how a created CRD shows up in discovery and then works like a built-in.
 */

/** Everything the server needs to know about one resource type. */
export interface KindInfo {
  group: string;
  /** Served versions; the first is the storage version (the apiVersion objects are stored with). */
  versions: string[];
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  verbs: string[];
  shortNames: string[];
  categories: string[];
  /** Subresources served: `status`, `scale`, `log`. */
  subresources: string[];
  /** True when the object carries spec/status and gets a generation. */
  hasGeneration: boolean;
  /** Set for kinds that only accept `create` and are never stored (access reviews). */
  virtual?: boolean;
  /** Set for CRD-defined kinds. */
  custom?: boolean;
}

const CRUD = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** `group/Kind`: the storage identity of a kind (core kinds: `/Pod`). */
export function kindKeyOf(group: string, kind: string): string {
  return `${group}/${kind}`;
}

/** Splits `apps/v1` into group and version (`v1` → core). */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) return { group: '', version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Joins group and version into an apiVersion. */
export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

function builtin(
  group: string,
  version: string,
  kind: string,
  plural: string,
  opts: {
    namespaced?: boolean;
    short?: string[];
    sub?: string[];
    gen?: boolean;
    verbs?: string[];
    virtual?: boolean;
    categories?: string[];
  } = {},
): KindInfo {
  return {
    group,
    versions: [version],
    kind,
    listKind: `${kind}List`,
    plural,
    singular: kind.toLowerCase(),
    namespaced: opts.namespaced ?? true,
    verbs: opts.verbs ?? CRUD,
    shortNames: opts.short ?? [],
    categories: opts.categories ?? [],
    subresources: opts.sub ?? [],
    hasGeneration: opts.gen ?? false,
    virtual: opts.virtual,
  };
}

const ALL = ['all'];

/** The kinds every sandbox serves from the start. */
const BUILTIN_KINDS: readonly KindInfo[] = [
  builtin('', 'v1', 'Namespace', 'namespaces', {
    namespaced: false,
    short: ['ns'],
    sub: ['status'],
    verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
  }),
  builtin('', 'v1', 'Pod', 'pods', { short: ['po'], sub: ['attach', 'exec', 'log', 'portforward', 'status'], categories: ALL }),
  builtin('', 'v1', 'Service', 'services', {
    short: ['svc'],
    sub: ['status'],
    categories: ALL,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
  }),
  builtin('', 'v1', 'Endpoints', 'endpoints', { short: ['ep'] }),
  builtin('', 'v1', 'ConfigMap', 'configmaps', { short: ['cm'] }),
  builtin('', 'v1', 'Secret', 'secrets'),
  builtin('', 'v1', 'ServiceAccount', 'serviceaccounts', { short: ['sa'] }),
  builtin('', 'v1', 'Event', 'events', { short: ['ev'] }),
  builtin('apps', 'v1', 'Deployment', 'deployments', { short: ['deploy'], sub: ['scale', 'status'], gen: true, categories: ALL }),
  builtin('apps', 'v1', 'ReplicaSet', 'replicasets', { short: ['rs'], sub: ['scale', 'status'], gen: true, categories: ALL }),
  builtin('apps', 'v1', 'StatefulSet', 'statefulsets', { short: ['sts'], sub: ['scale', 'status'], gen: true, categories: ALL }),
  builtin('apps', 'v1', 'DaemonSet', 'daemonsets', { short: ['ds'], sub: ['status'], gen: true, categories: ALL }),
  builtin('apps', 'v1', 'ControllerRevision', 'controllerrevisions'),
  builtin('batch', 'v1', 'Job', 'jobs', { sub: ['status'], gen: true, categories: ALL }),
  builtin('batch', 'v1', 'CronJob', 'cronjobs', { short: ['cj'], sub: ['status'], gen: true, categories: ALL }),
  builtin('networking.k8s.io', 'v1', 'Ingress', 'ingresses', { short: ['ing'], sub: ['status'], gen: true }),
  builtin('networking.k8s.io', 'v1', 'NetworkPolicy', 'networkpolicies', { short: ['netpol'], gen: true }),
  builtin('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  builtin('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets', { short: ['pdb'], sub: ['status'], gen: true }),
  builtin('apiextensions.k8s.io', 'v1', 'CustomResourceDefinition', 'customresourcedefinitions', {
    namespaced: false,
    short: ['crd', 'crds'],
    sub: ['status'],
    gen: true,
  }),
  builtin('rbac.authorization.k8s.io', 'v1', 'Role', 'roles'),
  builtin('rbac.authorization.k8s.io', 'v1', 'RoleBinding', 'rolebindings'),
  builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRole', 'clusterroles', { namespaced: false }),
  builtin('rbac.authorization.k8s.io', 'v1', 'ClusterRoleBinding', 'clusterrolebindings', { namespaced: false }),
  builtin('authorization.k8s.io', 'v1', 'SelfSubjectAccessReview', 'selfsubjectaccessreviews', {
    namespaced: false,
    verbs: ['create'],
    virtual: true,
  }),
  builtin('authorization.k8s.io', 'v1', 'SelfSubjectRulesReview', 'selfsubjectrulesreviews', {
    namespaced: false,
    verbs: ['create'],
    virtual: true,
  }),
];

/** Kinds by group/version/plural and by group/kind; mutable so CRDs can register. */
export interface KindRegistry {
  /** Resolves a URL resource (`apps`, `v1`, `deployments`); undefined when not served. */
  byResource(group: string, version: string, plural: string): KindInfo | undefined;
  /** Resolves an object's apiVersion + kind; undefined when not served. */
  byKind(apiVersion: string, kind: string): KindInfo | undefined;
  /** Resolves a storage key (`apps/Deployment`). */
  byKindKey(kindKey: string): KindInfo | undefined;
  /** All served kinds, built-ins first, in registration order. */
  all(): KindInfo[];
  /** Adds or replaces a custom kind. Throws when it would shadow a built-in. */
  register(info: KindInfo): void;
  /** Removes a custom kind by storage key. */
  unregister(kindKey: string): void;
}

/** Creates a registry holding the built-in kinds. */
export function createKindRegistry(): KindRegistry {
  const byKey = new Map<string, KindInfo>();
  for (const info of BUILTIN_KINDS) byKey.set(kindKeyOf(info.group, info.kind), info);
  return {
    byResource(group, version, plural) {
      for (const info of byKey.values()) {
        if (info.group === group && info.plural === plural && info.versions.includes(version)) return info;
      }
      return undefined;
    },
    byKind(apiVersion, kind) {
      const { group, version } = parseApiVersion(apiVersion);
      const info = byKey.get(kindKeyOf(group, kind));
      return info?.versions.includes(version) ? info : undefined;
    },
    byKindKey: (kindKey) => byKey.get(kindKey),
    all: () => [...byKey.values()],
    register(info) {
      const key = kindKeyOf(info.group, info.kind);
      const existing = byKey.get(key);
      if (existing && !existing.custom) throw new Error(`${key} is a built-in kind`);
      byKey.set(key, info);
    },
    unregister(kindKey) {
      if (byKey.get(kindKey)?.custom) byKey.delete(kindKey);
    },
  };
}
