/**
 * The conformance suite's own agent, written from docs/agent-protocol.md and the proto alone (never from src/agent/):
 * if it can cache a cluster and answer operations through the gateway, the page is enough to build an agent. It talks
 * raw gRPC over `node:http2` ({@link openAgentStream}) and plain `fetch` to the API server ({@link createKubeClient}).
 *
 * What it does, section by section of the page: Hello with its accounts (2); CACHING accounts get their watchers —
 * scopes with a resume point watch from it, the others list first, bracketed by START / ADDED… / END(count) (5);
 * pushed verdicts start (CACHING) or stop (STANDBY, REFUSED) an account at once, dropping its unsent data (2); data
 * messages carry one sequence from 1, and at most `max_unacked` wait for an ack (3); watches forward every event and
 * every bookmark (4); heartbeats at the Welcome's interval, and a gateway silent for three intervals is dead (6); a
 * lost stream is resumed with the last Welcome's session pair — at once after `x-outpost-reconnect: now`, after a
 * back-off otherwise (6); operations run at most once per id, their results kept by id (a redelivered id gets the stored
 * result, a running one is ignored) and held in an outbox while no stream is up (7); Secret data never leaves (8).
 */
import {
  EventType,
  SyncPhase,
  Verdict,
  type AccountVerdict,
  type ConnectResponse,
  type ResumePoint,
  type Welcome,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { Operation } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { openAgentStream, type AgentStream, type RequestMessage } from './agent-stream.js';
import type { CallOutcome } from './grpc-wire.js';
import { scrubSecret, type KubeClient, type KubeKind, type KubeObject } from './kube-client.js';
import { runOperation, type ResultInit } from './mini-operations.js';
import { eventually } from '../../testkit/eventually.js';

/** One cluster account the mini agent serves. */
interface MiniAccount {
  name: string;
  kube: KubeClient;
  /** Kinds to cache, resolved by discovery when the agent starts. */
  kinds: { apiVersion: string; kind: string }[];
  /** Namespaces to watch (one scope per namespace for namespaced kinds); empty or absent: cluster-wide scopes. */
  namespaces?: string[];
}

/** Options of {@link createMiniAgent}. */
export interface MiniAgentOptions {
  grpcUrl: string;
  agentId: string;
  bearer?: string;
  accounts: MiniAccount[];
  /** `limit` of each list page (default 200). */
  listPageSize?: number;
  /** Largest EventBatch (default 100 events). */
  batchMax?: number;
  /** Reconnect when a stream ends (default true). */
  reconnect?: boolean;
  /** Delay before reconnecting after an error without `x-outpost-reconnect: now` (default 200 ms). */
  backoffMs?: number;
  /**
   * Scripts the result of an operation (failure paths: a wrong shape, another account…): gets the operation and the
   * result the agent would send (`run()` runs it against the cluster), returns what to send.
   */
  answer?: (op: Operation, run: () => Promise<ResultInit>) => Promise<ResultInit>;
}

/** One stream the agent opened, with what it learned and how it ended. */
interface MiniStreamRecord {
  stream: AgentStream;
  welcome?: Welcome;
  /** Scopes listed on this stream (`account/apiVersion/kind/namespace`). */
  listed: string[];
  /** Scopes watched from a resume point without a list. */
  resumed: string[];
  outcome?: CallOutcome;
}

/** A running mini agent. */
export interface MiniAgent {
  readonly agentId: string;
  /** Connects (first time) and resolves with the first Welcome. */
  start(): Promise<Welcome>;
  /** Every stream opened so far, the current one last. */
  readonly streams: MiniStreamRecord[];
  /** The current session pair (from the last Welcome). */
  readonly session: { id: string; token: string } | undefined;
  /** Waits until `count` Welcomes were received in total. */
  waitForWelcomes(count: number, timeoutMs?: number): Promise<Welcome>;
  /** Resolves once every scope of every CACHING account of the current stream is listed (END acked) or resumed. */
  waitSynced(timeoutMs?: number): Promise<void>;
  /** Resolves once everything sent on the current stream is acknowledged. */
  waitAcked(timeoutMs?: number): Promise<void>;
  /** Operations received (redeliveries included), and how often each id ran (must stay 1). */
  readonly operations: Operation[];
  readonly runs: Map<string, number>;
  /**
   * Sends any message on the current stream, outside the agent's own logic (failure paths: a result of the wrong
   * shape, data for another account…). Data messages sent this way must carry a sequence the agent did not use.
   */
  send(message: RequestMessage): void;
  /** Drops the current stream as a broken connection would; the agent reconnects (and resumes) on its own. */
  dropStream(): void;
  /** Forgets the session pair: the next connection does not resume (a restarted process). */
  forgetSession(): void;
  close(): Promise<void>;
}

interface Scope {
  account: MiniAccount;
  kind: KubeKind;
  namespace: string;
}

type Queued =
  | { account: string; kind: 'event'; event: EventInit }
  | { account: string; kind: 'marker'; marker: MarkerInit; onSent?: (seq: bigint) => void };
type EventInit = Extract<NonNullable<RequestMessage>, { case: 'events' }>['value']['events'] extends (infer E)[] | undefined ? E : never;
interface MarkerInit {
  account: string;
  apiVersion: string;
  kind: string;
  watchNamespace: string;
  phase: SyncPhase;
  resourceVersion?: string;
  count?: bigint;
}

const scopeKey = (account: string, apiVersion: string, kind: string, ns: string) => `${account}/${apiVersion}/${kind}/${ns}`;

/** Creates the agent; nothing happens before {@link MiniAgent.start}. */
export function createMiniAgent(options: MiniAgentOptions): MiniAgent {
  const pageSize = options.listPageSize ?? 200;
  const batchMax = options.batchMax ?? 100;
  const reconnect = options.reconnect ?? true;
  const backoffMs = options.backoffMs ?? 200;
  const encoder = new TextEncoder();
  const kinds = new Map<string, KubeKind[]>();
  const versions = new Map<string, string>();
  const streams: MiniStreamRecord[] = [];
  const operations: Operation[] = [];
  const runs = new Map<string, number>();
  /** Results by id ('running' while the operation runs). */
  const results = new Map<string, ResultInit | 'running'>();
  /** Results waiting for a welcomed stream. */
  const outbox: ResultInit[] = [];
  let session: { id: string; token: string } | undefined;
  let closed = false;
  let welcomes = 0;
  const welcomeWaiters = new Set<() => void>();
  let current: Connection | undefined;

  /** One stream and everything tied to it. */
  interface Connection {
    record: MiniStreamRecord;
    stream: AgentStream;
    welcomed: boolean;
    seq: bigint;
    maxUnacked: number;
    queue: Queued[];
    wakeSender?: () => void;
    /** Account name → watcher abort controller (CACHING accounts whose watchers run). */
    watchers: Map<string, AbortController>;
    /** Scopes still to finish their first list (or resume) on this stream. */
    unsynced: Set<string>;
    /** Sequences of END markers not yet acknowledged, with their scope. */
    pendingEnds: Map<bigint, string>;
    stop: AbortController;
  }

  const accountByName = (name: string) => options.accounts.find((a) => a.name === name);

  const hello = (resume: boolean): RequestMessage => ({
    case: 'hello',
    value: {
      agentId: options.agentId,
      zone: 'conformance',
      version: 'mini-agent/1',
      replicas: 1,
      ...(resume && session ? { resumeSessionId: session.id, resumeSessionToken: session.token } : {}),
      accounts: options.accounts.map((a) => ({
        name: a.name,
        apiHost: a.kube.baseUrl,
        caFingerprint: '',
        kubernetesVersion: versions.get(a.name) ?? '',
        namespaces: a.namespaces ?? [],
        kinds: (kinds.get(a.name) ?? []).map((k) => ({
          apiVersion: k.apiVersion,
          kind: k.kind,
          resource: k.resource,
          namespaced: k.namespaced,
        })),
      })),
    },
  });

  /** Sends queued data in order: consecutive events of the queue become one EventBatch; markers go alone. */
  const runSender = async (c: Connection) => {
    while (!c.stop.signal.aborted) {
      if (c.queue.length === 0) {
        await new Promise<void>((r) => (c.wakeSender = r));
        continue;
      }
      // Advisory window (section 3): at most max_unacked data messages sent and not acknowledged.
      while (c.seq - c.stream.acked >= BigInt(c.maxUnacked) && !c.stop.signal.aborted) {
        await c.stream.waitForAck(c.seq - BigInt(c.maxUnacked) + 1n, 3_600_000).catch(() => c.stop.abort());
      }
      if (c.stop.signal.aborted) return;
      const first = c.queue[0]!;
      const seq = ++c.seq;
      if (first.kind === 'marker') {
        c.queue.shift();
        c.stream.send({ case: 'sync', value: { ...first.marker, sequence: seq } });
        first.onSent?.(seq);
        continue;
      }
      const batch: EventInit[] = [];
      while (batch.length < batchMax && c.queue[0]?.kind === 'event') batch.push((c.queue.shift() as { event: EventInit }).event);
      c.stream.send({ case: 'events', value: { sequence: seq, events: batch } });
    }
  };

  const enqueue = async (c: Connection, item: Queued) => {
    c.queue.push(item);
    const w = c.wakeSender;
    c.wakeSender = undefined;
    w?.();
    // Stop reading the cluster while the queue is long (the window is full): Kubernetes keeps the history.
    while (c.queue.length > batchMax * 4 && !c.stop.signal.aborted) await new Promise((r) => setTimeout(r, 5));
  };

  const eventOf = (account: string, scope: Scope, type: EventType, obj: KubeObject): EventInit => {
    const o = scrubSecret({ apiVersion: scope.kind.apiVersion, kind: scope.kind.kind, ...obj });
    const md = o.metadata ?? {};
    return {
      account,
      type,
      apiVersion: scope.kind.apiVersion,
      kind: scope.kind.kind,
      namespace: String(md.namespace ?? ''),
      name: String(md.name ?? ''),
      uid: String(md.uid ?? ''),
      resourceVersion: String(md.resourceVersion ?? ''),
      objectJson: encoder.encode(JSON.stringify(o)),
      watchNamespace: scope.namespace,
    };
  };

  /** Lists one scope (START, every object as ADDED, END with the list's version and count); returns the version. */
  const listScope = async (c: Connection, scope: Scope, signal: AbortSignal): Promise<string | undefined> => {
    const { account, kind, namespace } = scope;
    const key = scopeKey(account.name, kind.apiVersion, kind.kind, namespace);
    const marker = { account: account.name, apiVersion: kind.apiVersion, kind: kind.kind, watchNamespace: namespace };
    await enqueue(c, { account: account.name, kind: 'marker', marker: { ...marker, phase: SyncPhase.START } });
    c.record.listed.push(key);
    const seen = new Set<string>();
    let cont: string | undefined;
    let listRv = '';
    do {
      if (signal.aborted) return undefined;
      const r = await account.kube.request('GET', account.kube.collectionPath(kind, namespace || undefined), {
        query: { limit: String(pageSize), continue: cont },
      });
      if (r.status === 410) return listScope(c, scope, signal);
      if (r.status !== 200) throw new Error(`list ${key}: HTTP ${r.status} ${r.body.message ?? ''}`);
      listRv = String(r.body.metadata?.resourceVersion ?? listRv);
      cont = r.body.metadata?.continue || undefined;
      for (const item of (r.body.items ?? []) as KubeObject[]) {
        seen.add(`${item.metadata?.namespace ?? ''}/${item.metadata?.name}`);
        await enqueue(c, { account: account.name, kind: 'event', event: eventOf(account.name, scope, EventType.ADDED, item) });
      }
    } while (cont);
    if (signal.aborted) return undefined;
    await enqueue(c, {
      account: account.name,
      kind: 'marker',
      marker: { ...marker, phase: SyncPhase.END, resourceVersion: listRv, count: BigInt(seen.size) },
      onSent: (seq) => c.pendingEnds.set(seq, key),
    });
    return listRv;
  };

  /** Lists (unless resumed) then watches one scope until the account stops or the stream ends. */
  const runScope = async (c: Connection, scope: Scope, resume: string | undefined, signal: AbortSignal) => {
    const key = scopeKey(scope.account.name, scope.kind.apiVersion, scope.kind.kind, scope.namespace);
    let rv = resume;
    if (rv !== undefined) {
      c.record.resumed.push(key);
      c.unsynced.delete(key);
    }
    while (!signal.aborted) {
      if (rv === undefined) {
        rv = await listScope(c, scope, signal);
        if (rv === undefined) return;
      }
      let gone = false;
      const status = await scope.account.kube
        .watch(
          scope.kind,
          scope.namespace,
          rv,
          (e) => {
            if (signal.aborted) return false;
            if (e.type === 'ERROR') {
              gone = e.object?.code === 410;
              return false;
            }
            const objRv = String(e.object?.metadata?.resourceVersion ?? '');
            if (objRv) rv = objRv;
            if (e.type === 'BOOKMARK') {
              void enqueue(c, {
                account: scope.account.name,
                kind: 'event',
                event: {
                  account: scope.account.name,
                  type: EventType.BOOKMARK,
                  apiVersion: scope.kind.apiVersion,
                  kind: scope.kind.kind,
                  watchNamespace: scope.namespace,
                  resourceVersion: objRv,
                },
              });
              return true;
            }
            const type = e.type === 'ADDED' ? EventType.ADDED : e.type === 'MODIFIED' ? EventType.MODIFIED : EventType.DELETED;
            void enqueue(c, { account: scope.account.name, kind: 'event', event: eventOf(scope.account.name, scope, type, e.object) });
            return true;
          },
          signal,
        )
        .catch(() => 0);
      if (status === 410 || gone) rv = undefined;
      else if (status !== 200 && !signal.aborted) await new Promise((r) => setTimeout(r, 100));
    }
  };

  const scopesOf = (account: MiniAccount): Scope[] =>
    (kinds.get(account.name) ?? []).flatMap((kind) =>
      kind.namespaced && account.namespaces?.length
        ? account.namespaces.map((namespace) => ({ account, kind, namespace }))
        : [{ account, kind, namespace: '' }],
    );

  const startAccount = (c: Connection, v: AccountVerdict) => {
    const account = accountByName(v.account);
    // A stream stopped already (closed while its Welcome was on the way, say) starts nothing: the abort below would
    // never come, and the scopes would retry their watches for ever.
    if (!account || c.watchers.has(account.name) || c.stop.signal.aborted) return;
    const abort = new AbortController();
    c.stop.signal.addEventListener('abort', () => abort.abort());
    c.watchers.set(account.name, abort);
    const resume = new Map(
      v.resume.map((p: ResumePoint) => [scopeKey(account.name, p.apiVersion, p.kind, p.watchNamespace), p.resourceVersion]),
    );
    for (const scope of scopesOf(account)) {
      const key = scopeKey(account.name, scope.kind.apiVersion, scope.kind.kind, scope.namespace);
      c.unsynced.add(key);
      void runScope(c, scope, resume.get(key), abort.signal).catch(() => {});
    }
  };

  const stopAccount = (c: Connection, name: string) => {
    c.watchers.get(name)?.abort();
    c.watchers.delete(name);
    // Drop its unsent data (section 2): only what is still queued; nothing already sent can be taken back.
    c.queue = c.queue.filter((q) => q.account !== name);
    for (const key of [...c.unsynced]) if (key.startsWith(`${name}/`)) c.unsynced.delete(key);
  };

  const sendResult = (r: ResultInit) => {
    const c = current;
    if (c?.welcomed && !c.stream.finished) c.stream.send({ case: 'operationResult', value: r });
    else outbox.push(r);
  };

  const handleOperation = async (op: Operation) => {
    operations.push(op);
    const known = results.get(op.id);
    if (known === 'running') return;
    if (known) return sendResult(known);
    results.set(op.id, 'running');
    runs.set(op.id, (runs.get(op.id) ?? 0) + 1);
    const account = accountByName(op.account);
    const run = async (): Promise<ResultInit> =>
      account
        ? runOperation(account.kube, op)
        : {
            id: op.id,
            account: op.account,
            success: false,
            statusCode: 0,
            reason: 'UnknownAccount',
            message: `this agent does not serve ${op.account}`,
          };
    const result = options.answer ? await options.answer(op, run) : await run();
    results.set(op.id, result);
    sendResult(result);
  };

  const handle = (c: Connection, res: ConnectResponse) => {
    const m = res.message;
    switch (m.case) {
      case 'ack':
        for (const [seq, key] of c.pendingEnds) {
          if (seq <= m.value.sequence) {
            c.pendingEnds.delete(seq);
            c.unsynced.delete(key);
          }
        }
        break;
      case 'operation':
        void handleOperation(m.value);
        break;
      case 'verdicts':
        for (const v of m.value.accounts) {
          if (v.verdict === Verdict.CACHING) startAccount(c, v);
          else stopAccount(c, v.account);
        }
        break;
      default:
        break;
    }
  };

  const connectOnce = async (resume: boolean): Promise<Connection> => {
    const stream = openAgentStream(options.grpcUrl, { bearer: options.bearer });
    const record: MiniStreamRecord = { stream, listed: [], resumed: [] };
    streams.push(record);
    const c: Connection = {
      record,
      stream,
      welcomed: false,
      seq: 0n,
      maxUnacked: 1,
      queue: [],
      watchers: new Map(),
      unsynced: new Set(),
      pendingEnds: new Map(),
      stop: new AbortController(),
    };
    current = c;
    void stream.ended.then((o) => {
      record.outcome = o;
      c.stop.abort();
      c.wakeSender?.();
    });
    stream.send(hello(resume));
    const first = await stream.next(20_000);
    if (first.message.case !== 'welcome') throw new Error(`expected a Welcome, got ${first.message.case}`);
    const welcome = first.message.value;
    record.welcome = welcome;
    session = { id: welcome.sessionId, token: welcome.sessionToken };
    c.maxUnacked = Math.max(1, welcome.maxUnacked);
    c.welcomed = true;
    welcomes++;
    for (const w of [...welcomeWaiters]) w();
    // Results held while no stream was up go out on this one (section 6).
    for (const r of outbox.splice(0)) stream.send({ case: 'operationResult', value: r });
    void runSender(c);
    for (const v of welcome.accounts) if (v.verdict === Verdict.CACHING) startAccount(c, v);
    // Heartbeats at the Welcome's interval; a gateway silent for three intervals is treated as dead.
    const intervalMs = Math.max(1, welcome.heartbeatIntervalSeconds) * 1000;
    let seen = stream.received.length;
    let lastHeard = Date.now();
    const timer = setInterval(() => {
      if (stream.finished) return;
      stream.send({ case: 'heartbeat', value: { agentId: options.agentId, sentAtUnixMs: BigInt(Date.now()) } });
      if (stream.received.length !== seen) {
        seen = stream.received.length;
        lastHeard = Date.now();
      } else if (Date.now() - lastHeard > 3 * intervalMs) {
        stream.abort();
      }
    }, intervalMs);
    timer.unref();
    // The stream may already have ended (a max-age cut right after the Welcome): then no abort event will come.
    if (c.stop.signal.aborted) clearInterval(timer);
    else c.stop.signal.addEventListener('abort', () => clearInterval(timer));
    void (async () => {
      for (;;) {
        let res: ConnectResponse;
        try {
          res = await stream.next(3_600_000);
        } catch {
          return;
        }
        handle(c, res);
      }
    })();
    return c;
  };

  /** Keeps a stream up: reconnects (resuming) whenever the current one ends, until closed. */
  const supervise = async (c: Connection) => {
    let conn: Connection | undefined = c;
    while (!closed) {
      const outcome = conn ? await conn.stream.ended : undefined;
      if (closed || !reconnect) return;
      if (outcome?.grpcStatus === 16 && /session/.test(outcome.grpcMessage)) session = undefined;
      const now = outcome?.trailers['x-outpost-reconnect'] === 'now' || outcome?.headers['x-outpost-reconnect'] === 'now';
      if (!now) await new Promise((r) => setTimeout(r, backoffMs));
      if (closed) return;
      try {
        conn = await connectOnce(true);
      } catch {
        conn = current;
        if (conn && !conn.welcomed) conn.stream.abort();
        await new Promise((r) => setTimeout(r, backoffMs));
      }
    }
  };

  return {
    agentId: options.agentId,
    async start() {
      for (const a of options.accounts) {
        versions.set(a.name, await a.kube.version());
        kinds.set(a.name, await Promise.all(a.kinds.map((k) => a.kube.resolve(k.apiVersion, k.kind))));
      }
      const c = await connectOnce(false);
      void supervise(c);
      return c.record.welcome!;
    },
    streams,
    get session() {
      return session;
    },
    async waitForWelcomes(count, timeoutMs = 20_000) {
      await eventually(`mini agent ${options.agentId}: ${count} welcomes`, () => welcomes >= count, { timeoutMs });
      return streams.filter((s) => s.welcome).at(-1)!.welcome!;
    },
    async waitSynced(timeoutMs = 20_000) {
      await eventually(
        `mini agent ${options.agentId}: every scope synced`,
        () => !!current?.welcomed && current.unsynced.size === 0 && current.watchers.size > 0,
        { timeoutMs },
      );
    },
    async waitAcked(timeoutMs = 20_000) {
      await eventually(
        `mini agent ${options.agentId}: everything acknowledged`,
        () => !!current && current.queue.length === 0 && current.stream.acked >= current.seq,
        { timeoutMs },
      );
    },
    operations,
    runs,
    send(message) {
      if (!current) throw new Error('the mini agent has no stream yet');
      current.stream.send(message);
    },
    dropStream() {
      current?.stream.abort();
    },
    forgetSession() {
      session = undefined;
    },
    async close() {
      closed = true;
      const c = current;
      if (c) {
        c.stop.abort();
        c.stream.end();
        await Promise.race([c.stream.ended, new Promise((r) => setTimeout(r, 2000))]);
        c.stream.abort();
      }
    },
  };
}
