/**
 * Checks that the authorization table names exactly what the gateway serves: every REST route of the Hono app and
 * every method of every served RPC service has a main row (scenario empty), and every row's target exists (rows
 * marked `unrouted` aside). Returns the problems as sentences; empty means complete.
 */
import type { DescService } from '@bufbuild/protobuf';
import type { RestRoute } from '../../testkit/rest-routes.js';
import type { MatrixRow } from './matrix-types.js';

/** Problems of the REST half of the table against the app's routes. */
export function restCompleteness(table: readonly MatrixRow[], routes: readonly RestRoute[]): string[] {
  const problems: string[] = [];
  const registered = new Set(routes.map((r) => `${r.method} ${r.path}`));
  const rows = table.filter((r) => r.surface === 'rest');
  const main = new Set(rows.filter((r) => r.scenario === '').map((r) => r.target));
  for (const route of registered) if (!main.has(route)) problems.push(`REST route ${route} has no row in the authorization table`);
  for (const row of rows) {
    if (!row.unrouted && !registered.has(row.target))
      problems.push(`the table names REST route ${row.target}, which the gateway does not register`);
    if (row.unrouted && registered.has(row.target)) problems.push(`${row.target} is marked unrouted but is a registered route`);
  }
  return problems;
}

/**
 * Problems of the RPC half against the served services: `served` are the names the gateway lists (reflection),
 * `generated` every descriptor in src/gen (to resolve the names to their methods).
 */
export function rpcCompleteness(
  table: readonly MatrixRow[],
  served: readonly string[],
  generated: ReadonlyMap<string, DescService>,
): string[] {
  const problems: string[] = [];
  const methods = new Set<string>();
  for (const name of served) {
    const desc = generated.get(name);
    if (!desc) {
      problems.push(`the gateway serves ${name}, which has no descriptor in src/gen`);
      continue;
    }
    for (const m of desc.methods) methods.add(`${name}/${m.name}`);
  }
  const rows = table.filter((r) => r.surface === 'rpc');
  const main = new Set(rows.filter((r) => r.scenario === '').map((r) => r.target));
  for (const method of methods) if (!main.has(method)) problems.push(`RPC ${method} has no row in the authorization table`);
  for (const row of rows)
    if (!methods.has(row.target)) problems.push(`the table names RPC ${row.target}, which the gateway does not serve`);
  return problems;
}

/** Problems of rows whose request does not call their target (a typo would test another route than it claims). */
export function requestsMatchTargets(table: readonly MatrixRow[]): string[] {
  const problems: string[] = [];
  for (const row of table) {
    const r = row.request;
    if (r.kind === 'rest') {
      const [method, pattern] = row.target.split(' ') as [string, string];
      const re = new RegExp(`^${pattern.replace(/:[^/]+/g, '[^/]+').replace(/\*/g, '.*')}$`);
      const path = r.path.split('?')[0]!;
      if (!re.test(path) || (method !== 'ALL' && method !== r.method)) problems.push(`row ${row.target} sends ${r.method} ${r.path}`);
    } else if (r.kind === 'rpc' || r.kind === 'stalled') {
      if (`${r.service}/${r.method}` !== row.target) problems.push(`row ${row.target} calls ${r.service}/${r.method}`);
    } else if (row.target !== 'outpost.agent.v1.AgentService/Connect') {
      problems.push(`row ${row.target} opens an agent stream`);
    }
  }
  return problems;
}
