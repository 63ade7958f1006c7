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
 * then a heartbeat at the interval the Welcome sets. Nothing else: the gateway holds N idle streams.
 *
 * Prints JSON lines on stdout: `{"event":"progress","welcomed":K}` every second while connecting,
 * `{"event":"ready","agents":N,"retried":K,"seconds":S,"rssBytes":R}` once every stream is welcomed and its markers
 * acknowledged (K: streams that failed before being established and were opened again, up to 5 attempts each),
 * `{"event":"lost","agent":ID,"error":…}` when an established stream ends. Exits 1 with `{"event":"error"}` when a
 * stream cannot be established; on SIGTERM it closes every stream and exits 0.
 */
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { parseArgs } from 'node:util';
import { AgentService, SyncPhase, type ConnectRequest, type ConnectResponse } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { createRequestOutbox } from './request-outbox.js';

/** One simulated agent's stream. */
interface SimulatedAgent {
  id: string;
  /** Resolves once welcomed and both sync markers are acknowledged. */
  ready: Promise<void>;
  close(): void;
}

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
        } else if (m.case === 'ack' && m.value.sequence >= 2n && !established) {
          established = true;
          markReady();
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
  return {
    id,
    ready,
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
    },
  });
  const count = Number(values.agents);
  const concurrency = Number(values.concurrency);
  const urls = (values.grpc ?? '').split(',').filter(Boolean);
  if (urls.length === 0 || !Number.isInteger(count) || count <= 0 || !Number.isInteger(concurrency) || concurrency <= 0) {
    console.error('usage: agent-swarm.ts --grpc URL[,URL…] --agents N [--prefix NAME] [--concurrency C]');
    process.exit(2);
  }
  const print = (event: Record<string, unknown>) => process.stdout.write(`${JSON.stringify(event)}\n`);
  const agents: SimulatedAgent[] = [];
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
}

await main();
