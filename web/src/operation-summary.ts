import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';

/**
 * What happened to an operation, in one line: the agent's reason and HTTP status on failure, its message, the
 * objects it deleted, and the gateway's error when no agent result exists (no agent, timeout, restart).
 * Empty while nothing is known yet.
 */
export function summarizeOperation(record: OperationRecord): string {
  const parts: string[] = [];
  const r = record.result;
  if (r) {
    if (!r.success && (r.reason || r.statusCode)) {
      parts.push([r.reason, r.statusCode ? `(HTTP ${r.statusCode})` : ''].filter(Boolean).join(' '));
    }
    if (r.message) parts.push(r.message);
    if (r.deleted.length > 0) parts.push(`deleted ${r.deleted.join(', ')}`);
    if (!r.message && r.objects.length > 0) {
      parts.push(`${r.objects.length} ${r.objects.length === 1 ? 'object' : 'objects'}`);
    }
  }
  if (record.error) parts.push(record.error);
  return parts.join(' — ');
}

/** "1 manifest", "3 manifests": the YAML documents of an apply. */
function manifestCount(manifests: string): string {
  const docs = manifests.split(/^---\s*$/m).filter((d) => d.trim() !== '').length;
  return `${docs} ${docs === 1 ? 'manifest' : 'manifests'}`;
}

/** What the operation targets, e.g. "Deployment demo/web" or "2 manifests"; empty when unknown. */
export function describeTarget(record: OperationRecord): string {
  const spec = record.operation?.spec;
  if (!spec || spec.case === undefined) return '';
  switch (spec.case) {
    case 'apply':
      return manifestCount(spec.value.manifests);
    case 'logs':
      return `Pod ${spec.value.namespace}/${spec.value.pod}`;
    case 'list':
      return `${spec.value.kind} ${spec.value.namespace || '(all namespaces)'}`;
    case 'delete':
      return `${spec.value.kind} ${spec.value.namespace ? `${spec.value.namespace}/` : ''}${spec.value.name || spec.value.labelSelector}`;
    default:
      return `${spec.value.kind} ${spec.value.namespace ? `${spec.value.namespace}/` : ''}${spec.value.name}`;
  }
}

/**
 * Where an operation acts: "Deployment/web in sandbox/demo" (kind/name in account/namespace; "in sandbox" for a
 * cluster-scoped object), "2 manifests in sandbox/demo" for an apply, "Deployment (list) in sandbox/demo" for a
 * list; the account alone when the request is not known.
 */
export function describeTargetIn(record: OperationRecord): string {
  const spec = record.operation?.spec;
  const where = (namespace: string): string => `${record.account}${namespace ? `/${namespace}` : ''}`;
  if (!spec || spec.case === undefined) return record.account;
  switch (spec.case) {
    case 'apply':
      return `${manifestCount(spec.value.manifests)} in ${where(spec.value.namespace)}`;
    case 'logs':
      return `Pod/${spec.value.pod} in ${where(spec.value.namespace)}`;
    case 'list':
      return `${spec.value.kind} (list) in ${where(spec.value.namespace)}`;
    case 'delete':
      return `${spec.value.kind}/${spec.value.name || `-l ${spec.value.labelSelector}`} in ${where(spec.value.namespace)}`;
    default:
      return `${spec.value.kind}/${spec.value.name} in ${where(spec.value.namespace)}`;
  }
}
