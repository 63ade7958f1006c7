/**
 * An agent stream driven by the test: a real gRPC (HTTP/2) client of `AgentService.Connect` whose request messages the
 * test pushes one by one, and builders for the messages (Hello, events, sync markers, ConfigMaps). For tests of the
 * gateway's side of the protocol; a gateway to point it at comes from ./test-gateway.ts.
 */
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import {
  AgentService,
  ConnectRequestSchema,
  EventType,
  SyncPhase,
  type ConnectResponse,
  type Welcome,
} from '../src/gen/outpost/agent/v1/agent_pb.js';

export { Code, ConnectError, EventType, SyncPhase };

type RequestInit = MessageInitShape<typeof ConnectRequestSchema>;

/** One agent stream driven by the test. */
export interface TestAgentStream {
  send(message: RequestInit['message']): void;
  /** Half-closes the request side (a clean agent shutdown). */
  end(): void;
  /** The next non-heartbeat response; rejects with the stream's error, or when the stream ends first. */
  next(timeoutMs?: number): Promise<ConnectResponse>;
  /** Waits for an ack of at least `sequence`. */
  waitForAck(sequence: number, timeoutMs?: number): Promise<void>;
  /** Resolves when the stream ended: undefined for a clean end, the ConnectError otherwise. */
  readonly ended: Promise<ConnectError | undefined>;
  /** Every response received so far, heartbeats included. */
  readonly received: ConnectResponse[];
  /** Aborts the call (as a killed agent would). */
  abort(): void;
}

/** Opens `AgentService.Connect` over gRPC (HTTP/2) against the gateway's gRPC port (with a bearer token when given). */
export function openAgentStream(grpcUrl: string, options: { bearer?: string } = {}): TestAgentStream {
  const client = createClient(AgentService, createGrpcTransport({ baseUrl: grpcUrl }));
  const headers = options.bearer ? { authorization: `Bearer ${options.bearer}` } : undefined;
  const pending: RequestInit[] = [];
  let wake: (() => void) | undefined;
  let closed = false;
  const requests = (async function* () {
    for (;;) {
      const m = pending.shift();
      if (m) {
        yield create(ConnectRequestSchema, m);
        continue;
      }
      if (closed) return;
      await new Promise<void>((r) => (wake = r));
    }
  })();
  const abort = new AbortController();
  const reader = readResponses(client.connect(requests, { signal: abort.signal, headers }), () => {
    closed = true;
    wake?.();
  });
  return {
    send(message) {
      pending.push({ message } as RequestInit);
      const w = wake;
      wake = undefined;
      w?.();
    },
    end() {
      closed = true;
      wake?.();
    },
    ...reader,
    abort: () => abort.abort(),
  };
}

/** The response side of a test stream: what {@link TestAgentStream} reads, over any stream of responses. */
export type ResponseReader = Pick<TestAgentStream, 'next' | 'waitForAck' | 'ended' | 'received'>;

/** Reads `responses` into a {@link ResponseReader}; `onFinish` runs once they end or fail. */
export function readResponses(responses: AsyncIterable<ConnectResponse>, onFinish: () => void): ResponseReader {
  const received: ConnectResponse[] = [];
  const queue: ConnectResponse[] = [];
  let notify: (() => void) | undefined;
  let finished = false;
  let failure: ConnectError | undefined;
  const ended = (async () => {
    try {
      for await (const res of responses) {
        received.push(res);
        if (res.message.case !== 'heartbeat') queue.push(res);
        notify?.();
      }
    } catch (err) {
      failure = ConnectError.from(err);
    } finally {
      finished = true;
      onFinish();
      notify?.();
    }
    return failure;
  })();
  const next = async (timeoutMs = 30_000): Promise<ConnectResponse> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = queue.shift();
      if (m) return m;
      if (finished) throw failure ?? new Error('stream ended');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a response');
      await new Promise<void>((r) => {
        notify = r;
        setTimeout(r, left).unref();
      });
    }
  };
  return {
    next,
    async waitForAck(sequence, timeoutMs = 30_000) {
      for (;;) {
        const m = await next(timeoutMs);
        if (m.message.case === 'ack' && m.message.value.sequence >= BigInt(sequence)) return;
      }
    },
    ended,
    received,
  };
}

/**
 * A Hello for one or more accounts, all on cluster `https://cluster-<name>:6443` unless given otherwise; `extra`
 * overrides the zone or resumes a session.
 */
export function hello(
  agentId: string,
  accounts: { name: string; apiHost?: string; caFingerprint?: string }[],
  extra: { zone?: string; resumeSessionId?: string; resumeSessionToken?: string; connection?: number } = {},
): RequestInit['message'] {
  return {
    case: 'hello',
    value: {
      agentId,
      zone: 'test',
      version: 'test',
      replicas: 1,
      ...extra,
      accounts: accounts.map((a) => ({
        name: a.name,
        apiHost: a.apiHost ?? `https://cluster-${a.name}:6443`,
        caFingerprint: a.caFingerprint ?? 'ab'.repeat(32),
        kubernetesVersion: 'v1.30.0',
        kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
      })),
    },
  };
}

/** Sends a Hello and returns the Welcome. */
export async function connectAgent(
  stream: TestAgentStream,
  agentId: string,
  accounts: { name: string; apiHost?: string; caFingerprint?: string }[],
  extra: Parameters<typeof hello>[2] = {},
): Promise<Welcome> {
  stream.send(hello(agentId, accounts, extra));
  const res = await stream.next();
  if (res.message.case !== 'welcome') throw new Error(`expected a welcome, got ${res.message.case}`);
  return res.message.value;
}

/** A ConfigMap as the cluster would return it. */
export function configMap(
  name: string,
  rv: number,
  opts: { namespace?: string; labels?: Record<string, string>; data?: Record<string, string> } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: opts.namespace ?? 'default', uid: `uid-${name}`, resourceVersion: String(rv), labels: opts.labels },
    data: opts.data ?? { v: String(rv) },
  };
}

/** An event for an object (identity fields taken from it). */
export function event(account: string, type: EventType, obj: ReturnType<typeof configMap> | Record<string, any>, watchNamespace = '') {
  const o = obj as {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; uid?: string; resourceVersion: string };
  };
  return {
    account,
    type,
    apiVersion: o.apiVersion,
    kind: o.kind,
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
    uid: o.metadata.uid ?? '',
    resourceVersion: o.metadata.resourceVersion,
    objectJson: new TextEncoder().encode(JSON.stringify(obj)),
    watchNamespace,
  };
}

/** Builds an `events` message. */
export function events(sequence: number, list: ReturnType<typeof event>[]): RequestInit['message'] {
  return { case: 'events', value: { sequence: BigInt(sequence), events: list } };
}

/** Builds a `sync` marker message for ConfigMaps of the account. */
export function syncMarker(
  sequence: number,
  account: string,
  phase: SyncPhase,
  resourceVersion = '',
  count = 0,
  watchNamespace = '',
): RequestInit['message'] {
  return {
    case: 'sync',
    value: {
      sequence: BigInt(sequence),
      account,
      apiVersion: 'v1',
      kind: 'ConfigMap',
      watchNamespace,
      phase,
      resourceVersion,
      count: BigInt(count),
    },
  };
}
