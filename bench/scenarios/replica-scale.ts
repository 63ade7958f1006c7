/**
 * Scenario — replica scale: three gateway replicas (gw-1…gw-3, gateway config defaults: agent heartbeat 10 s, lease
 * 15 s renewed every 5 s, replica heartbeat 5 s) on one fresh Postgres database, and one swarm process of N simulated
 * agents (bench/swarm/agent-swarm.ts) spread over them round robin: agent K dials replica K mod 3 directly (no
 * balancer). Each simulated agent owns one account of its own (a cluster with an empty ConfigMap list), so every
 * replica holds and renews a lease per agent and touches a session row per agent, as with idle clusters.
 *
 * Per replica: the streams it holds, the growth of its RSS from a warmed-up state (a few agents) to N more divided by
 * the streams it gained, its CPU over an idle window (both from its own /metrics: prom-client's process metrics),
 * and the Postgres writes of that window it made: lease renewals and session touches. Those two are each one
 * statement per replica per tick, stamping every row it updates with the same `now()`, so polling
 * `group by gateway_id, lease_expires_at` (and `last_seen_at`) once a second counts each replica's renewal statements
 * and the rows each updated. Totals from Postgres' own counters over the same window: `pg_stat_database`
 * (xact_commit, tup_updated; this scenario's own polling subtracted from the commits) and `pg_stat_user_tables`
 * (n_tup_upd of accounts, agent_sessions, replicas). Postgres flushes a backend's counters at most once a second
 * and an idle backend's within about 10 s, so a window's edges can shift a few seconds of writes: take the rates as
 * ±10% over a 30 s window.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { figureRow, type Row } from '../rows.js';
import { readRss, scrapeMetric, startSwarm, type JsonChild } from '../processes.js';
import { startReplicaSet } from '../replicas.js';
import { keysOf, LEASE_GROUPS, readCounters, TOUCH_GROUPS, countStatements, type Group } from '../postgres-writes.js';

/** Parameters of one run. */
export interface ReplicaScaleParams {
  postgresUrl: string;
  /** Simulated agents of the measured swarm, spread round robin over the replicas. */
  agents: number;
  /** Agents connected before the first memory reading (warms up code paths and pools; not counted). */
  warmupAgents: number;
  /** Wait after the swarm is connected before reading memory (at least two agent heartbeats). */
  settleSeconds: number;
  /** Memory readings (200 ms apart) per replica whose median is taken. */
  samples: number;
  /** The idle window over which CPU and Postgres writes are measured. */
  idleSeconds: number;
  /** Streams being opened at once by the swarm. */
  connectConcurrency: number;
}

/** What one replica held and cost. */
interface ReplicaFigures {
  name: string;
  /** Streams it reports (outpost_gateway_connected_agents) after the swarm settled. */
  sessions: number;
  /** Accounts whose lease it holds, unexpired, per the database. */
  leases: number;
  /** RSS growth per stream gained, KiB. */
  rssKiBPerAgent: number;
  rssMiBBefore: number;
  rssMiBAfter: number;
  /** CPU over the idle window, % of one core. */
  idleCpuPercent: number;
  /** Lease renewal statements per second (one per tick for all its leases). */
  renewalStatementsPerSecond: number;
  /** Account rows those statements renewed, per second. */
  renewedRowsPerSecond: number;
  /** Session-touch statements per second (the agents' messages, batched each second). */
  touchStatementsPerSecond: number;
  /** agent_sessions rows those statements touched, per second. */
  touchedRowsPerSecond: number;
}

/** Figures of the scenario. */
export interface ReplicaScaleResult {
  agents: number;
  replicas: ReplicaFigures[];
  /** Seconds the swarm took to open every stream (Hello → Welcome → markers acknowledged). */
  connectSeconds: number;
  /** Streams that ended during the run (should be 0). */
  lostStreams: number;
  /** Stream openings that failed before the Welcome and were tried again by the swarm (an overloaded machine). */
  connectRetries: number;
  /**
   * Postgres commits per agent connected, over the swarm's connect phase, less the idle commit rate measured later
   * times the phase's length (the idle writes of agents already connected are batched: a constant rate).
   */
  connectCommitsPerAgent: number;
  /** Rows inserted per agent connected over the connect phase (pg_stat_database tup_inserted). */
  connectInsertsPerAgent: number;
  /** Share of the idle window's row updates that were HOT (no index entry written; pg_stat_user_tables n_tup_hot_upd). */
  hotUpdateShare: { accounts: number; agentSessions: number };
  /** Over the idle window, from pg_stat_database of the run's database (this scenario's polling subtracted). */
  commitsPerSecond: number;
  tupUpdatedPerSecond: number;
  /** n_tup_upd per second of each table written while idle (pg_stat_user_tables). */
  tableUpdatesPerSecond: { accounts: number; agentSessions: number; replicas: number };
  idleSeconds: number;
  /** The swarm's own RSS per agent (client side, KiB). */
  swarmKiBPerAgent: number;
}

const NAMES = ['gw-1', 'gw-2', 'gw-3'];

/** Median of `samples` readings 200 ms apart of a replica's RSS from its /metrics. */
async function replicaRss(url: string, samples: number): Promise<number> {
  const xs: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await sleep(200);
    xs.push(await scrapeMetric(url, 'outpost_gateway_process_resident_memory_bytes'));
  }
  return xs.sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
}

/** Runs the scenario once: fresh database, replicas and swarms. */
export async function runReplicaScale(params: ReplicaScaleParams): Promise<ReplicaScaleResult> {
  const set = await startReplicaSet({
    postgresUrl: params.postgresUrl,
    gateways: NAMES,
    gatewayConfig: {},
    logLevel: 'warn',
    prefix: 'outpost-bench-replica-scale-',
  });
  const swarms: JsonChild[] = [];
  let keepLogs = true;
  try {
    const grpc = NAMES.map((n) => `http://127.0.0.1:${set.replica(n).grpcPort}`).join(',');
    const metrics = NAMES.map((n) => `${set.replica(n).httpUrl}/metrics`);
    const swarm = (prefix: string, agents: number) => startSwarm(grpc, prefix, agents, params.connectConcurrency);
    const metric = (name: string) => Promise.all(metrics.map((url) => scrapeMetric(url, name)));

    const warm = swarm('warm', params.warmupAgents);
    swarms.push(warm);
    await warm.waitFor('ready');
    await sleep(params.settleSeconds * 1000);
    const sessionsBefore = await metric('outpost_gateway_connected_agents');
    const rssBefore = await Promise.all(metrics.map((url) => replicaRss(url, params.samples)));

    const connect0 = await readCounters(set);
    const main = swarm('swarm', params.agents);
    swarms.push(main);
    const ready = await main.waitFor('ready');
    const connect1 = await readCounters(set);
    set.checkAlive();
    await sleep(params.settleSeconds * 1000);
    const sessions = await metric('outpost_gateway_connected_agents');
    const rssAfter = await Promise.all(metrics.map((url) => replicaRss(url, params.samples)));
    const leaseRows = await set.sql<{ gateway_id: string; n: number }>(
      'select gateway_id, count(*)::int as n from accounts where lease_expires_at > now() group by 1',
    );

    // The idle window.
    let ownQueries = 0;
    const poll = async () => {
      ownQueries += 2;
      return Promise.all([set.sql<Group>(LEASE_GROUPS), set.sql<Group>(TOUCH_GROUPS)]);
    };
    const [leases0, touches0] = await poll();
    const counters0 = await readCounters(set);
    const cpu0 = await metric('outpost_gateway_process_cpu_seconds_total');
    const t0 = performance.now();
    const leasePolls: Group[][] = [];
    const touchPolls: Group[][] = [];
    while (performance.now() - t0 < params.idleSeconds * 1000) {
      await sleep(1000);
      const [l, t] = await poll();
      leasePolls.push(l);
      touchPolls.push(t);
    }
    const cpu1 = await metric('outpost_gateway_process_cpu_seconds_total');
    const counters1 = await readCounters(set);
    ownQueries += 2; // the second counters reading (the first one's commits happened before counters0 was read)
    const seconds = (performance.now() - t0) / 1000;
    const renewals = countStatements(keysOf(leases0), leasePolls);
    const touches = countStatements(keysOf(touches0), touchPolls);
    const perSecond = (x: number) => x / seconds;
    const table = (name: string) => perSecond((counters1.tables[name] ?? 0) - (counters0.tables[name] ?? 0));
    const hotShare = (name: string) =>
      ((counters1.hot[name] ?? 0) - (counters0.hot[name] ?? 0)) / ((counters1.tables[name] ?? 0) - (counters0.tables[name] ?? 0));
    const commitsPerSecond = perSecond(counters1.xact - counters0.xact - ownQueries);
    const connectSeconds = Number(ready.seconds);

    const lostStreams = [...warm.events, ...main.events].filter((e) => e.event === 'lost').length;
    keepLogs = false;
    return {
      agents: params.agents,
      replicas: NAMES.map((name, i) => {
        const gained = sessions[i]! - sessionsBefore[i]!;
        return {
          name,
          sessions: sessions[i]!,
          leases: leaseRows.find((r) => r.gateway_id === name)?.n ?? 0,
          rssKiBPerAgent: (rssAfter[i]! - rssBefore[i]!) / gained / 1024,
          rssMiBBefore: rssBefore[i]! / 2 ** 20,
          rssMiBAfter: rssAfter[i]! / 2 ** 20,
          idleCpuPercent: ((cpu1[i]! - cpu0[i]!) / seconds) * 100,
          renewalStatementsPerSecond: perSecond(renewals.get(name)?.statements ?? 0),
          renewedRowsPerSecond: perSecond(renewals.get(name)?.rows ?? 0),
          touchStatementsPerSecond: perSecond(touches.get(name)?.statements ?? 0),
          touchedRowsPerSecond: perSecond(touches.get(name)?.rows ?? 0),
        };
      }),
      connectSeconds,
      lostStreams,
      connectRetries: Number(ready.retried ?? 0) + Number((await warm.waitFor('ready')).retried ?? 0),
      connectCommitsPerAgent: (connect1.xact - connect0.xact - 1 - commitsPerSecond * connectSeconds) / params.agents,
      connectInsertsPerAgent: (connect1.tupInserted - connect0.tupInserted) / params.agents,
      commitsPerSecond,
      hotUpdateShare: { accounts: hotShare('accounts'), agentSessions: hotShare('agent_sessions') },
      tupUpdatedPerSecond: perSecond(counters1.tupUpdated - counters0.tupUpdated),
      tableUpdatesPerSecond: { accounts: table('accounts'), agentSessions: table('agent_sessions'), replicas: table('replicas') },
      idleSeconds: seconds,
      swarmKiBPerAgent: readRss(main.process.pid) / (params.agents + params.warmupAgents) / 1024,
    };
  } finally {
    await Promise.all(swarms.map((s) => s.stop()));
    await set.close(keepLogs);
  }
}

/** Table rows of the replica-scale runs: per replica, then totals (no targets: the figures feed docs/scaling.md). */
export function replicaScaleRows(runs: ReplicaScaleResult[], agents: number): Row[] {
  const s = `replica scale, ${agents} idle agents on 3 replicas`;
  const replica = (name: string) => runs.map((r) => r.replicas.find((x) => x.name === name)!);
  const perReplica = NAMES.flatMap((name) => [
    figureRow(
      s,
      `${name}: streams held`,
      replica(name).map((x) => x.sessions),
      { digits: 0 },
    ),
    figureRow(
      s,
      `${name}: RSS per agent, KiB`,
      replica(name).map((x) => x.rssKiBPerAgent),
    ),
    figureRow(
      s,
      `${name}: CPU while idle, % of one core`,
      replica(name).map((x) => x.idleCpuPercent),
    ),
    figureRow(
      s,
      `${name}: lease rows renewed per second`,
      replica(name).map((x) => x.renewedRowsPerSecond),
    ),
    figureRow(
      s,
      `${name}: lease renewal statements per second`,
      replica(name).map((x) => x.renewalStatementsPerSecond),
      { digits: 2 },
    ),
    figureRow(
      s,
      `${name}: session rows touched per second`,
      replica(name).map((x) => x.touchedRowsPerSecond),
    ),
  ]);
  return [
    ...perReplica,
    figureRow(
      s,
      'all: RSS per agent, KiB (sum of growth / sum of streams gained)',
      runs.map((r) => {
        const grown = r.replicas.reduce((a, x) => a + (x.rssMiBAfter - x.rssMiBBefore) * 1024, 0);
        return grown / r.agents;
      }),
    ),
    figureRow(
      s,
      'all: CPU while idle, % of one core (sum)',
      runs.map((r) => r.replicas.reduce((a, x) => a + x.idleCpuPercent, 0)),
    ),
    figureRow(
      s,
      'Postgres commits per second while idle (pg_stat_database)',
      runs.map((r) => r.commitsPerSecond),
    ),
    figureRow(
      s,
      'Postgres rows updated per second while idle (pg_stat_database tup_updated)',
      runs.map((r) => r.tupUpdatedPerSecond),
    ),
    figureRow(
      s,
      'accounts rows updated per second (lease renewals; pg_stat_user_tables)',
      runs.map((r) => r.tableUpdatesPerSecond.accounts),
    ),
    figureRow(
      s,
      'agent_sessions rows updated per second (session touches; pg_stat_user_tables)',
      runs.map((r) => r.tableUpdatesPerSecond.agentSessions),
    ),
    figureRow(
      s,
      'share of the accounts updates that were HOT (no index entry written)',
      runs.map((r) => r.hotUpdateShare.accounts),
      { digits: 2 },
    ),
    figureRow(
      s,
      'share of the agent_sessions updates that were HOT',
      runs.map((r) => r.hotUpdateShare.agentSessions),
      { digits: 2 },
    ),
    figureRow(
      s,
      'Postgres commits per agent connected (connect phase, idle rate subtracted)',
      runs.map((r) => r.connectCommitsPerAgent),
    ),
    figureRow(
      s,
      'Postgres rows inserted per agent connected',
      runs.map((r) => r.connectInsertsPerAgent),
    ),
    figureRow(
      s,
      'agents connected per second (Hello → synced, 3 replicas)',
      runs.map((r) => r.agents / r.connectSeconds),
      { digits: 0 },
    ),
    figureRow(
      s,
      'stream openings retried (failed before the Welcome)',
      runs.map((r) => r.connectRetries),
      { digits: 0 },
    ),
    figureRow(
      s,
      'streams lost during the run',
      runs.map((r) => r.lostStreams),
      { digits: 0 },
    ),
  ];
}
