/**
 * Strategic merge patch metadata of built-in kinds, as the `patchMergeKey`/`patchStrategy` tags of k8s.io/api give
 * it (the part kubectl's three-way patch relies on): which lists merge by which key, and which primitive lists merge
 * as sets. A field not listed here is replaced as a whole when it is a list, and merged when it is a map.
 */

/** Patch metadata of one field. */
export interface FieldMeta {
  /** For lists of maps merged by key (e.g. `name` for containers). */
  mergeKey?: string;
  /** A primitive list merged as a set (e.g. finalizers). */
  set?: boolean;
  /** The fields of the value (a map) or of each list element. */
  fields?: PatchSchema;
}

/** Field name → metadata. */
export type PatchSchema = { readonly [field: string]: FieldMeta };

const by = (mergeKey: string, fields?: PatchSchema): FieldMeta => ({ mergeKey, fields });
const map = (fields: PatchSchema): FieldMeta => ({ fields });

const objectMeta: PatchSchema = { ownerReferences: by('uid'), finalizers: { set: true } };
const container: PatchSchema = {
  ports: by('containerPort'),
  env: by('name'),
  volumeMounts: by('mountPath'),
  volumeDevices: by('devicePath'),
};
const podSpec: PatchSchema = {
  volumes: by('name'),
  initContainers: by('name', container),
  containers: by('name', container),
  ephemeralContainers: by('name', container),
  imagePullSecrets: by('name'),
  hostAliases: by('ip'),
  topologySpreadConstraints: by('topologyKey'),
  schedulingGates: by('name'),
  resourceClaims: by('name'),
};
const podTemplate: PatchSchema = { metadata: map(objectMeta), spec: map(podSpec) };
const withMeta = (rest: PatchSchema): PatchSchema => ({ metadata: map(objectMeta), ...rest });
const jobSpec: PatchSchema = { template: map(podTemplate) };
const workload = withMeta({ spec: map({ template: map(podTemplate) }) });

const SCHEMAS: Record<string, PatchSchema> = {
  '/Pod': withMeta({ spec: map(podSpec) }),
  '/PodTemplate': withMeta({ template: map(podTemplate) }),
  '/ReplicationController': workload,
  '/Service': withMeta({ spec: map({ ports: by('port') }) }),
  'apps/Deployment': workload,
  'apps/ReplicaSet': workload,
  'apps/StatefulSet': workload,
  'apps/DaemonSet': workload,
  'batch/Job': withMeta({ spec: map(jobSpec) }),
  'batch/CronJob': withMeta({ spec: map({ jobTemplate: map({ metadata: map(objectMeta), spec: map(jobSpec) }) }) }),
};

/** The schema of a built-in kind (ObjectMeta rules at least). */
export function patchSchemaFor(group: string, kind: string): PatchSchema {
  return SCHEMAS[`${group}/${kind}`] ?? withMeta({});
}
