/**
 * Test helpers for operations: an agent that answers operations the way the real agent does (each id runs at most
 * once; a redelivered id gets its stored result again, or nothing while it is still running; results produced while
 * the stream is down wait in an outbox and go out on the next stream), plus Connect JSON helpers.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import type { ConnectRequestSchema } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';

type RequestInit = MessageInitShape<typeof ConnectRequestSchema>;
type ResultInit = Extract<NonNullable<RequestInit['message']>, { case: 'operationResult' }>['value'];

/** Decides an operation's result; may wait (to hold an operation in flight). */
export type Answer = (op: Operation) => ResultInit | Promise<ResultInit>;

/**
 * A success shaped as the protocol says for the operation's type (docs/agent-protocol.md, "Results"): the target
 * object for get, patch and rollout, its Scale for scale, the deleted reference for delete, an applied ConfigMap
 * for apply, and so on.
 */
export function okResult(op: Operation): ResultInit {
  const base = {
    id: op.id,
    account: op.account,
    success: true,
    statusCode: 200,
    message: 'ok',
    duration: { seconds: 0n, nanos: 2_000_000 },
    kubernetesDuration: { seconds: 0n, nanos: 1_000_000 },
  };
  const spec = op.spec;
  const target = (s: { apiVersion?: string; kind?: string; namespace?: string; name?: string }) => ({
    apiVersion: s.apiVersion || 'v1',
    kind: s.kind || 'ConfigMap',
    metadata: { name: s.name || 'cm', namespace: s.namespace || 'default' },
  });
  switch (spec.case) {
    case 'get':
    case 'patch':
    case 'rollout':
      return { ...base, objects: [target(spec.value)] };
    case 'scale':
      return {
        ...base,
        objects: [
          {
            apiVersion: 'autoscaling/v1',
            kind: 'Scale',
            metadata: { name: spec.value.name, namespace: spec.value.namespace },
            spec: { replicas: spec.value.replicas },
          },
        ],
      };
    case 'delete':
      return {
        ...base,
        deleted: spec.value.name ? [`${spec.value.kind || 'ConfigMap'}/${spec.value.namespace || 'default'}/${spec.value.name}`] : [],
      };
    case 'list':
      return { ...base, objects: [] };
    case 'logs':
      return { ...base, logs: 'log line' };
    case 'history':
      return { ...base, revisions: [] };
    default:
      return { ...base, objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${op.id}`, namespace: 'default' } }] };
  }
}

export interface OperationAgent {
  readonly agentId: string;
  /** Current stream (replaced by {@link reconnect}). */
  readonly stream: TestAgentStream;
  /** Every operation message received, redeliveries included, in order. */
  readonly received: Operation[];
  /** How many times each id was executed (must stay ≤ 1). */
  readonly runs: Map<string, number>;
  /** Sends a raw result on the current stream (duplicates, late results). */
  sendResult(result: ResultInit): void;
  /** Kills the current stream (as a cut connection would). */
  cut(): Promise<void>;
  /**
   * Opens a new stream with the same agent id and accounts (to another gateway URL when given), resuming the last
   * session with its token as the real agent does — or, with `resume: false`, as a restarted agent process that lost
   * its session token.
   */
  reconnect(grpcUrl?: string, opts?: { resume?: boolean }): Promise<void>;
  /** The session of the current stream (its Welcome's id and token). */
  readonly session: { id: string; token: string };
  /** Resolves when an operation with this id was received at least `times` times. */
  waitReceived(id: string, times?: number, timeoutMs?: number): Promise<Operation>;
  /** Half-closes and waits for the end. */
  close(): Promise<void>;
}

/** Connects an agent; `answer` defaults to {@link okResult}. `onOperation` runs before the answer (e.g. DB checks). */
export async function startOperationAgent(
  grpcUrl: string,
  agentId: string,
  accounts: string[],
  opts: { answer?: Answer; onOperation?: (op: Operation) => void | Promise<void>; bearer?: string } = {},
): Promise<OperationAgent> {
  const answer = opts.answer ?? okResult;
  const results = new Map<string, ResultInit | 'running'>();
  const outbox: ResultInit[] = [];
  const received: Operation[] = [];
  const runs = new Map<string, number>();
  const waiters = new Set<() => void>();
  let stream!: TestAgentStream;
  let live = false;

  const send = (r: ResultInit) => {
    if (live) stream.send({ case: 'operationResult', value: r });
    else outbox.push(r);
  };
  const run = async (op: Operation) => {
    runs.set(op.id, (runs.get(op.id) ?? 0) + 1);
    results.set(op.id, 'running');
    await opts.onOperation?.(op);
    const r = await answer(op);
    results.set(op.id, r);
    send(r);
  };
  const loop = async (s: TestAgentStream) => {
    for (;;) {
      let m;
      try {
        m = await s.next(60_000);
      } catch {
        return;
      }
      if (m.message.case !== 'operation') continue;
      const op = m.message.value;
      received.push(op);
      for (const w of [...waiters]) w();
      const prior = results.get(op.id);
      if (prior === 'running') continue;
      if (prior) send(prior);
      else void run(op);
    }
  };
  let url = grpcUrl;
  let session = { id: '', token: '' };
  const connect = async (to?: string, resume = true) => {
    if (to) url = to;
    stream = openAgentStream(url, { bearer: opts.bearer });
    const extra = resume && session.id ? { resumeSessionId: session.id, resumeSessionToken: session.token } : {};
    const welcome = await connectAgent(
      stream,
      agentId,
      accounts.map((name) => ({ name })),
      extra,
    );
    session = { id: welcome.sessionId, token: welcome.sessionToken };
    live = true;
    for (const r of outbox.splice(0)) stream.send({ case: 'operationResult', value: r });
    void loop(stream);
  };
  await connect();

  return {
    agentId,
    get stream() {
      return stream;
    },
    received,
    runs,
    sendResult: (r) => stream.send({ case: 'operationResult', value: r }),
    async cut() {
      live = false;
      stream.abort();
      await stream.ended;
    },
    reconnect: (to, o = {}) => connect(to, o.resume ?? true),
    get session() {
      return session;
    },
    waitReceived(id, times = 1, timeoutMs = 30_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const got = received.filter((o) => o.id === id);
          if (got.length >= times) {
            waiters.delete(check);
            clearTimeout(timer);
            resolve(got[got.length - 1]!);
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`operation ${id} not received ${times} time(s)`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async close() {
      live = false;
      stream.end();
      await stream.ended;
    },
  };
}

/** A promise with its resolve function (to hold an answer until the test releases it). */
export function gate<T = void>(): { promise: Promise<T>; open(value: T): void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((r) => (open = r));
  return { promise, open };
}

/** Calls a unary method of OperationService as Connect JSON over HTTP/1.1. */
export async function callJson(httpUrl: string, method: string, body: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${httpUrl}/outpost.api.v1.OperationService/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/**
 * An agent that answers each operation only once the test releases it: `release.get(id)()` answers operation `id`
 * with {@link okResult}. Release every id before closing it.
 */
export function startHeldAgent(
  grpcUrl: string,
  agentId: string,
  accounts: string[],
  release: Map<string, () => void>,
): Promise<OperationAgent> {
  return startOperationAgent(grpcUrl, agentId, accounts, {
    answer: async (op) => {
      const g = gate();
      release.set(op.id, () => g.open());
      await g.promise;
      return okResult(op);
    },
  });
}
