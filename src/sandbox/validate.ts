/**
 * Write-time validation. Kubernetes answers 422 Invalid with field causes for objects that decode but make no sense;
 * the sandbox checks the rules clients most often trip over (names, selectors matching templates, containers), so
 * tests of error handling see the real shape of that answer. Counts the controllers act on (replicas, a Job's
 * parallelism…) are Go int32 fields in Kubernetes: a number outside int32 does not decode there (400), and here it
 * would have the ReplicaSet controller create billions of pods.
 */
import { errors } from './errors.js';
import type { KindInfo } from './kinds.js';
import { isPlainObject, type KubeObject } from './types.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

interface Cause {
  field: string;
  message: string;
}

/** Checks the shape of metadata; throws 400 for values of the wrong JSON type (a decode error in Kubernetes). */
export function checkMetadataTypes(obj: Record<string, unknown>): void {
  const meta = obj.metadata;
  if (meta !== undefined && !isPlainObject(meta)) throw errors.badRequest('metadata must be an object');
  if (!meta) return;
  for (const field of ['name', 'generateName', 'namespace', 'resourceVersion', 'uid'] as const) {
    if (meta[field] !== undefined && meta[field] !== null && typeof meta[field] !== 'string') {
      throw errors.badRequest(
        `json: cannot unmarshal ${typeof meta[field]} into Go struct field ObjectMeta.metadata.${field} of type string`,
      );
    }
  }
  for (const field of ['labels', 'annotations'] as const) {
    const map = meta[field];
    if (map === undefined || map === null) continue;
    if (!isPlainObject(map) || Object.values(map).some((v) => typeof v !== 'string')) {
      throw errors.badRequest(`json: cannot unmarshal metadata.${field}: expected a map of strings`);
    }
  }
}

const INT32_MAX = 2 ** 31 - 1;

/** The int32 count fields of each kind the controllers read, with the Go struct Kubernetes decodes them into. */
const INT32_FIELDS: Record<string, { struct: string; paths: string[][] }> = {
  'apps/Deployment': {
    struct: 'DeploymentSpec',
    paths: [['replicas'], ['minReadySeconds'], ['revisionHistoryLimit'], ['progressDeadlineSeconds']],
  },
  'apps/ReplicaSet': { struct: 'ReplicaSetSpec', paths: [['replicas'], ['minReadySeconds']] },
  'apps/StatefulSet': {
    struct: 'StatefulSetSpec',
    paths: [['replicas'], ['minReadySeconds'], ['revisionHistoryLimit'], ['updateStrategy', 'rollingUpdate', 'partition']],
  },
  'batch/Job': { struct: 'JobSpec', paths: [['parallelism'], ['completions'], ['backoffLimit']] },
};

/** Throws 400, as Kubernetes' decoder does, for a count field holding a number that is not an int32. */
function checkInt32Fields(info: KindInfo, obj: KubeObject): void {
  const fields = INT32_FIELDS[`${info.group}/${info.kind}`];
  if (!fields) return;
  for (const path of fields.paths) {
    let value: unknown = obj.spec;
    for (const key of path) value = isPlainObject(value) ? value[key] : undefined;
    if (typeof value !== 'number' || (Number.isInteger(value) && Math.abs(value) <= INT32_MAX)) continue;
    throw errors.badRequest(
      `${info.kind} in version "${info.versions[0]}" cannot be handled as a ${info.kind}: json: cannot unmarshal number ${value} into Go struct field ${fields.struct}.spec.${path.join('.')} of type int32`,
    );
  }
}

function checkName(info: KindInfo, name: string, causes: Cause[]): void {
  if (info.group === 'rbac.authorization.k8s.io') {
    if (name.includes('/') || name.includes('%') || name === '.' || name === '..') {
      causes.push({ field: 'metadata.name', message: `Invalid value: "${name}": may not contain '/' or '%'` });
    }
    return;
  }
  const pattern = info.kind === 'Namespace' || info.kind === 'Service' ? DNS_LABEL : DNS_SUBDOMAIN;
  const max = pattern === DNS_LABEL ? 63 : 253;
  if (name.length > max || !pattern.test(name)) {
    causes.push({
      field: 'metadata.name',
      message: `Invalid value: "${name}": a lowercase RFC 1123 ${pattern === DNS_LABEL ? 'label' : 'subdomain'} must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character`,
    });
  }
}

function selectorMatchesTemplate(obj: KubeObject, causes: Cause[]): void {
  const spec = isPlainObject(obj.spec) ? obj.spec : undefined;
  if (!spec) {
    causes.push({ field: 'spec', message: 'Required value' });
    return;
  }
  const selector = isPlainObject(spec.selector) ? spec.selector : undefined;
  if (!selector || (!isPlainObject(selector.matchLabels) && !Array.isArray(selector.matchExpressions))) {
    causes.push({ field: 'spec.selector', message: 'Required value' });
    return;
  }
  const template = isPlainObject(spec.template) ? spec.template : undefined;
  const labels = isPlainObject(template?.metadata) && isPlainObject(template.metadata.labels) ? template.metadata.labels : {};
  const matchLabels = isPlainObject(selector.matchLabels) ? selector.matchLabels : {};
  for (const [key, value] of Object.entries(matchLabels)) {
    if (labels[key] !== value) {
      causes.push({
        field: 'spec.template.metadata.labels',
        message: `Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\``,
      });
      return;
    }
  }
  checkPodSpec(template?.spec, 'spec.template.spec', causes);
}

function checkPodSpec(spec: unknown, path: string, causes: Cause[]): void {
  const containers = isPlainObject(spec) ? spec.containers : undefined;
  if (!Array.isArray(containers) || containers.length === 0) {
    causes.push({ field: `${path}.containers`, message: 'Required value' });
    return;
  }
  containers.forEach((c, i) => {
    if (!isPlainObject(c) || typeof c.name !== 'string' || !DNS_LABEL.test(c.name)) {
      causes.push({ field: `${path}.containers[${i}].name`, message: 'Required value: a DNS-1123 label is required' });
    }
    if (isPlainObject(c) && c.image !== undefined && typeof c.image !== 'string') {
      causes.push({ field: `${path}.containers[${i}].image`, message: 'Invalid value: must be a string' });
    }
  });
}

function checkKind(info: KindInfo, obj: KubeObject, causes: Cause[]): void {
  switch (`${info.group}/${info.kind}`) {
    case 'apps/Deployment':
    case 'apps/ReplicaSet':
    case 'apps/StatefulSet':
    case 'apps/DaemonSet':
      selectorMatchesTemplate(obj, causes);
      if (
        isPlainObject(obj.spec) &&
        obj.spec.replicas !== undefined &&
        (!Number.isInteger(obj.spec.replicas) || (obj.spec.replicas as number) < 0)
      ) {
        causes.push({
          field: 'spec.replicas',
          message: `Invalid value: ${JSON.stringify(obj.spec.replicas)}: must be greater than or equal to 0`,
        });
      }
      break;
    case '/Pod':
      checkPodSpec(obj.spec, 'spec', causes);
      break;
    case '/ConfigMap':
    case '/Secret':
      for (const field of ['data', 'stringData', 'binaryData']) {
        const map = obj[field];
        if (map !== undefined && map !== null && (!isPlainObject(map) || Object.values(map).some((v) => typeof v !== 'string'))) {
          causes.push({ field, message: 'Invalid value: must be a map of strings' });
        }
      }
      break;
    case '/Service': {
      const ports = isPlainObject(obj.spec) ? obj.spec.ports : undefined;
      if (Array.isArray(ports)) {
        ports.forEach((p, i) => {
          const port = isPlainObject(p) ? p.port : undefined;
          if (!Number.isInteger(port) || (port as number) < 1 || (port as number) > 65535) {
            causes.push({
              field: `spec.ports[${i}].port`,
              message: `Invalid value: ${JSON.stringify(port)}: must be between 1 and 65535, inclusive`,
            });
          }
        });
      }
      break;
    }
    default:
      break;
  }
}

/** Validates an object about to be stored; throws 400 for a count outside int32, else 422 Invalid listing every cause. */
export function validateObject(info: KindInfo, obj: KubeObject): void {
  checkInt32Fields(info, obj);
  const causes: Cause[] = [];
  const name = obj.metadata.name ?? '';
  checkName(info, name, causes);
  if (info.namespaced && obj.metadata.namespace && !DNS_LABEL.test(obj.metadata.namespace)) {
    causes.push({
      field: 'metadata.namespace',
      message: `Invalid value: "${obj.metadata.namespace}": a lowercase RFC 1123 label is required`,
    });
  }
  checkKind(info, obj, causes);
  if (causes.length > 0) throw errors.invalid(info, name, causes);
}
