/**
 * Kind names as Spinnaker spells them (docs/spinnaker.md, "Names"). Clouddriver names a registered kind by its own
 * camelCase name without a group (`deployment`, `replicaSet`, `horizontalpodautoscaler`), any other kind by its
 * manifest spelling with `.<group>` appended when the group is not one Kubernetes itself serves
 * (`CronTab.stable.example.com`). On input the text before the first dot is the kind and the rest the group;
 * matching ignores case, built-in groups and accepts the short aliases (`deploy`, `rs`, `svc`…). An object's
 * "resource name" is `"<kind> <name>"` with one space.
 */

/** How Deck groups a kind (Clouddriver's `SpinnakerKind`, used by `spinnakerKindMap` on /credentials). */
export type SpinnakerCategory =
  | 'instances'
  | 'configs'
  | 'serverGroups'
  | 'loadBalancers'
  | 'securityGroups'
  | 'serverGroupManagers'
  | 'unclassified';

/** A kind in Spinnaker's registry. */
export interface RegisteredKind {
  /** Spinnaker's spelling, also the output spelling (`replicaSet`). */
  name: string;
  /** The Kubernetes `kind` (`ReplicaSet`). */
  kind: string;
  /** The API group Kubernetes serves it in ('' for core). */
  group: string;
  namespaced: boolean;
  category: SpinnakerCategory;
  /** Deployed under versioned names (`-v000`) unless told otherwise. */
  versionedByDefault: boolean;
}

const R = (
  name: string,
  kind: string,
  group: string,
  namespaced: boolean,
  category: SpinnakerCategory = 'unclassified',
  versionedByDefault = false,
): RegisteredKind => ({ name, kind, group, namespaced, category, versionedByDefault });

/** Every registered kind, in Clouddriver's order. */
export const REGISTERED_KINDS: readonly RegisteredKind[] = [
  R('apiService', 'APIService', 'apiregistration.k8s.io', false),
  R('clusterRole', 'ClusterRole', 'rbac.authorization.k8s.io', false),
  R('clusterRoleBinding', 'ClusterRoleBinding', 'rbac.authorization.k8s.io', false),
  R('configMap', 'ConfigMap', '', true, 'configs', true),
  R('controllerRevision', 'ControllerRevision', 'apps', true),
  R('customResourceDefinition', 'CustomResourceDefinition', 'apiextensions.k8s.io', false),
  R('cronJob', 'CronJob', 'batch', true, 'serverGroups'),
  R('csiDriver', 'CSIDriver', 'storage.k8s.io', false),
  R('csiNode', 'CSINode', 'storage.k8s.io', false),
  R('daemonSet', 'DaemonSet', 'apps', true, 'serverGroups'),
  R('deployment', 'Deployment', 'apps', true, 'serverGroupManagers'),
  R('event', 'Event', '', true),
  R('horizontalpodautoscaler', 'HorizontalPodAutoscaler', 'autoscaling', true),
  R('ingress', 'Ingress', 'networking.k8s.io', true, 'loadBalancers'),
  R('job', 'Job', 'batch', true, 'serverGroups'),
  R('limitRange', 'LimitRange', '', true),
  R('mutatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'admissionregistration.k8s.io', false),
  R('namespace', 'Namespace', '', false),
  R('networkPolicy', 'NetworkPolicy', 'networking.k8s.io', true, 'securityGroups'),
  R('persistentVolume', 'PersistentVolume', '', false),
  R('persistentVolumeClaim', 'PersistentVolumeClaim', '', true),
  R('pod', 'Pod', '', true, 'instances', true),
  R('podPreset', 'PodPreset', 'settings.k8s.io', true),
  R('podSecurityPolicy', 'PodSecurityPolicy', 'policy', false),
  R('podDisruptionBudget', 'PodDisruptionBudget', 'policy', true),
  R('replicaSet', 'ReplicaSet', 'apps', true, 'serverGroups', true),
  R('role', 'Role', 'rbac.authorization.k8s.io', true),
  R('roleBinding', 'RoleBinding', 'rbac.authorization.k8s.io', true),
  R('secret', 'Secret', '', true, 'configs', true),
  R('service', 'Service', '', true, 'loadBalancers'),
  R('serviceAccount', 'ServiceAccount', '', true),
  R('statefulSet', 'StatefulSet', 'apps', true, 'serverGroups'),
  R('storageClass', 'StorageClass', 'storage.k8s.io', false),
  R('validatingWebhookConfiguration', 'ValidatingWebhookConfiguration', 'admissionregistration.k8s.io', false),
  R('virtualService', 'VirtualService', 'networking.istio.io', true),
  R('destinationRule', 'DestinationRule', 'networking.istio.io', true),
  R('gateway', 'Gateway', 'networking.istio.io', true),
];

const ALIASES: Record<string, string> = {
  cm: 'configMap',
  crd: 'customResourceDefinition',
  ds: 'daemonSet',
  deploy: 'deployment',
  hpa: 'horizontalpodautoscaler',
  ns: 'namespace',
  netpol: 'networkPolicy',
  pv: 'persistentVolume',
  pvc: 'persistentVolumeClaim',
  po: 'pod',
  rs: 'replicaSet',
  svc: 'service',
  sa: 'serviceAccount',
  sc: 'storageClass',
};

/** Groups Clouddriver treats as Kubernetes' own: a kind in one of them is named without its group. */
const NATIVE_GROUPS = new Set([
  '',
  'core',
  'batch',
  'apps',
  'extensions',
  'storage.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'autoscaling',
  'admissionregistration.k8s.io',
  'policy',
  'scheduling.k8s.io',
  'settings.k8s.io',
  'authorization.k8s.io',
  'authentication.k8s.io',
  'rbac.authorization.k8s.io',
  'certificates.k8s.io',
  'networking.k8s.io',
  'networking.istio.io',
]);

const BY_LOWER_NAME = new Map<string, RegisteredKind>();
for (const k of REGISTERED_KINDS) BY_LOWER_NAME.set(k.name.toLowerCase(), k);
for (const [alias, name] of Object.entries(ALIASES)) BY_LOWER_NAME.set(alias, BY_LOWER_NAME.get(name.toLowerCase())!);

/** True for a group Clouddriver names kinds without (Kubernetes' own groups, and none). */
function isNativeGroup(group: string): boolean {
  return NATIVE_GROUPS.has(group.toLowerCase());
}

/** A kind as named on input, resolved. */
export interface ParsedKind {
  /** The registered kind, when it is one. */
  registered?: RegisteredKind;
  /** The output spelling (`deployment`, `CronTab.stable.example.com`). */
  spinnakerName: string;
  /** What the agent resolves by discovery: the Kubernetes kind, with `.<group>` for a non-native group. */
  agentKind: string;
  /** The custom group, '' for a native one. */
  customGroup: string;
}

/**
 * Parses a kind as Orca or a user wrote it (`deployment`, `Deployment`, `deployment.apps`, `deploy`,
 * `CronTab.stable.example.com`). Undefined for an empty kind.
 */
export function parseKind(text: string): ParsedKind | undefined {
  const dot = text.indexOf('.');
  const name = (dot < 0 ? text : text.slice(0, dot)).trim();
  const group =
    dot < 0
      ? ''
      : text
          .slice(dot + 1)
          .trim()
          .toLowerCase();
  if (!name) return undefined;
  if (isNativeGroup(group)) {
    const registered = BY_LOWER_NAME.get(name.toLowerCase());
    if (registered) return { registered, spinnakerName: registered.name, agentKind: registered.kind, customGroup: '' };
    return { spinnakerName: name, agentKind: name, customGroup: '' };
  }
  return { spinnakerName: `${name}.${group}`, agentKind: `${name}.${group}`, customGroup: group };
}

/** The group of an `apiVersion` ('' for core `v1`). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The registered kind of an object's apiVersion and kind, if any. */
export function registeredKindOf(apiVersion: string, kind: string): RegisteredKind | undefined {
  return isNativeGroup(groupOf(apiVersion)) ? BY_LOWER_NAME.get(kind.toLowerCase()) : undefined;
}

/** Spinnaker's spelling of an object's kind (`deployment`, `CronTab.stable.example.com`). */
export function spinnakerKindOf(apiVersion: string, kind: string): string {
  const registered = registeredKindOf(apiVersion, kind);
  if (registered) return registered.name;
  const group = groupOf(apiVersion);
  return isNativeGroup(group) ? kind : `${kind}.${group.toLowerCase()}`;
}

/** A `"<kind> <name>"` resource name, parsed. */
export interface ResourceName {
  kind: ParsedKind;
  name: string;
}

/**
 * Parses `"<kind> <name>"` (one or more spaces; Orca sends one). Undefined when there is no space, or either part is
 * empty — Clouddriver answers such names with 404 on reads and 400 on writes.
 */
export function parseResourceName(text: string): ResourceName | undefined {
  const match = /^\s*(\S+)\s+(\S+)\s*$/.exec(text);
  if (!match) return undefined;
  const kind = parseKind(match[1]!);
  return kind ? { kind, name: match[2]! } : undefined;
}

/** The resource name of an object: `"deployment web"`. */
export function fullResourceName(object: { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } }): string {
  return `${spinnakerKindOf(String(object.apiVersion ?? ''), String(object.kind ?? ''))} ${String(object.metadata?.name ?? '')}`;
}

/** Clouddriver's kind → category map served on `/credentials` (`spinnakerKindMap`). */
export function spinnakerKindMap(): Record<string, SpinnakerCategory> {
  const map: Record<string, SpinnakerCategory> = {};
  for (const k of REGISTERED_KINDS) map[k.name] = k.category;
  return map;
}
