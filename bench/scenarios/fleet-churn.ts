/**
 * Scenario — fleet churn: sparse changes from a large fleet, the load where every stream's batch used to be its own
 * transaction. Three gateway replicas on one fresh Postgres database and one swarm of N simulated agents
 * (bench/swarm/agent-swarm.ts) spread over them round robin, each agent one account; once every stream is synced,
 * each agent changes one ConfigMap every `churnMs` (random phase) for `churnSeconds`, as one event batch, and the swarm
 * times each change from its send to the gateway's ack — which follows the commit holding it (change → committed
 * row).
 *
 * The same run does it twice on fresh databases and replicas: with the replicas' write coalescer (`cache.coalesce`,
 * the default: one statement for the batches of all the streams that wait) and without it (`enabled: false`: one
 * statement per batch). Over the churn window, per replica: the cache-write commits it made (its
 * `outpost_gateway_cache_write_groups_total` when coalescing, else its `outpost_gateway_event_batches_total`), the
 * batches it committed, CPU and RSS (its /metrics); in total: Postgres commits and rows written (`pg_stat_database`,
 * `pg_stat_user_tables`; Postgres flushes a backend's counters about once a second, so take rates as ±5 % over 30 s),
 * the latencies, and the changes acknowledged more than a second after they were sent.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { figureRow, type Row } from '../rows.js';
import { scrapeMetric, startJsonChild, type JsonChild } from '../processes.js';
import { startReplicaSet, type ReplicaSet } from '../replicas.js';

/** Parameters of one run. */
export interface FleetChurnParams {
  postgresUrl: string;
  agents: number;
  /** Each agent changes its ConfigMap every this many ms. */
  churnMs: number;
  churnSeconds: number;
  /** Wait after the swarm is ready before the churn starts. */
  settleSeconds: number;
  connectConcurrency: number;
}

/** Per replica, over the churn window. */
interface ChurnReplica {
  name: string;
  sessions: number;
  /** Cache-write transactions committed per second (groups, or batches without coalescing). */
  cacheCommitsPerSecond: number;
  batchesPerSecond: number;
  cpuPercent: number;
  rssMiB: number;
}

/** One mode's figures. */
interface ChurnMode {
  coalesce: boolean;
  replicas: ChurnReplica[];
  seconds: number;
  changesSent: number;
  changesAcked: number;
  /** Acknowledged more than 1 s after being sent. */
  delayed: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  /** pg_stat_database xact_commit per second (the scenario's own few readings included). */
  commitsPerSecond: number;
  /** Rows inserted, updated and deleted per second (pg_stat_database). */
  rowsPerSecond: number;
  /** Of those, per table (pg_stat_user_tables n_tup_ins + n_tup_upd + n_tup_del). */
  tableRowsPerSecond: Record<string, number>;
  connectSeconds: number;
  lostStreams: number;
  /** The swarm process's CPU over the window, % of one core (the machine's share the load itself takes). */
  swarmCpuPercent?: number;
}

/** Figures of the scenario. */
export interface FleetChurnResult {
  agents: number;
  modes: ChurnMode[];
}

const NAMES = ['gw-1', 'gw-2', 'gw-3'];

/** CPU seconds (user + system) of process `pid` so far, from /proc (Linux). */
function cpuSecondsOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** Postgres' counters of the run's database. */
async function counters(set: ReplicaSet) {
  const [db] = await set.sql<{ xact: string; rows: string }>(
    'select xact_commit::text as xact, (tup_inserted + tup_updated + tup_deleted)::text as rows from pg_stat_database where datname = current_database()',
  );
  // a partition's rows count for its table (objects is partitioned by account: migration 0016)
  const tables = await set.sql<{ relname: string; n: string }>(
    `select coalesce(p.relname, s.relname) as relname, sum(s.n_tup_ins + s.n_tup_upd + s.n_tup_del)::text as n
     from pg_stat_user_tables s left join pg_inherits i on i.inhrelid = s.relid left join pg_class p on p.oid = i.inhparent
     group by 1`,
  );
  return { xact: Number(db!.xact), rows: Number(db!.rows), tables: Object.fromEntries(tables.map((t) => [t.relname, Number(t.n)])) };
}

/** One mode on a fresh database and replicas. */
async function runMode(params: FleetChurnParams, coalesce: boolean): Promise<ChurnMode> {
  const set = await startReplicaSet({
    postgresUrl: params.postgresUrl,
    gateways: NAMES,
    gatewayConfig: { cache: { coalesce: { enabled: coalesce } } },
    logLevel: 'warn',
    prefix: 'outpost-bench-fleet-churn-',
  });
  let swarm: JsonChild | undefined;
  let keepLogs = true;
  try {
    const grpc = NAMES.map((n) => `http://127.0.0.1:${set.replica(n).grpcPort}`).join(',');
    const urls = NAMES.map((n) => `${set.replica(n).httpUrl}/metrics`);
    const metric = (name: string) => Promise.all(urls.map(async (url) => (await scrapeMetric(url, name)) || 0));
    swarm = startJsonChild('./swarm/agent-swarm.ts', [
      '--grpc',
      grpc,
      '--agents',
      String(params.agents),
      '--prefix',
      'churn',
      '--concurrency',
      String(params.connectConcurrency),
      '--churn-ms',
      String(params.churnMs),
      '--churn-seconds',
      String(params.churnSeconds),
      '--churn-after-ms',
      String(params.settleSeconds * 1000),
    ]);
    const ready = await swarm.waitFor('ready', 900_000);
    set.checkAlive();
    await swarm.waitFor('churn-start', 120_000);
    const commitsMetric = coalesce ? 'outpost_gateway_cache_write_groups_total{result="committed"}' : 'outpost_gateway_event_batches_total';
    const [c0, commits0, batches0, cpu0] = await Promise.all([
      counters(set),
      metric(commitsMetric),
      metric('outpost_gateway_event_batches_total'),
      metric('outpost_gateway_process_cpu_seconds_total'),
    ]);
    const swarmCpu0 = cpuSecondsOf(swarm.process.pid);
    const t0 = performance.now();
    await swarm.waitFor('churn-end', (params.churnSeconds + 120) * 1000);
    const [c1, commits1, batches1, cpu1, rss, sessions] = await Promise.all([
      counters(set),
      metric(commitsMetric),
      metric('outpost_gateway_event_batches_total'),
      metric('outpost_gateway_process_cpu_seconds_total'),
      metric('outpost_gateway_process_resident_memory_bytes'),
      metric('outpost_gateway_connected_agents'),
    ]);
    const seconds = (performance.now() - t0) / 1000;
    const swarmCpuPercent = ((cpuSecondsOf(swarm.process.pid) - swarmCpu0) / seconds) * 100;
    const done = await swarm.waitFor('churn', 60_000);
    set.checkAlive();
    const per = (x: number) => x / seconds;
    const latency = done.latencyMs as ChurnMode['latencyMs'];
    keepLogs = false;
    return {
      coalesce,
      replicas: NAMES.map((name, i) => ({
        name,
        sessions: sessions[i]!,
        cacheCommitsPerSecond: per(commits1[i]! - commits0[i]!),
        batchesPerSecond: per(batches1[i]! - batches0[i]!),
        cpuPercent: per(cpu1[i]! - cpu0[i]!) * 100,
        rssMiB: rss[i]! / 2 ** 20,
      })),
      seconds,
      changesSent: Number(done.sent),
      changesAcked: Number(done.acked),
      delayed: Number(done.delayed),
      latencyMs: latency,
      commitsPerSecond: per(c1.xact - c0.xact),
      rowsPerSecond: per(c1.rows - c0.rows),
      tableRowsPerSecond: Object.fromEntries(
        ['objects', 'accounts', 'watch_states', 'agent_sessions'].map((t) => [t, per((c1.tables[t] ?? 0) - (c0.tables[t] ?? 0))]),
      ),
      connectSeconds: Number(ready.seconds),
      lostStreams: swarm.events.filter((e) => e.event === 'lost').length,
      swarmCpuPercent,
    };
  } finally {
    await swarm?.stop();
    await set.close(keepLogs);
    await sleep(1000);
  }
}

/** Runs the scenario once: coalesced, then one statement per batch. */
export async function runFleetChurn(params: FleetChurnParams): Promise<FleetChurnResult> {
  const coalesced = await runMode(params, true);
  const perBatch = await runMode(params, false);
  return { agents: params.agents, modes: [coalesced, perBatch] };
}

/** Table rows: each mode per replica and in total, then the ratios (judged at full size only). */
export function fleetChurnRows(r: FleetChurnResult, p: Omit<FleetChurnParams, 'postgresUrl'>): Row[] {
  const judged = p.agents >= 10_000;
  const s = `fleet churn, ${r.agents} agents on 3 replicas, a change per agent every ${p.churnMs / 1000} s`;
  const rows: Row[] = [];
  const [on, off] = r.modes as [ChurnMode, ChurnMode];
  for (const m of r.modes) {
    const mode = m.coalesce ? 'coalesced' : 'one statement per batch';
    for (const x of m.replicas) {
      rows.push(
        figureRow(s, `${mode}, ${x.name} (${x.sessions} streams): cache-write commits per second`, [x.cacheCommitsPerSecond], {
          digits: 0,
          ...(m.coalesce ? { target: '≤ 100', meets: (v: number) => v <= 100, judged } : {}),
        }),
        figureRow(s, `${mode}, ${x.name}: batches committed per second`, [x.batchesPerSecond], { digits: 0 }),
        figureRow(s, `${mode}, ${x.name}: CPU, % of one core`, [x.cpuPercent], { digits: 0 }),
        figureRow(s, `${mode}, ${x.name}: RSS, MiB`, [x.rssMiB], { digits: 0 }),
      );
    }
    rows.push(
      figureRow(s, `${mode}: change → committed (acked), p50 ms (${m.changesAcked} of ${m.changesSent} changes)`, [m.latencyMs.p50], {
        digits: 1,
      }),
      figureRow(s, `${mode}: change → committed, p99 ms`, [m.latencyMs.p99], {
        digits: 1,
        ...(m.coalesce ? { target: '≤ 50 ms', meets: (v: number) => v <= 50, judged } : {}),
      }),
      figureRow(s, `${mode}: changes acknowledged more than 1 s after sent`, [m.delayed], { digits: 0 }),
      figureRow(
        s,
        `${mode}: changes sent per second (offered: ${Math.round((r.agents * 1000) / p.churnMs)})`,
        [m.changesSent / m.seconds],
        {
          digits: 0,
        },
      ),
      ...(m.swarmCpuPercent === undefined
        ? []
        : [figureRow(s, `${mode}: the swarm's CPU, % of one core`, [m.swarmCpuPercent], { digits: 0 })]),
      figureRow(s, `${mode}: Postgres commits per second (pg_stat_database)`, [m.commitsPerSecond], { digits: 0 }),
      figureRow(s, `${mode}: Postgres rows written per second (inserted + updated + deleted)`, [m.rowsPerSecond], { digits: 0 }),
      ...Object.entries(m.tableRowsPerSecond).map(([t, v]) => figureRow(s, `${mode}: ${t} rows written per second`, [v], { digits: 0 })),
    );
  }
  rows.push(
    figureRow(s, 'Postgres commits per second, one statement per batch / coalesced', [off.commitsPerSecond / on.commitsPerSecond], {
      digits: 1,
    }),
    figureRow(s, 'change → committed p99, coalesced / one statement per batch', [on.latencyMs.p99 / off.latencyMs.p99], { digits: 2 }),
  );
  return rows;
}
