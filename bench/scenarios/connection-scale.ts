/**
 * Scenario 4 — connection scale: N simulated agents (one swarm process, one HTTP/2 connection and one real
 * `Connect` stream each, with heartbeats; see bench/swarm/agent-swarm.ts) idle on one gateway replica (Postgres).
 * Gateway memory per agent = growth of its RSS (and V8 heap) from a warmed-up state holding a few agents to the state
 * holding N more, divided by N; CPU = the gateway's CPU time over an idle window. Baseline in the same run: the same
 * swarm against a bare connect-node server that only answers the stream (bench/baselines/bare-agent-server.ts): what
 * serving the stream through connect-node costs before any work of Outpost's own. The gateway is measured twice: as
 * it starts by default, and under `node --optimize-for-size` (V8 then keeps less heap headroom).
 */
import { figureRow, type Row } from '../rows.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '../../testkit/databases.js';
import {
  readCpuSeconds,
  readMemory,
  readRss,
  scrapeMetric,
  startGateway,
  startJsonChild,
  startSwarm,
  type BenchGateway,
  type JsonChild,
} from '../processes.js';

/** Parameters of one run. */
export interface ConnectionScaleParams {
  postgresUrl: string;
  agents: number;
  /** Agents connected before the first reading (warms up code paths and pools; not counted). */
  warmupAgents: number;
  /** Gateway heartbeat interval (the gateway's default is 10 s). */
  heartbeatSeconds: number;
  /** Wait after the swarm is connected before reading memory (at least one heartbeat interval). */
  settleSeconds: number;
  /** Memory readings (200 ms apart) whose median is taken. */
  samples: number;
  /** The idle window over which CPU is measured. */
  idleSeconds: number;
  /** Streams being opened at once by the swarm. */
  connectConcurrency: number;
}

/** Memory growth of one server for N agents. */
interface ServerFootprint {
  /** RSS growth per agent, KiB. */
  rssKiBPerAgent: number;
  /** V8 heap-used growth per agent, KiB (NaN when the server exposes no metrics). */
  heapKiBPerAgent: number;
  rssMiBBefore: number;
  rssMiBAfter: number;
  /** CPU used while idle with N agents, as a percentage of one core. */
  idleCpuPercent: number;
  /** Seconds the swarm took to open every stream (Hello → Welcome → markers acknowledged). */
  connectSeconds: number;
}

/** Figures of the scenario. */
export interface ConnectionScaleResult {
  agents: number;
  gateway: ServerFootprint;
  /** The gateway started with `node --optimize-for-size` (V8 keeps less heap headroom, at some CPU cost). */
  gatewayOptimizedForSize: ServerFootprint;
  /** The bare connect-node server holding the same streams. */
  bare: ServerFootprint;
  /** gateway / bare, RSS per agent. */
  ratioToBare: number;
  /** Agents the gateway reported connected (outpost_gateway_connected_agents) at the reading. */
  gatewayConnectedAgents: number;
  /** Streams that ended during the run (should be 0). */
  lostStreams: number;
  /** The swarm's own RSS per agent (client side, KiB). */
  swarmKiBPerAgent: number;
}

/** Connects the warm-up and the measured swarms to `grpcUrl` and reads the server's footprint. */
async function measure(
  params: ConnectionScaleParams,
  grpcUrl: string,
  pid: number | undefined,
  heap: (() => Promise<number>) | undefined,
  swarms: JsonChild[],
): Promise<{ footprint: ServerFootprint; lost: number; swarmRss: number }> {
  const settle = () => sleep(params.settleSeconds * 1000);
  const swarm = (prefix: string, agents: number) => startSwarm(grpcUrl, prefix, agents, params.connectConcurrency);
  const warm = swarm('warm', params.warmupAgents);
  swarms.push(warm);
  await warm.waitFor('ready');
  await settle();
  const before = await readMemory(pid, params.samples, heap);
  const main = swarm('swarm', params.agents);
  swarms.push(main);
  const ready = await main.waitFor('ready');
  await settle();
  const after = await readMemory(pid, params.samples, heap);
  const cpu0 = readCpuSeconds(pid);
  await sleep(params.idleSeconds * 1000);
  const cpu1 = readCpuSeconds(pid);
  const lost = [...warm.events, ...main.events].filter((e) => e.event === 'lost').length;
  return {
    footprint: {
      rssKiBPerAgent: (after.rss - before.rss) / params.agents / 1024,
      heapKiBPerAgent: (after.heap - before.heap) / params.agents / 1024,
      rssMiBBefore: before.rss / 2 ** 20,
      rssMiBAfter: after.rss / 2 ** 20,
      idleCpuPercent: ((cpu1 - cpu0) / params.idleSeconds) * 100,
      connectSeconds: Number(ready.seconds),
    },
    lost,
    swarmRss: readRss(main.process.pid),
  };
}

/** Runs the scenario once: the bare server first, then the gateway, each with fresh swarms. */
export async function runConnectionScale(params: ConnectionScaleParams): Promise<ConnectionScaleResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const swarms: JsonChild[] = [];
  const stopSwarms = async () => {
    await Promise.all(swarms.map((s) => s.stop()));
    swarms.length = 0;
  };

  const bareServer = startJsonChild('./baselines/bare-agent-server.ts', [], { BARE_HEARTBEAT_SECONDS: String(params.heartbeatSeconds) });
  let bare;
  try {
    const { port } = await bareServer.waitFor('listening', 60_000);
    bare = await measure(params, `http://127.0.0.1:${String(port)}`, bareServer.process.pid, undefined, swarms);
  } finally {
    await stopSwarms();
    await bareServer.stop();
  }

  const gatewayRun = async (nodeFlags: string[]) => {
    const database = await createTestDatabase('postgres');
    let gateway: BenchGateway | undefined;
    try {
      gateway = await startGateway(
        database.url,
        {
          OUTPOST_GATEWAY_AGENTS_HEARTBEAT_INTERVAL_SECONDS: String(params.heartbeatSeconds),
          OUTPOST_GATEWAY_AGENTS_DEAD_AFTER_SECONDS: String(params.heartbeatSeconds * 3),
        },
        nodeFlags,
      );
      const metrics = `${gateway.httpUrl}/metrics`;
      const heap = () => scrapeMetric(metrics, 'outpost_gateway_nodejs_heap_size_used_bytes');
      const measured = await measure(params, `http://127.0.0.1:${gateway.grpcPort}`, gateway.child.process.pid, heap, swarms);
      const connected = await scrapeMetric(metrics, 'outpost_gateway_connected_agents');
      return { ...measured, connected };
    } finally {
      await stopSwarms();
      await gateway?.child.stop();
      await database.drop();
    }
  };
  const ours = await gatewayRun([]);
  const small = await gatewayRun(['--optimize-for-size']);
  return {
    agents: params.agents,
    gateway: ours.footprint,
    gatewayOptimizedForSize: small.footprint,
    bare: bare.footprint,
    ratioToBare: ours.footprint.rssKiBPerAgent / bare.footprint.rssKiBPerAgent,
    gatewayConnectedAgents: ours.connected,
    lostStreams: ours.lost + small.lost + bare.lost,
    swarmKiBPerAgent: ours.swarmRss / (params.agents + params.warmupAgents) / 1024,
  };
}

/** Table rows of the connection-scale runs; the memory target is judged at 10,000 agents or more. */
export function connectionScaleRows(runs: ConnectionScaleResult[], agents: number): Row[] {
  const s = `connection scale, ${agents} idle agents`;
  const judged = agents >= 10_000;
  return [
    figureRow(
      s,
      'gateway RSS per agent, KiB',
      runs.map((r) => r.gateway.rssKiBPerAgent),
      { target: '≤ 50 KB (10,000 agents)', meets: (m) => m * 1024 <= 50_000, judged },
    ),
    figureRow(
      s,
      'gateway V8 heap used per agent, KiB',
      runs.map((r) => r.gateway.heapKiBPerAgent),
    ),
    figureRow(
      s,
      'gateway under node --optimize-for-size: RSS per agent, KiB',
      runs.map((r) => r.gatewayOptimizedForSize?.rssKiBPerAgent ?? NaN),
      {
        target: '≤ 50 KB (10,000 agents)',
        meets: (m) => m * 1024 <= 50_000,
        judged,
      },
    ),
    figureRow(
      s,
      'gateway under node --optimize-for-size: CPU while idle, % of one core',
      runs.map((r) => r.gatewayOptimizedForSize?.idleCpuPercent ?? NaN),
    ),
    figureRow(
      s,
      'bare connect-node server RSS per agent, KiB (baseline)',
      runs.map((r) => r.bare.rssKiBPerAgent),
    ),
    figureRow(
      s,
      'ratio gateway / bare server',
      runs.map((r) => r.ratioToBare),
      { digits: 2 },
    ),
    figureRow(
      s,
      'gateway CPU while idle, % of one core',
      runs.map((r) => r.gateway.idleCpuPercent),
    ),
    figureRow(
      s,
      'agents connected per second (Hello → synced)',
      runs.map((r) => r.agents / r.gateway.connectSeconds),
      { digits: 0 },
    ),
    figureRow(
      s,
      'streams lost during the run',
      runs.map((r) => r.lostStreams),
      { digits: 0, target: '0', meets: (m) => m === 0 },
    ),
  ];
}
