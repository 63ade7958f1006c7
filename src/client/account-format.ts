/**
 * What `outpost accounts` prints: a kubectl-like table of accounts (name, state, agent, gateway, kinds synced,
 * objects, last event; `-o wide` adds zone, source, Kubernetes version and API host), one account's details with its
 * kinds and skipped kinds, or the accounts as JSON/YAML (protobuf JSON field names) or `account/NAME` lines.
 */
import { toJson } from '@bufbuild/protobuf';
import { stringify as toYaml } from 'yaml';
import { AccountSchema, type Account } from '../gen/outpost/api/v1/account_service_pb.js';
import { ageOf, renderFields, renderRows } from './text-table.js';

/** `-o` values of `outpost accounts`. */
export type AccountOutput = 'table' | 'wide' | 'json' | 'yaml' | 'name';

const objectCount = (a: Account) => a.kinds.reduce((n, k) => n + k.count, 0n);
const kindsSynced = (a: Account) => `${a.kinds.filter((k) => k.synced).length}/${a.kinds.length}`;
const lastEvent = (a: Account, now?: number) => (a.lastEventTime ? `${ageOf(a.lastEventTime, now)} ago` : '<none>');

/** A list of accounts in `output`; `single` prints one object instead of a list for json/yaml. */
export function formatAccounts(accounts: Account[], output: AccountOutput, options: { single?: boolean; now?: number } = {}): string {
  if (output === 'json' || output === 'yaml') {
    const values = accounts.map((a) => toJson(AccountSchema, a));
    const value = options.single && values.length === 1 ? values[0] : { accounts: values };
    return output === 'json' ? `${JSON.stringify(value, null, 2)}\n` : toYaml(value);
  }
  if (output === 'name') return accounts.map((a) => `account/${a.name}\n`).join('');
  const wide = output === 'wide';
  const header = ['NAME', 'STATE', 'AGENT', 'GATEWAY', 'KINDS SYNCED', 'OBJECTS', 'LAST EVENT'];
  if (wide) header.push('ZONE', 'SOURCE', 'KUBERNETES', 'API HOST');
  const rows = accounts.map((a) => {
    const row = [
      a.name,
      a.state,
      a.agentId || '<none>',
      a.gatewayId || '<none>',
      kindsSynced(a),
      String(objectCount(a)),
      lastEvent(a, options.now),
    ];
    if (wide) row.push(a.zoneId || '<none>', a.source || '<none>', a.kubernetesVersion || '<none>', a.apiHost || '<none>');
    return row;
  });
  return renderRows(header, rows);
}

/** One account in detail (kubectl describe's layout): fields, then its kinds and skipped kinds as tables. */
export function describeAccount(a: Account, now?: number): string {
  const fields = renderFields([
    ['Name', a.name],
    ['State', a.state],
    ['Reason', a.reason],
    ['Agent', a.agentId],
    ['Gateway', a.gatewayId],
    ['Transport', a.transport],
    ['Zone', a.zoneId],
    ['Source', a.source],
    ['API host', a.apiHost],
    ['Kubernetes', a.kubernetesVersion],
    ['Namespaces', a.namespaces.length > 0 ? a.namespaces.join(', ') : '<all>'],
    ['Bound identity', a.boundIdentity],
    ['Last event', lastEvent(a, now)],
    ['Last connection', a.lastConnectionTime ? `${ageOf(a.lastConnectionTime, now)} ago` : ''],
    ['Kinds synced', kindsSynced(a)],
    ['Objects', String(objectCount(a))],
  ]);
  const kinds = [...a.kinds].sort((x, y) => x.kind.localeCompare(y.kind) || x.apiVersion.localeCompare(y.apiVersion));
  const kindTable =
    kinds.length === 0
      ? '  <none>\n'
      : indent(
          renderRows(
            ['KIND', 'API VERSION', 'OBJECTS', 'SYNCED'],
            kinds.map((k) => [k.kind, k.apiVersion, String(k.count), k.synced ? 'yes' : 'no']),
          ),
        );
  const skipped =
    a.skippedKinds.length === 0
      ? '  <none>\n'
      : indent(
          renderRows(
            ['KIND', 'API VERSION', 'REASON'],
            a.skippedKinds.map((s) => [s.kind, s.apiVersion, s.reason]),
          ),
        );
  return `${fields}Kinds:\n${kindTable}Skipped kinds:\n${skipped}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');
}
