/**
 * What `outpost operations` prints: a kubectl-like table of operation records (id, kind, target, state, submitter,
 * age, result; `-o wide` adds account, gateway, agent and duration), one record in detail, or the records as
 * JSON/YAML (protobuf JSON) or `operation/ID` lines.
 */
import { toJson } from '@bufbuild/protobuf';
import { stringify as toYaml } from 'yaml';
import { OperationRecordSchema, OperationState, type OperationRecord } from '../gen/outpost/api/v1/operation_service_pb.js';
import { displayType } from '../shared/kind-names.js';
import { formatDuration, fromProtoDuration } from './duration.js';
import { describeFailure, objectRef, succeeded } from './format.js';
import { objectsOfManifest } from './manifest-objects.js';
import { isTerminal } from './operation-client.js';
import { ageOf, renderFields, renderRows } from './text-table.js';

/** `-o` values of `outpost operations`. */
export type OperationOutput = 'table' | 'wide' | 'json' | 'yaml' | 'name';

/** The state without its enum prefix: `SUCCEEDED`, `TIMED_OUT`. */
function stateName(state: OperationState): string {
  return OperationState[state] ?? String(state);
}

/** What the operation acts on, kubectl-style: `deployment.apps/web -n demo`, `configmap -l app=web`, `2 objects`. */
function operationTarget(record: OperationRecord): string {
  const spec = record.operation?.spec;
  if (!spec?.case) return '<none>';
  const where = (namespace: string) => (namespace ? ` -n ${namespace}` : '');
  switch (spec.case) {
    case 'apply': {
      try {
        const objects = objectsOfManifest(spec.value.manifests, 'manifests');
        const first = objects[0];
        if (!first) return '<none>';
        const more = objects.length > 1 ? ` (+${objects.length - 1} more)` : '';
        return `${displayType(first.apiVersion, first.kind)}/${first.name}${where(first.namespace)}${more}`;
      } catch {
        return '<manifests>';
      }
    }
    case 'logs':
      return `pod/${spec.value.pod}${where(spec.value.namespace)}`;
    case 'list': {
      const v = spec.value;
      const selectors = [v.labelSelector && `-l ${v.labelSelector}`, v.fieldSelector && `--field-selector ${v.fieldSelector}`].filter(
        Boolean,
      );
      return [`${displayType(v.apiVersion, v.kind)}${where(v.namespace)}`, ...selectors].join(' ');
    }
    case 'delete':
      if (!spec.value.name)
        return `${displayType(spec.value.apiVersion, spec.value.kind)}${where(spec.value.namespace)} -l ${spec.value.labelSelector}`;
      return `${displayType(spec.value.apiVersion, spec.value.kind)}/${spec.value.name}${where(spec.value.namespace)}`;
    default:
      return `${displayType(spec.value.apiVersion, spec.value.kind)}/${spec.value.name}${where(spec.value.namespace)}`;
  }
}

/** RESULT column: `OK (HTTP 200)` for a success, the failure line for a failure, '' while it runs. */
function operationResult(record: OperationRecord): string {
  if (!isTerminal(record.state)) return '';
  if (succeeded(record)) return `OK${record.result?.statusCode ? ` (HTTP ${record.result.statusCode})` : ''}`;
  const line = describeFailure(record);
  return line.length > 80 ? `${line.slice(0, 77)}...` : line;
}

/** Records in `output`; `single` prints one object instead of a list for json/yaml. */
export function formatOperations(
  records: OperationRecord[],
  output: OperationOutput,
  options: { single?: boolean; now?: number } = {},
): string {
  if (output === 'json' || output === 'yaml') {
    const values = records.map((r) => toJson(OperationRecordSchema, r));
    const value = options.single && values.length === 1 ? values[0] : { operations: values };
    return output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : toYaml(value);
  }
  if (output === 'name') return records.map((r) => `operation/${r.id}\n`).join('');
  const wide = output === 'wide';
  const header = ['ID', 'KIND', 'TARGET', 'STATE', 'SUBMITTER', 'AGE', 'RESULT'];
  if (wide) header.push('ACCOUNT', 'GATEWAY', 'AGENT', 'DURATION');
  const rows = records.map((r) => {
    const row = [
      r.id,
      r.type,
      operationTarget(r),
      stateName(r.state),
      r.requestedBy || '<none>',
      ageOf(r.receivedAt, options.now),
      operationResult(r),
    ];
    if (wide)
      row.push(
        r.account,
        r.gatewayId || '<none>',
        r.agentId || '<none>',
        r.totalDuration ? formatDuration(fromProtoDuration(r.totalDuration)) : '<none>',
      );
    return row;
  });
  return renderRows(header, rows);
}

/** One record in detail (kubectl describe's layout), with the objects and deleted names of its result. */
export function describeOperation(r: OperationRecord, now?: number): string {
  const objects = (r.result?.objects ?? []).map(objectRef);
  return renderFields([
    ['ID', r.id],
    ['Account', r.account],
    ['Kind', r.type],
    ['Target', operationTarget(r)],
    ['State', stateName(r.state)],
    ['Submitted by', r.requestedBy],
    ['Age', ageOf(r.receivedAt, now)],
    ['Duration', r.totalDuration ? formatDuration(fromProtoDuration(r.totalDuration)) : ''],
    ['Gateway', r.gatewayId],
    ['Agent', r.agentId],
    ['Result', operationResult(r)],
    ['Objects', objects.join(', ')],
    ['Deleted', (r.result?.deleted ?? []).join(', ')],
  ]);
}
