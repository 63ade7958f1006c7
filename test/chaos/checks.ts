/**
 * What must hold after every chaos round, once the faults are healed: every operation ends terminal, none took effect
 * twice (the ledger) and every SUCCEEDED one took effect once, the cache equals the cluster exactly (keys and
 * resourceVersions of the watched kinds), no process died unbidden, memory stayed bounded, and the Secret marker never
 * reached the wire, the database or a log.
 */
import { compareCacheToSandbox, isConverged, type CacheDiff } from '../../testkit/cache-compare.js';
import { readRss } from '../../testkit/proc-stats.js';
import type { ChaosSystem } from './chaos-system.js';
import { LEDGER, LEDGER_PREFIX, type LedgerOperation } from './workload.js';

const TERMINAL = new Set(['SUCCEEDED', 'FAILED', 'TIMED_OUT']);

/** Asks live replicas for the state of every operation not known terminal, until all are or `timeoutMs` passes. */
export async function settleOperations(system: ChaosSystem, ops: LedgerOperation[], timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = ops.filter((o) => !TERMINAL.has(o.state) && o.state !== 'NEVER_STORED');
    if (open.length === 0) return [];
    for (const op of open) {
      const gateways = system.cluster.gatewayNames.filter((g) => system.cluster.isRunning(g) && !system.cluster.isStopped(g));
      for (const g of gateways) {
        try {
          const res = await fetch(`${system.cluster.gateway(g).httpUrl}/outpost.api.v1.OperationService/GetOperation`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ id: op.id }),
            signal: AbortSignal.timeout(3000),
          });
          const json = (await res.json()) as { operation?: { state: string; error?: string }; code?: string };
          if (res.ok && json.operation) {
            op.state = json.operation.state.replace(/^OPERATION_STATE_/, '');
            op.error = json.operation.error;
          } else if (json.code === 'not_found' && op.state === 'UNKNOWN') {
            // No replica ever stored it (every submission was lost before the insert committed).
            op.state = 'NEVER_STORED';
          }
          break;
        } catch {
          // try the next replica
        }
      }
    }
    if (Date.now() > deadline) {
      return ops
        .filter((o) => !TERMINAL.has(o.state) && o.state !== 'NEVER_STORED')
        .map((o) => `operation ${o.id} not terminal: ${o.state}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Each ledger entry at most once; each SUCCEEDED operation exactly once; no entry of an operation never stored. */
export function checkLedger(system: ChaosSystem, ops: LedgerOperation[]): string[] {
  const cm = system.cluster.sandbox.store.get('v1', 'ConfigMap', system.namespace, LEDGER) as
    | { metadata: { finalizers?: string[] } }
    | undefined;
  if (!cm) return ['the ledger ConfigMap is gone'];
  const counts = new Map<string, number>();
  for (const f of cm.metadata.finalizers ?? [])
    if (f.startsWith(LEDGER_PREFIX)) counts.set(f.slice(LEDGER_PREFIX.length), (counts.get(f.slice(LEDGER_PREFIX.length)) ?? 0) + 1);
  const problems: string[] = [];
  for (const [id, n] of counts) if (n > 1) problems.push(`operation ${id} took effect ${n} times`);
  for (const op of ops) {
    const n = counts.get(op.id) ?? 0;
    if (op.state === 'SUCCEEDED' && n !== 1) problems.push(`operation ${op.id} SUCCEEDED but took effect ${n} times`);
    if (op.state === 'NEVER_STORED' && n !== 0) problems.push(`operation ${op.id} was never stored but took effect`);
  }
  return problems;
}

/** Polls until the cache equals the cluster; the last difference when it never does. */
export async function checkCache(
  system: ChaosSystem,
  timeoutMs: number,
): Promise<{ problems: string[]; seconds: number; diff?: CacheDiff }> {
  const started = Date.now();
  let last: CacheDiff | undefined;
  let error = '';
  while (Date.now() - started < timeoutMs) {
    try {
      last = await compareCacheToSandbox(system.db, system.cluster.sandbox, system.account, {
        namespaces: [system.namespace],
        kinds: [
          { apiVersion: 'v1', kind: 'ConfigMap' },
          { apiVersion: 'v1', kind: 'Secret' },
        ],
      });
      if (isConverged(last)) return { problems: [], seconds: (Date.now() - started) / 1000, diff: last };
    } catch (err) {
      error = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const show = (xs: string[]) => `${xs.length}${xs.length ? ` (${xs.slice(0, 5).join(', ')})` : ''}`;
  const state = await describeAccount(system).catch((err: Error) => `(state unreadable: ${err.message})`);
  return {
    problems: [
      last
        ? `cache differs from the cluster: missing ${show(last.missing)}, extra ${show(last.extra)}, stale ${show(last.stale)}; ${state}`
        : `cache not comparable: ${error}`,
    ],
    seconds: (Date.now() - started) / 1000,
    diff: last,
  };
}

/** The account's owner, lease and resume points, and the live sessions: what a diverged cache is explained by. */
async function describeAccount(system: ChaosSystem): Promise<string> {
  const [account] = await system.cluster.sql(
    'select state, agent_id, session_id, gateway_id, lease_epoch::text, lease_expires_at > now() as lease_valid from accounts where name = $1',
    [system.account],
  );
  const scopes = await system.cluster.sql(
    'select kind, resource_version, synced, sync_gen::text from watch_states where account = $1 order by kind',
    [system.account],
  );
  const sessions = await system.cluster.sql(
    'select id, agent_id, gateway_id, caching, standby from agent_sessions where ended_at is null order by connected_at',
  );
  return `account ${JSON.stringify(account)}; scopes ${JSON.stringify(scopes)}; live sessions ${JSON.stringify(sessions)}; cluster RV ${system.cluster.sandbox.store.resourceVersion}`;
}

/** Every gateway and agent runs (the faults restart what they killed), and none is above `maxRssMiB`. */
export function checkProcesses(system: ChaosSystem, maxRssMiB: number): { problems: string[]; rssMiB: Record<string, number> } {
  const problems: string[] = [];
  const rssMiB: Record<string, number> = {};
  for (const name of [...system.cluster.gatewayNames, ...system.agents]) {
    if (!system.cluster.isRunning(name)) {
      problems.push(`${name} is not running: ${system.cluster.logs(name).split('\n').slice(-5).join(' | ').slice(0, 1000)}`);
      continue;
    }
    const rss = readRss(system.cluster.pid(name)) / 2 ** 20;
    rssMiB[name] = Math.round(rss);
    if (rss > maxRssMiB) problems.push(`${name} uses ${rss.toFixed(0)} MiB (limit ${maxRssMiB})`);
  }
  return { problems, rssMiB };
}

/** The marker (and its base64 forms) in the bytes the proxies forwarded, in any table, or in any process's log. */
export async function checkSecretMarker(system: ChaosSystem, marker: string): Promise<string[]> {
  const needles = [marker, Buffer.from(marker).toString('base64').slice(0, 16), Buffer.from(`${marker}-`).toString('base64').slice(0, 16)];
  const problems: string[] = [];
  const found = (where: string, haystack: string | Buffer) => {
    for (const needle of needles)
      if (haystack.includes(needle)) problems.push(`the Secret marker ${JSON.stringify(needle)} reached ${where}`);
  };
  for (const [agent, proxy] of system.proxies) {
    found(`the wire from ${agent} to the gateways`, proxy.upstreamBytes());
    found(`the wire from the gateways to ${agent}`, proxy.downstreamBytes());
  }
  const tables = await system.cluster.sql<{ table_name: string }>(
    `select table_name from information_schema.tables where table_schema = 'public'`,
  );
  for (const { table_name } of tables) {
    const rows = await system.cluster.sql<{ dump: string | null }>(`select string_agg(t::text, E'\\n') as dump from "${table_name}" t`);
    found(`table ${table_name}`, rows[0]?.dump ?? '');
  }
  for (const name of [...system.cluster.gatewayNames, ...system.agents]) found(`the log of ${name}`, system.cluster.logs(name));
  return problems;
}

/**
 * Each agent took the path the system set up for it: its forward proxy logged a CONNECT to its fault proxy, and a live
 * gateway lists its stream with its configured transport. Retried for `timeoutMs` (a stream may be reconnecting).
 */
export async function checkAgentPaths(system: ChaosSystem, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const problems: string[] = [];
    for (const id of system.agents) {
      const port = system.proxies.get(id)!.port;
      if (!system.forwardProxies.get(id)!.log().includes(`CONNECT 127.0.0.1:${port}`))
        problems.push(`the forward proxy of ${id} logged no CONNECT to its fault proxy (port ${port})`);
    }
    const listed = await listAgents(system).catch((err: Error) => err);
    if (listed instanceof Error) problems.push(`no gateway listed the agents: ${listed.message}`);
    else
      for (const id of system.agents) {
        const seen = listed.filter((a) => a.agentId === id).map((a) => a.transport);
        if (!seen.includes(system.transports.get(id)!))
          problems.push(`${id} is configured for ${system.transports.get(id)} but its live streams are over [${seen.join(', ')}]`);
      }
    if (problems.length === 0 || Date.now() > deadline) return problems;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** `GET /armory/agents` of the first live gateway that answers. */
export async function listAgents(system: ChaosSystem): Promise<{ agentId: string; transport: string; caching: string[] }[]> {
  let last: unknown;
  for (const g of system.cluster.gatewayNames.filter((n) => system.cluster.isRunning(n) && !system.cluster.isStopped(n))) {
    try {
      const res = await fetch(`${system.cluster.gateway(g).httpUrl}/armory/agents`, { signal: AbortSignal.timeout(3000) });
      if (res.ok) return (await res.json()) as { agentId: string; transport: string; caching: string[] }[];
      last = new Error(`${g}: HTTP ${res.status}`);
    } catch (err) {
      last = err;
    }
  }
  throw last ?? new Error('no live gateway');
}
