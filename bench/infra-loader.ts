/**
 * Fills a gateway's cache as agents do, for the spinnaker-infra benchmark: one simulated agent per account, each a
 * real `AgentService.Connect` stream on its own HTTP/2 connection (as bench/swarm/agent-swarm.ts opens them), whose
 * Hello announces the fixture's kinds and which then sends a full list of each kind — START marker, ADDED events in
 * batches of at most 500 events or 1 MiB (the agent's defaults), END marker — keeping at most the Welcome's
 * `max_unacked` messages in flight, and heartbeats at the Welcome's interval. So every object goes through the
 * gateway's own write path (decoding, the batch upsert, the generated columns and indexes, list pruning), not through
 * INSERTs of the benchmark's. The streams stay open (idle, heartbeating) until closed, so the accounts stay served.
 */
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import {
  AgentService,
  EventType,
  SyncPhase,
  Verdict,
  type ConnectRequest,
  type ConnectResponse,
} from '../src/gen/outpost/agent/v1/agent_pb.js';
import { INFRA_KINDS, type KubeObject } from './infra-fixture.js';
import { createRequestOutbox } from './swarm/request-outbox.js';

type RequestMessage = ConnectRequest['message'];

const BATCH_MAX_EVENTS = 500;
const BATCH_MAX_BYTES = 1024 * 1024;

/** The simulated agents, loaded. */
export interface LoadedAccounts {
  objects: number;
  /** All streams welcomed → the last END marker acknowledged (every object committed). */
  seconds: number;
  /** Throws when a stream ended without being closed (its account would no longer be served). */
  check(): void;
  /** Closes every stream. */
  close(): void;
}

/** One simulated agent's stream: send with flow control, resolve on acks. */
interface AgentStream {
  welcome: Promise<void>;
  /** Why the stream ended, when it did without being closed. */
  failure(): Error | undefined;
  /** Sends a data message once fewer than max_unacked are in flight; returns its sequence. */
  send(message: (sequence: bigint) => RequestMessage): Promise<bigint>;
  /** Resolves once `sequence` is acknowledged. */
  acked(sequence: bigint): Promise<void>;
  close(): void;
}

function openStream(grpcUrl: string, account: string): AgentStream {
  const manager = new Http2SessionManager(grpcUrl, { pingIntervalMs: 15_000, pingTimeoutMs: 15_000 });
  const client = createClient(AgentService, createGrpcTransport({ baseUrl: grpcUrl, sessionManager: manager }));
  const outbox = createRequestOutbox();
  const push = outbox.push;
  const abort = new AbortController();
  let sequence = 0n;
  let ackedUpTo = 0n;
  let maxUnacked = 1;
  let failure: Error | undefined;
  const waiters = new Set<() => void>();
  const notify = () => {
    for (const w of [...waiters]) w();
  };
  const until = async (ready: () => boolean) => {
    while (!ready()) {
      if (failure) throw failure;
      await new Promise<void>((resolve) => {
        const w = () => {
          waiters.delete(w);
          resolve();
        };
        waiters.add(w);
      });
    }
    if (failure) throw failure;
  };
  let heartbeat: NodeJS.Timeout | undefined;
  let welcomed = false;
  const agentId = `sim-${account}`;
  push({
    case: 'hello',
    value: {
      agentId,
      zone: 'bench',
      version: 'bench',
      replicas: 1,
      accounts: [
        {
          name: account,
          apiHost: `https://${account}.clusters.example:6443`,
          caFingerprint: 'cd'.repeat(32),
          kubernetesVersion: 'v1.30.0',
          kinds: INFRA_KINDS.map((k) => ({ ...k, namespaced: true })),
        },
      ],
    },
  } as RequestMessage);
  void (async () => {
    try {
      for await (const res of client.connect(outbox.requests, {
        signal: abort.signal,
        headers: { 'x-outpost-agent-id': agentId },
      }) as AsyncIterable<ConnectResponse>) {
        const m = res.message;
        if (m.case === 'welcome') {
          const verdict = m.value.accounts.find((a) => a.account === account);
          if (verdict?.verdict !== Verdict.CACHING) throw new Error(`account ${account}: verdict ${JSON.stringify(verdict)}`);
          maxUnacked = Math.max(1, m.value.maxUnacked);
          heartbeat = setInterval(
            () => push({ case: 'heartbeat', value: { agentId, sentAtUnixMs: BigInt(Date.now()) } } as RequestMessage),
            (m.value.heartbeatIntervalSeconds || 10) * 1000,
          );
          welcomed = true;
          notify();
        } else if (m.case === 'ack' && m.value.sequence > ackedUpTo) {
          ackedUpTo = m.value.sequence;
          notify();
        }
      }
      if (!outbox.closed) throw new Error('the gateway ended the stream');
    } catch (err) {
      if (!outbox.closed) failure = new Error(`simulated agent ${account}: ${(err as Error).message}`);
      notify();
    } finally {
      clearInterval(heartbeat);
    }
  })();
  return {
    welcome: until(() => welcomed),
    failure: () => failure,
    async send(build) {
      await until(() => sequence - ackedUpTo < BigInt(maxUnacked));
      sequence++;
      push(build(sequence));
      return sequence;
    },
    acked: (s) => until(() => ackedUpTo >= s),
    close() {
      outbox.close();
      clearInterval(heartbeat);
      abort.abort();
      manager.abort();
    },
  };
}

/** Sends one account's full lists, kind by kind; resolves once the last END marker is acknowledged. */
async function listAccount(stream: AgentStream, account: string, objects: readonly KubeObject[]): Promise<void> {
  const encoder = new TextEncoder();
  let last = 0n;
  for (const { apiVersion, kind } of INFRA_KINDS) {
    const scope = { account, apiVersion, kind, watchNamespace: '' };
    const mine = objects.filter((o) => o.kind === kind);
    await stream.send((sequence) => ({ case: 'sync', value: { sequence, ...scope, phase: SyncPhase.START } }) as RequestMessage);
    let batch: ReturnType<typeof toEvent>[] = [];
    let bytes = 0;
    const flush = async () => {
      const events = batch;
      batch = [];
      bytes = 0;
      await stream.send((sequence) => ({ case: 'events', value: { sequence, events } }) as RequestMessage);
    };
    const toEvent = (o: KubeObject) => ({
      account,
      type: EventType.ADDED,
      apiVersion: o.apiVersion,
      kind: o.kind,
      namespace: o.metadata.namespace,
      name: o.metadata.name,
      uid: o.metadata.uid,
      resourceVersion: o.metadata.resourceVersion,
      objectJson: encoder.encode(JSON.stringify(o)),
      watchNamespace: '',
    });
    for (const o of mine) {
      const event = toEvent(o);
      if (batch.length > 0 && (batch.length >= BATCH_MAX_EVENTS || bytes + event.objectJson.length > BATCH_MAX_BYTES)) await flush();
      batch.push(event);
      bytes += event.objectJson.length;
    }
    if (batch.length > 0) await flush();
    const listVersion = mine.reduce((m, o) => Math.max(m, Number(o.metadata.resourceVersion)), 1);
    last = await stream.send(
      (sequence) =>
        ({
          case: 'sync',
          value: { sequence, ...scope, phase: SyncPhase.END, resourceVersion: String(listVersion), count: BigInt(mine.length) },
        }) as RequestMessage,
    );
  }
  await stream.acked(last);
}

/**
 * Opens a simulated agent per account against the gateway's gRPC URL, waits for every Welcome, then lists every
 * account's objects at once and resolves when all are committed. On failure every stream is closed.
 */
export async function loadAccounts(
  grpcUrl: string,
  accounts: readonly { account: string; objects: KubeObject[] }[],
): Promise<LoadedAccounts> {
  const streams = accounts.map((a) => openStream(grpcUrl, a.account));
  const close = () => {
    for (const s of streams) s.close();
  };
  try {
    await Promise.all(streams.map((s) => s.welcome));
    const started = performance.now();
    await Promise.all(accounts.map((a, i) => listAccount(streams[i]!, a.account, a.objects)));
    const seconds = (performance.now() - started) / 1000;
    const check = () => {
      const failed = streams.find((s) => s.failure());
      if (failed) throw failed.failure()!;
    };
    return { objects: accounts.reduce((n, a) => n + a.objects.length, 0), seconds, check, close };
  } catch (err) {
    close();
    throw err;
  }
}
