/**
 * A swarm of simulated agents for the connection-scale benchmark, run as its own process:
 *
 *   node --import tsx bench/swarm/agent-swarm.ts --grpc http://127.0.0.1:9091 --agents 10000 [--prefix swarm] [--concurrency 100]
 *
 * `--grpc` may list several gateway replicas, comma-separated: agent K then dials the (K mod n)-th (round robin, no
 * balancer: each agent's replica is fixed).
 *
 * Each simulated agent is a real `AgentService.Connect` stream on an HTTP/2 connection of its own (its own
 * Http2SessionManager, pinging every 15 s like the agent's): a Hello for one account on a cluster of its own, the
 * START/END sync markers of an empty ConfigMap list (so the account is cached and synced like an idle cluster's),
 * then a heartbeat at the interval the Welcome sets. Nothing else: the gateway holds N idle streams — unless
 * `--churn-ms M --churn-seconds S [--churn-after-ms D]` (the fleet-churn scenario): D ms after every stream is ready, each agent changes one
 * ConfigMap of its cluster every M ms (one event batch; its first change at a random phase within the first M ms)
 * for S seconds, and the swarm measures each change from its send to the gateway's ack (the ack follows the commit
 * holding it: change → committed row).
 *
 * Prints JSON lines on stdout: `{"event":"progress","welcomed":K}` every second while connecting,
 * `{"event":"ready","agents":N,"retried":K,"seconds":S,"rssBytes":R}` once every stream is welcomed and its markers
 * acknowledged (K: streams that failed before being established and were opened again, up to 5 attempts each),
 * `{"event":"lost","agent":ID,"error":…}` when an established stream ends; with churn, `{"event":"churn-start"}` when
 * it starts, `{"event":"churn-end","sent":N}` when it stops sending, and `{"event":"churn","sent":N,"acked":K,"latencyMs":{p50,p90,p99,max},"delayed":D}` when it ends and every
 * change sent was acknowledged or 30 s passed (D: changes acknowledged more than 1 s after they were sent). Exits 1
 * with `{"event":"error"}` when a stream cannot be established; on SIGTERM it closes every stream and exits 0.
 */
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { parseArgs } from 'node:util';
import { AgentService, EventType, SyncPhase, type ConnectRequest, type ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { createRequestOutbox } from './request-outbox.js';

/** One simulated agent's stream. */
interface SimulatedAgent {
  id: string;
  /** Resolves once welcomed and both sync markers are acknowledged. */
  ready: Promise<void>;
  /** Sends one change of the agent's ConfigMap (an event batch of one MODIFIED event); its latency goes to `onAcked`. */
  change(): void;
  /** Changes sent and not yet acknowledged. */
  readonly unacked: number;
  close(): void;
}

/** Where every change's send → ack time goes (ms). */
const latencies: number[] = [];

type RequestMessage = ConnectRequest['message'];

/** Attempts to establish one simulated agent's stream before the swarm gives up (exit 1). */
const MAX_ATTEMPTS = 5;

/** Opens one simulated agent: its own connection, Hello, sync markers, heartbeats. */
function startAgent(
  client: Client<typeof AgentService>,
  manager: Http2SessionManager,
  id: string,
  onLost: (err: unknown) => void,
): SimulatedAgent {
  const outbox = createRequestOutbox();
  const send = outbox.push;
  const abort = new AbortController();
  let heartbeat: NodeJS.Timeout | undefined;
  let markReady!: () => void;
  let fail!: (err: unknown) => void;
  const ready = new Promise<void>((resolve, reject) => {
    markReady = resolve;
    fail = reject;
  });
  let established = false;
  const account = id;
  let sequence = 2n;
  let version = 1;
  /** Send times of the changes not yet acknowledged, by sequence. */
  const pending = new Map<bigint, number>();
  const kind = { apiVersion: 'v1', kind: 'ConfigMap', watchNamespace: '' };
  send({
    case: 'hello',
    value: {
      agentId: id,
      zone: 'swarm',
      version: 'swarm',
      replicas: 1,
      accounts: [
        {
          name: account,
          apiHost: `https://${id}.swarm.example:6443`,
          caFingerprint: 'cd'.repeat(32),
          kubernetesVersion: 'v1.30.0',
          kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
        },
      ],
    },
  } as RequestMessage);
  void (async () => {
    try {
      for await (const res of client.connect(outbox.requests, {
        signal: abort.signal,
        headers: { 'x-outpost-agent-id': id },
      }) as AsyncIterable<ConnectResponse>) {
        const m = res.message;
        if (m.case === 'welcome') {
          const seconds = m.value.heartbeatIntervalSeconds || 20;
          heartbeat = setInterval(
            () => send({ case: 'heartbeat', value: { agentId: id, sentAtUnixMs: BigInt(Date.now()) } } as RequestMessage),
            seconds * 1000,
          );
          send({ case: 'sync', value: { sequence: 1n, account, ...kind, phase: SyncPhase.START } } as RequestMessage);
          send({
            case: 'sync',
            value: { sequence: 2n, account, ...kind, phase: SyncPhase.END, resourceVersion: '1', count: 0n },
          } as RequestMessage);
        } else if (m.case === 'ack') {
          if (m.value.sequence >= 2n && !established) {
            established = true;
            markReady();
          }
          const now = performance.now();
          for (const [seq, sentAt] of pending) {
            if (seq > m.value.sequence) break;
            latencies.push(now - sentAt);
            pending.delete(seq);
          }
        }
      }
      if (!outbox.closed) throw new Error('the gateway ended the stream');
    } catch (err) {
      if (outbox.closed) return;
      if (established) onLost(err);
      else fail(err);
    } finally {
      clearInterval(heartbeat);
    }
  })();
  const object = (rv: number) =>
    new TextEncoder().encode(
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'churn', namespace: 'default', uid: `${id}-churn`, resourceVersion: String(rv) },
        data: { version: String(rv) },
      }),
    );
  return {
    id,
    ready,
    get unacked() {
      return pending.size;
    },
    change() {
      sequence += 1n;
      version += 1;
      pending.set(sequence, performance.now());
      send({
        case: 'events',
        value: {
          sequence,
          events: [
            {
              account,
              type: version === 2 ? EventType.ADDED : EventType.MODIFIED,
              apiVersion: 'v1',
              kind: 'ConfigMap',
              namespace: 'default',
              name: 'churn',
              uid: `${id}-churn`,
              resourceVersion: String(version),
              objectJson: object(version),
              watchNamespace: '',
            },
          ],
        },
      } as RequestMessage);
    },
    close: () => {
      outbox.close();
      clearInterval(heartbeat);
      abort.abort();
      manager.abort();
    },
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      grpc: { type: 'string' },
      agents: { type: 'string' },
      prefix: { type: 'string', default: 'swarm' },
      concurrency: { type: 'string', default: '100' },
      'churn-ms': { type: 'string', default: '0' },
      'churn-seconds': { type: 'string', default: '0' },
      'churn-after-ms': { type: 'string', default: '0' },
    },
  });
  const churnMs = Number(values['churn-ms']);
  const churnSeconds = Number(values['churn-seconds']);
  const churnAfterMs = Number(values['churn-after-ms']);
  const count = Number(values.agents);
  const concurrency = Number(values.concurrency);
  const urls = (values.grpc ?? '').split(',').filter(Boolean);
  if (urls.length === 0 || !Number.isInteger(count) || count <= 0 || !Number.isInteger(concurrency) || concurrency <= 0) {
    console.error('usage: agent-swarm.ts --grpc URL[,URL…] --agents N [--prefix NAME] [--concurrency C]');
    process.exit(2);
  }
  const print = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
  const agents: SimulatedAgent[] = [];
  /** The agents whose stream was established (a retried one's failed attempts are only in `agents`). */
  const established: SimulatedAgent[] = [];
  process.on('SIGTERM', () => {
    for (const agent of agents) agent.close();
    setTimeout(() => process.exit(0), 200);
  });
  const started = performance.now();
  let welcomed = 0;
  let retried = 0;
  const progress = setInterval(() => print({ event: 'progress', welcomed }), 1000);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const k = next++;
      const id = `${values.prefix}-${k}`;
      const url = urls[k % urls.length]!;
      // A stream not established (refused or cancelled by an overloaded gateway) is tried again, as a real agent
      // would after its backoff: at most MAX_ATTEMPTS times, each retry counted.
      for (let attempt = 1; ; attempt++) {
        const manager = new Http2SessionManager(url, { pingIntervalMs: 15_000, pingTimeoutMs: 15_000 });
        const client = createClient(AgentService, createGrpcTransport({ baseUrl: url, sessionManager: manager }));
        const agent = startAgent(client, manager, id, (err) =>
          print({ event: 'lost', agent: id, error: String((err as Error)?.message ?? err) }),
        );
        agents.push(agent);
        try {
          await agent.ready;
          established.push(agent);
          break;
        } catch (err) {
          agent.close();
          if (attempt >= MAX_ATTEMPTS) throw err;
          retried++;
          await new Promise((resolve) => setTimeout(resolve, 1000 * attempt));
        }
      }
      welcomed++;
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  } catch (err) {
    print({ event: 'error', error: String((err as Error)?.message ?? err) });
    process.exit(1);
  } finally {
    clearInterval(progress);
  }
  print({ event: 'ready', agents: count, retried, seconds: (performance.now() - started) / 1000, rssBytes: process.memoryUsage.rss() });
  if (churnMs > 0 && churnSeconds > 0) {
    await new Promise((resolve) => setTimeout(resolve, churnAfterMs));
    await churn(established, churnMs, churnSeconds, print);
  }
}

/** Each agent changes its ConfigMap every `everyMs` (random phase) for `seconds`; then reports the latencies. */
async function churn(agents: SimulatedAgent[], everyMs: number, seconds: number, print: (e: Record<string, unknown>) => void) {
  const live = agents;
  const timers: NodeJS.Timeout[] = [];
  let sent = 0;
  print({ event: 'churn-start' });
  const t0 = performance.now();
  for (const agent of live) {
    const phase = Math.random() * everyMs;
    timers.push(
      setTimeout(() => {
        const tick = () => {
          if (performance.now() - t0 >= seconds * 1000) return;
          agent.change();
          sent++;
        };
        tick();
        timers.push(setInterval(tick, everyMs));
      }, phase),
    );
  }
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  for (const t of timers) clearTimeout(t);
  print({ event: 'churn-end', sent });
  const deadline = performance.now() + 30_000;
  while (live.some((a) => a.unacked > 0) && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  print({
    event: 'churn',
    sent,
    acked: latencies.length,
    latencyMs: { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? 0 },
    delayed: latencies.filter((ms) => ms > 1000).length,
  });
}

await main();
