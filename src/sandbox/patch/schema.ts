/**
 * Patch metadata for built-in kinds: which lists merge by which key (`patchMergeKey`/`patchStrategy` tags of
 * k8s.io/api), which primitive lists merge as sets, and where `retainKeys` applies. Strategic merge patch and
 * server-side apply read it; a field that is not listed here merges like JSON merge patch (objects merge, lists
 * replace). Custom resources get no schema at all, as upstream (they only support merge and JSON patch semantics).
 */

/** Patch metadata of one field. */
export interface FieldPatchMeta {
  /** `merge`: a list merged by `mergeKey` (maps) or as a set (primitives). `replace`: an atomic object. */
  strategy?: 'merge' | 'replace';
  /** For lists of objects merged by key (e.g. `name` for containers). */
  mergeKey?: string;
  /** Upstream `retainKeys` strategy; the `$retainKeys` directive is honoured wherever it appears anyway. */
  retainKeys?: boolean;
  /** Schema of the field's value (an object) or of each list element. */
  schema?: TypeSchema;
}

/** Patch metadata of an object type: field name → metadata. */
export type TypeSchema = { readonly [field: string]: FieldPatchMeta };

const mergeBy = (mergeKey: string, schema?: TypeSchema, retainKeys = false): FieldPatchMeta => ({
  strategy: 'merge',
  mergeKey,
  schema,
  retainKeys,
});
const obj = (schema: TypeSchema): FieldPatchMeta => ({ schema });
const primitiveSet: FieldPatchMeta = { strategy: 'merge' };

const objectMeta: TypeSchema = {
  ownerReferences: mergeBy('uid'),
  finalizers: primitiveSet,
};

const container: TypeSchema = {
  ports: mergeBy('containerPort'),
  env: mergeBy('name'),
  volumeMounts: mergeBy('mountPath'),
  volumeDevices: mergeBy('devicePath'),
};

const podSpec: TypeSchema = {
  volumes: mergeBy('name', undefined, true),
  initContainers: mergeBy('name', container),
  containers: mergeBy('name', container),
  ephemeralContainers: mergeBy('name', container),
  imagePullSecrets: mergeBy('name'),
  hostAliases: mergeBy('ip'),
  topologySpreadConstraints: mergeBy('topologyKey'),
  schedulingGates: mergeBy('name'),
  resourceClaims: mergeBy('name', undefined, true),
};

const podStatus: TypeSchema = {
  conditions: mergeBy('type'),
  podIPs: mergeBy('ip'),
  hostIPs: mergeBy('ip'),
  resourceClaimStatuses: mergeBy('name', undefined, true),
};

const podTemplateSpec: TypeSchema = { metadata: obj(objectMeta), spec: obj(podSpec) };
const conditionsStatus: TypeSchema = { conditions: mergeBy('type') };

const withMeta = (rest: TypeSchema): TypeSchema => ({ metadata: obj(objectMeta), ...rest });

const jobSpec: TypeSchema = { template: obj(podTemplateSpec) };

const KIND_SCHEMAS: Record<string, TypeSchema> = {
  '/Pod': withMeta({ spec: obj(podSpec), status: obj(podStatus) }),
  '/PodTemplate': withMeta({ template: obj(podTemplateSpec) }),
  '/ReplicationController': withMeta({ spec: obj({ template: obj(podTemplateSpec) }), status: obj(conditionsStatus) }),
  '/Service': withMeta({ spec: obj({ ports: mergeBy('port') }), status: obj(conditionsStatus) }),
  '/Node': withMeta({
    spec: obj({ podCIDRs: primitiveSet }),
    status: obj({ conditions: mergeBy('type'), addresses: mergeBy('type') }),
  }),
  '/Namespace': withMeta({ status: obj(conditionsStatus) }),
  '/PersistentVolumeClaim': withMeta({ status: obj(conditionsStatus) }),
  'apps/Deployment': withMeta({
    spec: obj({ template: obj(podTemplateSpec), strategy: { retainKeys: true } }),
    status: obj(conditionsStatus),
  }),
  'apps/ReplicaSet': withMeta({ spec: obj({ template: obj(podTemplateSpec) }), status: obj(conditionsStatus) }),
  'apps/StatefulSet': withMeta({ spec: obj({ template: obj(podTemplateSpec) }), status: obj(conditionsStatus) }),
  'apps/DaemonSet': withMeta({ spec: obj({ template: obj(podTemplateSpec) }), status: obj(conditionsStatus) }),
  'batch/Job': withMeta({ spec: obj(jobSpec), status: obj(conditionsStatus) }),
  'batch/CronJob': withMeta({
    spec: obj({ jobTemplate: obj({ metadata: obj(objectMeta), spec: obj(jobSpec) }) }),
  }),
};

/** API groups served by Kubernetes itself: their objects have ObjectMeta patch semantics even without a table entry. */
const BUILTIN_GROUPS = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'rbac.authorization.k8s.io',
  'networking.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'storage.k8s.io',
  'apiextensions.k8s.io',
  'admissionregistration.k8s.io',
  'scheduling.k8s.io',
  'events.k8s.io',
  'authorization.k8s.io',
  'authentication.k8s.io',
  'certificates.k8s.io',
  'apiregistration.k8s.io',
  'node.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'resource.k8s.io',
]);

const METADATA_ONLY: TypeSchema = withMeta({});

/**
 * Splits a kind key — `group/Kind` (`/Pod` for the core group, `apps/Deployment`), also tolerating
 * `group/version/Kind`, `v1/Pod` and a bare `Kind` (core) — into group and kind.
 */
function parseKindKey(kindKey: string): { group: string; kind: string } {
  const parts = kindKey.split('/');
  const kind = parts[parts.length - 1];
  let group = parts.length >= 2 ? parts[0] : '';
  // "v1/Pod" is an apiVersion of the core group, not a group named "v1"
  if (parts.length === 2 && /^v\d+((alpha|beta)\d+)?$/.test(group)) group = '';
  return { group, kind };
}

/**
 * The patch schema of a kind, or `undefined` for kinds the sandbox has no metadata for (custom resources), which then
 * merge lists by replacement.
 */
export function schemaForKind(kindKey: string): TypeSchema | undefined {
  const { group, kind } = parseKindKey(kindKey);
  const known = KIND_SCHEMAS[`${group}/${kind}`];
  if (known) return known;
  return BUILTIN_GROUPS.has(group) ? METADATA_ONLY : undefined;
}
