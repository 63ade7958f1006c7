/**
 * A fleet of simulated agents in the test process, as the benchmarks' swarm (bench/swarm/agent-swarm.ts) opens them:
 * each a real `AgentService.Connect` stream on an HTTP/2 connection of its own, a Hello for its accounts in its zone,
 * then a heartbeat at the interval the Welcome sets (so the gateway's dead-peer check never ends it). Unlike the
 * swarm, the test chooses the zone and may send objects — Deployments with a status the gateway's status rules
 * classify — to give the accounts a workload health. For dashboard tests that need hundreds of accounts without a
 * cluster behind each.
 */
import type { Welcome } from '../src/gen/outpost/agent/v1/agent_pb.js';
import { EventType, event, events, openAgentStream, type TestAgentStream } from './test-agent-stream.js';

/** One simulated agent. */
export interface SimulatedAgent {
  id: string;
  welcome: Welcome;
  stream: TestAgentStream;
  /** Sends objects as ADDED events of `account` in one batch and waits for its ack. */
  add(account: string, objects: Record<string, unknown>[]): Promise<void>;
  /** Ends the stream cleanly (as an agent shutting down): the gateway releases its accounts. */
  close(): Promise<void>;
}

/** What a simulated agent announces. */
export interface SimulatedAgentOptions {
  grpcUrl: string;
  id: string;
  zone: string;
  accounts: string[];
}

/** The kinds a simulated agent reports: ConfigMaps, and Deployments for the workloads it may send. */
const KINDS = [
  { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments', namespaced: true },
];

/** Opens one simulated agent and resolves once it is welcomed (its verdicts are in `welcome.accounts`). */
export async function startSimulatedAgent(options: SimulatedAgentOptions): Promise<SimulatedAgent> {
  const stream = openAgentStream(options.grpcUrl);
  stream.send({
    case: 'hello',
    value: {
      agentId: options.id,
      zone: options.zone,
      version: 'simulated',
      replicas: 1,
      accounts: options.accounts.map((name) => ({
        name,
        apiHost: `https://${name}.simulated.example:6443`,
        caFingerprint: 'cd'.repeat(32),
        kubernetesVersion: 'v1.30.0',
        kinds: KINDS,
      })),
    },
  });
  const first = await stream.next();
  if (first.message.case !== 'welcome') {
    stream.abort();
    throw new Error(`agent ${options.id}: expected a welcome, got ${first.message.case}`);
  }
  const welcome = first.message.value;
  const heartbeat = setInterval(
    () => stream.send({ case: 'heartbeat', value: { agentId: options.id, sentAtUnixMs: BigInt(Date.now()) } }),
    (welcome.heartbeatIntervalSeconds || 10) * 1000,
  );
  heartbeat.unref();
  let sequence = 0;
  return {
    id: options.id,
    welcome,
    stream,
    async add(account, objects) {
      const list = objects.map((o) => event(account, EventType.ADDED, o));
      stream.send(events(++sequence, list));
      await stream.waitForAck(sequence);
    },
    async close() {
      clearInterval(heartbeat);
      stream.end();
      await stream.ended;
    },
  };
}

/**
 * Starts `count` agents, `concurrency` at a time (each welcomed before the next of its lane starts), agent `k` made
 * by `optionsOf(k)`; on any failure closes those started and rethrows.
 */
export async function startSimulatedAgents(
  count: number,
  concurrency: number,
  optionsOf: (k: number) => SimulatedAgentOptions,
): Promise<SimulatedAgent[]> {
  const agents: SimulatedAgent[] = new Array(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const k = next++;
      agents[k] = await startSimulatedAgent(optionsOf(k));
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  } catch (err) {
    await Promise.allSettled(agents.filter(Boolean).map((a) => a.close()));
    throw err;
  }
  return agents;
}
