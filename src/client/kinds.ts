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

/** Kind → [short names and plural forms] (lower case). The singular lower-case kind is always accepted. */
const KINDS: [kind: string, clusterScoped: boolean, aliases: string[]][] = [
  ['Pod', false, ['pods', 'po']],
  ['Service', false, ['services', 'svc']],
  ['Deployment', false, ['deployments', 'deploy']],
  ['ReplicaSet', false, ['replicasets', 'rs']],
  ['StatefulSet', false, ['statefulsets', 'sts']],
  ['DaemonSet', false, ['daemonsets', 'ds']],
  ['Job', false, ['jobs']],
  ['CronJob', false, ['cronjobs', 'cj']],
  ['ConfigMap', false, ['configmaps', 'cm']],
  ['Secret', false, ['secrets']],
  ['ServiceAccount', false, ['serviceaccounts', 'sa']],
  ['Endpoints', false, ['ep']],
  ['Event', false, ['events', 'ev']],
  ['Ingress', false, ['ingresses', 'ing']],
  ['NetworkPolicy', false, ['networkpolicies', 'netpol']],
  ['Lease', false, ['leases']],
  ['Role', false, ['roles']],
  ['RoleBinding', false, ['rolebindings']],
  ['PersistentVolumeClaim', false, ['persistentvolumeclaims', 'pvc']],
  ['HorizontalPodAutoscaler', false, ['horizontalpodautoscalers', 'hpa']],
  ['PodDisruptionBudget', false, ['poddisruptionbudgets', 'pdb']],
  ['ControllerRevision', false, ['controllerrevisions']],
  ['Namespace', true, ['namespaces', 'ns']],
  ['Node', true, ['nodes', 'no']],
  ['PersistentVolume', true, ['persistentvolumes', 'pv']],
  ['StorageClass', true, ['storageclasses', 'sc']],
  ['ClusterRole', true, ['clusterroles']],
  ['ClusterRoleBinding', true, ['clusterrolebindings']],
  ['CustomResourceDefinition', true, ['customresourcedefinitions', 'crd', 'crds']],
];

const BY_NAME = new Map<string, { kind: string; clusterScoped: boolean }>();
for (const [kind, clusterScoped, aliases] of KINDS) {
  for (const name of [kind.toLowerCase(), ...aliases]) BY_NAME.set(name, { kind, clusterScoped });
}
const CLUSTER_SCOPED = new Set(KINDS.filter(([, c]) => c).map(([k]) => k));

/** Thrown for a kind name the CLI cannot map (the command exits 2). */
export class UnknownKindError extends Error {
  constructor(readonly input: string) {
    super(`unknown resource type "${input}": use a kubectl name (deployment, deploy, svc…) or the Kind itself (e.g. Widget) for custom resources`);
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
  if (parts.length > 2 || parts.some((p) => p === '')) throw new RangeError(`invalid resource "${first}": expected KIND, KIND/NAME or KIND NAME`);
  if (parts.length === 2) {
    if (second !== undefined) throw new RangeError(`there is already a name in "${first}"; do not also pass "${second}"`);
    return { kindText: parts[0]!, name: parts[1]! };
  }
  return { kindText: parts[0]!, name: second ?? '' };
}

/**
 * kubectl's display form of an object's type: lower-case kind plus the API group when there is one
 * (`deployment.apps`, `configmap`).
 */
export function displayType(apiVersion: string | undefined, kind: string): string {
  const group = apiVersion && apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
  return group ? `${kind.toLowerCase()}.${group}` : kind.toLowerCase();
}
