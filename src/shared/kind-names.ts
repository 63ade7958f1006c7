/**
 * kubectl's ways of naming a kind (`deployment`, `deploy`, `deployments`, `Deployment`, `deployment.apps`) mapped to
 * the Kind the API uses. The apiVersion is left empty: the agent resolves it by discovery in the target cluster.
 */

/** A resolved kind: `kind` for the spec; `clusterScoped` so the CLI sends no namespace for it. */
export interface ResolvedKind {
  kind: string;
  /** Always '' — the agent picks the preferred version by discovery. */
  apiVersion: string;
  clusterScoped: boolean;
}

/** Kind, API group ('' = core), cluster-scoped, [plural and short names] (lower case; the singular is implied). */
const KINDS: [kind: string, group: string, clusterScoped: boolean, aliases: string[]][] = [
  ['Pod', '', false, ['pods', 'po']],
  ['Service', '', false, ['services', 'svc']],
  ['Deployment', 'apps', false, ['deployments', 'deploy']],
  ['ReplicaSet', 'apps', false, ['replicasets', 'rs']],
  ['StatefulSet', 'apps', false, ['statefulsets', 'sts']],
  ['DaemonSet', 'apps', false, ['daemonsets', 'ds']],
  ['ControllerRevision', 'apps', false, ['controllerrevisions']],
  ['Job', 'batch', false, ['jobs']],
  ['CronJob', 'batch', false, ['cronjobs', 'cj']],
  ['ConfigMap', '', false, ['configmaps', 'cm']],
  ['Secret', '', false, ['secrets']],
  ['ServiceAccount', '', false, ['serviceaccounts', 'sa']],
  ['Endpoints', '', false, ['ep']],
  ['Event', '', false, ['events', 'ev']],
  ['PersistentVolumeClaim', '', false, ['persistentvolumeclaims', 'pvc']],
  ['Ingress', 'networking.k8s.io', false, ['ingresses', 'ing']],
  ['NetworkPolicy', 'networking.k8s.io', false, ['networkpolicies', 'netpol']],
  ['Lease', 'coordination.k8s.io', false, ['leases']],
  ['Role', 'rbac.authorization.k8s.io', false, ['roles']],
  ['RoleBinding', 'rbac.authorization.k8s.io', false, ['rolebindings']],
  ['HorizontalPodAutoscaler', 'autoscaling', false, ['horizontalpodautoscalers', 'hpa']],
  ['PodDisruptionBudget', 'policy', false, ['poddisruptionbudgets', 'pdb']],
  ['Namespace', '', true, ['namespaces', 'ns']],
  ['Node', '', true, ['nodes', 'no']],
  ['PersistentVolume', '', true, ['persistentvolumes', 'pv']],
  ['StorageClass', 'storage.k8s.io', true, ['storageclasses', 'sc']],
  ['ClusterRole', 'rbac.authorization.k8s.io', true, ['clusterroles']],
  ['ClusterRoleBinding', 'rbac.authorization.k8s.io', true, ['clusterrolebindings']],
  ['CustomResourceDefinition', 'apiextensions.k8s.io', true, ['customresourcedefinitions', 'crd', 'crds']],
];

const BY_NAME = new Map<string, { kind: string; clusterScoped: boolean }>();
for (const [kind, , clusterScoped, aliases] of KINDS) {
  for (const name of [kind.toLowerCase(), ...aliases]) BY_NAME.set(name, { kind, clusterScoped });
}
const CLUSTER_SCOPED = new Set(KINDS.filter(([, , c]) => c).map(([k]) => k));
const GROUP = new Map(KINDS.map(([kind, group]) => [kind, group]));

/** Thrown for a kind name the CLI cannot map (the command exits 2). */
export class UnknownKindError extends Error {
  constructor(readonly input: string) {
    super(
      `unknown resource type "${input}": use a kubectl name (deployment, deploy, svc…) or the Kind itself (e.g. Widget) for custom resources`,
    );
    this.name = 'UnknownKindError';
  }
}

/**
 * Maps a kubectl resource name to its Kind. `name.group` and `name.version.group` forms drop the group (discovery
 * finds it). A CamelCase name that is not in the table is taken as a Kind as-is (custom resources); an unknown
 * lower-case name throws {@link UnknownKindError}.
 */
export function resolveKind(input: string): ResolvedKind {
  const text = input.trim();
  const base = text.split('.')[0] ?? '';
  if (!/^[A-Za-z][A-Za-z0-9]*$/.test(base)) throw new UnknownKindError(input);
  const known = BY_NAME.get(base.toLowerCase());
  if (known) return { kind: known.kind, apiVersion: '', clusterScoped: known.clusterScoped };
  if (/^[A-Z]/.test(base)) return { kind: base, apiVersion: '', clusterScoped: false };
  throw new UnknownKindError(input);
}

/** True for the built-in cluster-scoped kinds the CLI knows. */
export function isClusterScopedKind(kind: string): boolean {
  return CLUSTER_SCOPED.has(kind);
}

/**
 * Splits kubectl's `KIND/NAME` or `KIND NAME` target forms. Returns the kind text and the name ('' when none).
 * Throws RangeError for `a/b/c`, an empty part, or a name given twice.
 */
export function splitTarget(first: string, second?: string): { kindText: string; name: string } {
  const parts = first.split('/');
  if (parts.length > 2 || parts.some((p) => p === ''))
    throw new RangeError(`invalid resource "${first}": expected KIND, KIND/NAME or KIND NAME`);
  if (parts.length === 2) {
    if (second !== undefined) throw new RangeError(`there is already a name in "${first}"; do not also pass "${second}"`);
    return { kindText: parts[0]!, name: parts[1]! };
  }
  return { kindText: parts[0]!, name: second ?? '' };
}

/**
 * kubectl's display form of an object's type: lower-case kind plus the API group when there is one
 * (`deployment.apps`, `configmap`). With no apiVersion, the group of a built-in kind the CLI knows is used.
 */
export function displayType(apiVersion: string | undefined, kind: string): string {
  const group = apiVersion ? (apiVersion.includes('/') ? apiVersion.split('/')[0] : '') : (GROUP.get(kind) ?? '');
  return group ? `${kind.toLowerCase()}.${group}` : kind.toLowerCase();
}
