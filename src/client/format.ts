/**
 * What the client commands print for a terminal operation, in kubectl's words: `deployment.apps/web configured`,
 * `configmap "x" deleted`, tables and `-o json|yaml|name` for get, the failure line for everything that failed.
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { OperationState, type OperationRecord } from '../gen/outpost/api/v1/operation_service_pb.js';
import { displayType } from '../shared/kind-names.js';
import { toKubectlJson } from './kubectl-json.js';
import { toKubectlYaml } from './kubectl-yaml.js';
import { renderTable } from './table.js';

/** `-o` values of `outpost get`. */
export type OutputFormat = 'table' | 'wide' | 'json' | 'yaml' | 'name';

function meta(o: JsonObject): { apiVersion: string; kind: string; name: string; namespace: string } {
  const m = (o.metadata ?? {}) as JsonObject;
  return {
    apiVersion: typeof o.apiVersion === 'string' ? o.apiVersion : '',
    kind: typeof o.kind === 'string' ? o.kind : '',
    name: typeof m.name === 'string' ? m.name : '',
    namespace: typeof m.namespace === 'string' ? m.namespace : '',
  };
}

/** kubectl's `type/name` for an object (`deployment.apps/web`). */
export function objectRef(o: JsonObject): string {
  const m = meta(o);
  return `${displayType(m.apiVersion, m.kind)}/${m.name}`;
}

/**
 * The failure of a terminal, unsuccessful operation as `<reason>: <message> (HTTP <status>)` (the caller prefixes
 * `error: `). Uses the agent's result when there is one, else the gateway's error (no agent, timeout, restart).
 */
export function describeFailure(record: OperationRecord): string {
  const result = record.result;
  const timedOut = record.state === OperationState.TIMED_OUT;
  const reason = result?.reason || (timedOut ? 'Timeout' : 'Failed');
  const message =
    (result && !result.success && result.message) ||
    record.error ||
    result?.message ||
    (timedOut ? `operation ${record.id} timed out` : `operation ${record.id} failed`);
  const status = result && result.statusCode > 0 ? ` (HTTP ${result.statusCode})` : '';
  return `${reason}: ${message}${status}`;
}

/** True when the operation ended SUCCEEDED with a successful result. */
export function succeeded(record: OperationRecord): boolean {
  return record.state === OperationState.SUCCEEDED && (record.result?.success ?? true);
}

/**
 * `apply`: one kubectl line per applied object, `configmap/a created` — the word the agent reported for that object
 * (OperationResult.actions: created, configured, unchanged, serverside-applied, replaced). A result without them (an
 * agent older than the field) falls back to the whole operation's status: `created` when every object was created
 * (201), else `configured`.
 */
export function formatApplied(record: OperationRecord): string {
  const objects = record.result?.objects ?? [];
  const actions = record.result?.actions ?? [];
  const fallback = record.result?.statusCode === 201 ? 'created' : 'configured';
  const verbOf = (i: number) => (actions.length === objects.length ? actions[i]! : fallback);
  return objects.map((o, i) => `${objectRef(o)} ${verbOf(i)}\n`).join('');
}

/** `delete`: `deployment.apps "web" deleted` per deleted object; `No resources found` when nothing matched. */
export function formatDeleted(record: OperationRecord, kindType: string): string {
  const deleted = record.result?.deleted ?? [];
  if (deleted.length === 0) return 'No resources found\n';
  return deleted
    .map((ref) => {
      const parts = ref.split('/');
      const name = parts[parts.length - 1]!;
      const namespace = parts.length === 3 ? parts[1] : '';
      const type = typeFromResult(record, parts[0]!) ?? kindType;
      return `${type} "${name}" deleted${namespace ? ` from ${namespace} namespace` : ''}\n`;
    })
    .join('');
}

function typeFromResult(record: OperationRecord, kind: string): string | undefined {
  const apiVersion = record.operation?.spec.case === 'delete' ? record.operation.spec.value.apiVersion : '';
  return kind ? displayType(apiVersion, kind) : undefined;
}

/**
 * One line per resulting object of `kind` with a verb (`scaled`, `paused`, `rolled back`…); `fallback` (`type/name`)
 * when no object of that kind came back (e.g. the agent returned the Scale subresource).
 */
export function formatActed(record: OperationRecord, verb: string, kind: string, fallback: string): string {
  const objects = (record.result?.objects ?? []).filter((o) => o.kind === kind);
  if (objects.length === 0) return `${fallback} ${verb}\n`;
  return objects.map((o) => `${objectRef(o)} ${verb}\n`).join('');
}

/** `rollout history`: REVISION / CHANGE-CAUSE table, oldest first. */
export function formatHistory(record: OperationRecord, target: string): string {
  const revisions = [...(record.result?.revisions ?? [])].sort((a, b) => Number(a.revision - b.revision));
  const lines = [`${target}`, 'REVISION  CHANGE-CAUSE'];
  for (const r of revisions) lines.push(`${String(r.revision).padEnd(10)}${r.changeCause || '<none>'}`);
  return `${lines.join('\n')}\n`;
}

/** An object as kubectl prints it by default (`--show-managed-fields=false`): without `metadata.managedFields`. */
function withoutManagedFields(o: JsonObject): JsonObject {
  const m = o.metadata;
  if (typeof m !== 'object' || m === null || Array.isArray(m) || !('managedFields' in m)) return o;
  const { managedFields: _omitted, ...metadata } = m;
  return { ...o, metadata };
}

/**
 * `get`: objects in the chosen output. `single` prints one object (get by name) instead of a `List` for json/yaml.
 * json and yaml are kubectl's bytes (./kubectl-json.ts, ./kubectl-yaml.ts): several objects, or none, as its
 * `{apiVersion: v1, items, kind: List, metadata: {resourceVersion: ""}}`, managed fields left out. An empty listing
 * in a table or names prints `No resources found…` on the returned `stderr` text, as kubectl does.
 */
export function formatObjects(
  objects: JsonObject[],
  options: { output: OutputFormat; kind: string; single: boolean; namespace: string; allNamespaces?: boolean },
): { stdout: string; stderr: string } {
  if (options.output === 'json' || options.output === 'yaml') {
    const value =
      options.single && objects.length === 1
        ? withoutManagedFields(objects[0]!)
        : { apiVersion: 'v1', kind: 'List', items: objects.map(withoutManagedFields), metadata: { resourceVersion: '' } };
    return { stdout: options.output === 'json' ? toKubectlJson(value) : toKubectlYaml(value), stderr: '' };
  }
  if (objects.length === 0) {
    const where = options.allNamespaces || !options.namespace ? '' : ` in ${options.namespace} namespace`;
    return { stdout: '', stderr: `No resources found${where}.\n` };
  }
  if (options.output === 'name') return { stdout: objects.map((o) => `${objectRef(o)}\n`).join(''), stderr: '' };
  return {
    stdout: renderTable(objects, { kind: options.kind, wide: options.output === 'wide', withNamespace: options.allNamespaces }),
    stderr: '',
  };
}
