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

/** What the operation targets, e.g. "Deployment demo/web" or "2 manifests"; empty when unknown. */
export function describeTarget(record: OperationRecord): string {
  const spec = record.operation?.spec;
  if (!spec || spec.case === undefined) return '';
  switch (spec.case) {
    case 'apply': {
      const docs = spec.value.manifests.split(/^---\s*$/m).filter((d) => d.trim() !== '').length;
      return `${docs} ${docs === 1 ? 'manifest' : 'manifests'}`;
    }
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
