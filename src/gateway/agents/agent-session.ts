/**
 * One agent stream (`AgentService.Connect`) on the gateway side: Hello → verdicts and Welcome, then data messages
 * (event batches, sync markers) stored strictly in order and acknowledged once committed, heartbeats both ways, and
 * on any end of the stream the session's accounts become INACTIVE (their cache is kept).
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  ConnectResponseSchema,
  Verdict,
  type AccountInfo,
  type ConnectRequest,
  type ConnectResponse,
  type EventBatch,
  type Hello,
  type SyncMarker,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import { decodeEventBatch } from '../cache/event-decoder.js';
import type { ObjectWriter } from '../cache/object-writer.js';
import type { SyncState } from '../cache/sync-state.js';
import { invalidArgument, toConnectError } from '../errors.js';
import type { AccountStore } from './account-store.js';
import { admitAccounts } from './admission.js';
import { createListTracker, type ListTracker } from './list-tracker.js';
import type { OperationHooks } from './operation-hooks.js';
import { validateAccountInfo, validateHello } from './hello-validation.js';
import { createOutbox, type Outbox } from './outbox.js';
import type { LiveSession, SessionRegistry } from './session-registry.js';

/** Everything a session needs; shared by all sessions of a gateway. */
export interface AgentSessionDeps {
  gatewayId: string;
  heartbeatIntervalSeconds: number;
  deadAfterSeconds: number;
  maxUnacked: number;
  resumeMaxAgeSeconds: number;
  registry: SessionRegistry;
  accountStore: AccountStore;
  objectWriter: ObjectWriter;
  syncState: SyncState;
  logger: Logger;
  /** The operations feature; absent in tests of the cache path alone. */
  operations?: OperationHooks;
}

const STOP = Symbol('stop');

/**
 * Serves one Connect stream: pass the request iterable the RPC handler received and yield what this returns.
 * The stream ends cleanly when the agent half-closes or the gateway shuts down, with an error otherwise.
 */
export function serveAgentStream(requests: AsyncIterable<ConnectRequest>, deps: AgentSessionDeps): AsyncIterable<ConnectResponse> {
  return new AgentSession(deps).run(requests);
}

class AgentSession implements LiveSession {
  readonly id = randomUUID();
  agentId = '';
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private readonly outbox: Outbox = createOutbox();
  private log: Logger;
  private helloSeen = false;
  /** Highest sequence accepted (checked and queued); acks follow once it is committed. */
  private lastSequence = 0n;
  /** The event batch being written while the next message is read and decoded (at most one). */
  private inflight: Promise<void> | undefined;
  private readonly claimed = new Set<string>();
  /** Accounts admitted CACHING or STANDBY: operations for them may be sent here, and their results are accepted. */
  private readonly served = new Set<string>();
  private welcomed = false;
  private readonly lists: ListTracker;
  private lastSeen = Date.now();
  private busy = false;
  private stopped = false;
  private stopNow!: () => void;
  private readonly stopSignal: Promise<typeof STOP>;
  private timers: NodeJS.Timeout[] = [];

  constructor(private readonly deps: AgentSessionDeps) {
    this.log = deps.logger.child({ sessionId: this.id });
    this.lists = createListTracker(deps.syncState, () => this.log);
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.stopSignal = new Promise((resolve) => (this.stopNow = () => resolve(STOP)));
  }

  serves(account: string): boolean {
    return !this.stopped && this.served.has(account);
  }

  sendOperation(operation: Operation): boolean {
    if (this.stopped || !this.welcomed || this.outbox.closed) return false;
    this.outbox.push(create(ConnectResponseSchema, { message: { case: 'operation', value: operation } }));
    return true;
  }

  close(error?: ConnectError): void {
    if (error) this.outbox.fail(error);
    else this.outbox.close();
    this.stop();
  }

  async *run(requests: AsyncIterable<ConnectRequest>): AsyncGenerator<ConnectResponse> {
    this.deps.registry.add(this);
    const reading = this.readLoop(requests).then(
      () => this.outbox.close(),
      (err) => this.outbox.fail(toConnectError(err, this.log, 'agent stream')),
    );
    this.startDeadTimer();
    try {
      yield* this.outbox;
    } finally {
      this.stop();
      await reading;
      await this.cleanup();
    }
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.stopNow();
    this.deps.registry.remove(this);
  }

  private async readLoop(requests: AsyncIterable<ConnectRequest>): Promise<void> {
    const it = requests[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([it.next(), this.stopSignal]);
      if (next === STOP) {
        // Do not wait: the request side may never finish once the response has ended.
        void it.return?.().catch(() => {});
        break;
      }
      if (next.done) {
        this.log.info('agent closed the stream');
        break;
      }
      this.lastSeen = Date.now();
      this.busy = true;
      try {
        await this.handle(next.value);
      } finally {
        this.busy = false;
        this.lastSeen = Date.now();
      }
      if (this.stopped) break;
    }
    await this.drain();
  }

  /** Waits for the in-flight batch write; its failure was already reported by {@link failStream}. */
  private async drain(): Promise<void> {
    try {
      await this.inflight;
    } catch {
      // reported by failStream
    }
  }

  private failStream(err: unknown): void {
    this.outbox.fail(toConnectError(err, this.log, 'agent stream'));
    this.stop();
  }

  private async handle(req: ConnectRequest): Promise<void> {
    const m = req.message;
    if (!this.helloSeen && m.case !== 'hello') {
      throw new ConnectError(`the first message must be a hello, got ${m.case ?? 'an empty message'}`, Code.FailedPrecondition);
    }
    if (m.case === 'operationResult') {
      // Not ordered behind event writes: a result is recorded by its own conditional update.
      if (!this.welcomed) throw new ConnectError('operation_result before the welcome', Code.FailedPrecondition);
      this.deps.operations?.resultReceived(this, m.value);
      return;
    }
    if (m.case !== 'events' && m.case !== 'heartbeat') {
      // Everything but event batches runs after the previous batch committed.
      await this.drain();
      if (this.stopped) return;
    }
    switch (m.case) {
      case 'hello':
        if (this.helloSeen) throw invalidArgument('hello may only be sent once per stream');
        this.helloSeen = true;
        return this.onHello(m.value);
      case 'events':
        return this.onEvents(m.value);
      case 'sync':
        return this.onSync(m.value);
      case 'heartbeat':
        return;
      case 'accountReport':
        if (!m.value.account) throw invalidArgument('account_report.account is required');
        return this.onReport(m.value.account, m.value.progress);
      default:
        throw invalidArgument('empty message');
    }
  }

  private async onHello(hello: Hello): Promise<void> {
    validateHello(hello);
    this.agentId = hello.agentId;
    this.log = this.log.child({ agentId: hello.agentId });
    for (const older of this.deps.registry.sessionsOf(hello.agentId)) {
      if (older === this) continue;
      this.log.info({ oldSessionId: older.id }, 'new stream of the same agent takes over');
      older.close(new ConnectError('superseded by a newer stream of the same agent', Code.Aborted));
    }
    const ordered = await admitAccounts(hello, this, this.claimed, () => this.stopped, this.deps);
    if (!ordered) return;
    this.outbox.push(
      create(ConnectResponseSchema, {
        message: {
          case: 'welcome',
          value: {
            sessionId: this.id,
            gatewayId: this.deps.gatewayId,
            accounts: ordered,
            heartbeatIntervalSeconds: Math.max(1, Math.round(this.deps.heartbeatIntervalSeconds)),
            maxUnacked: this.deps.maxUnacked,
          },
        },
      }),
    );
    this.welcomed = true;
    for (const o of ordered) if (o.verdict === Verdict.CACHING || o.verdict === Verdict.STANDBY) this.served.add(o.account);
    this.startHeartbeats();
    if (this.served.size > 0) this.deps.operations?.sessionStarted(this, [...this.served]);
    const count = (v: Verdict) => ordered.filter((o) => o.verdict === v).length;
    this.log.info(
      {
        caching: count(Verdict.CACHING),
        standby: count(Verdict.STANDBY),
        refused: count(Verdict.REFUSED),
        resumePoints: ordered.reduce((n, o) => n + o.resume.length, 0),
      },
      'agent connected',
    );
    for (const o of ordered) if (o.verdict === Verdict.REFUSED) this.log.warn({ account: o.account, reason: o.reason }, 'account refused');
  }

  private checkSequence(sequence: bigint): void {
    const expected = this.lastSequence + 1n;
    if (sequence !== expected) throw invalidArgument(`sequence ${sequence} is out of order: expected ${expected}`);
    this.lastSequence = sequence;
  }

  private commit(sequence: bigint): void {
    this.outbox.ack(sequence);
  }

  /**
   * Validates and decodes the batch while the previous one is still being written, then queues its write behind it
   * and returns without waiting: the stream reads and decodes message n+1 while message n commits. Acks follow
   * commits in order. An invalid batch first lets the previous write finish (and be acknowledged).
   */
  private async onEvents(batch: EventBatch): Promise<void> {
    let decoded;
    try {
      this.checkSequence(batch.sequence);
      decoded = decodeEventBatch(batch, {
        isCached: (account) => this.deps.registry.caches(account, this),
        listGeneration: (account, apiVersion, kind, watchNamespace) => this.lists.generation({ account, apiVersion, kind, watchNamespace }),
      });
    } catch (err) {
      await this.drain();
      throw err;
    }
    for (const s of decoded.scrubbedSecrets) {
      this.log.warn(s, 'Secret arrived with data; dropped it before storing (the agent must scrub Secrets)');
    }
    if (decoded.droppedNotCached > 0) {
      this.log.debug({ sequence: batch.sequence, dropped: decoded.droppedNotCached }, 'dropped events of accounts this session does not cache');
    }
    await this.drain();
    if (this.stopped) return;
    const sequence = batch.sequence;
    const write: Promise<void> = this.deps.objectWriter.write(decoded).then(() => this.commit(sequence));
    this.inflight = write;
    write.then(
      () => {
        if (this.inflight === write) this.inflight = undefined;
      },
      (err) => this.failStream(err),
    );
  }

  private async onSync(marker: SyncMarker): Promise<void> {
    this.checkSequence(marker.sequence);
    if (!this.deps.registry.caches(marker.account, this)) {
      this.log.debug({ account: marker.account, sequence: marker.sequence }, 'dropped sync marker of an account this session does not cache');
      this.commit(marker.sequence);
      return;
    }
    await this.lists.apply(marker);
    this.commit(marker.sequence);
  }

  private async onReport(info: AccountInfo, progress: { apiVersion: string; kind: string; namespace: string; listed: bigint }[]): Promise<void> {
    validateAccountInfo(info, 'account_report');
    if (!this.deps.registry.caches(info.name, this)) {
      this.log.debug({ account: info.name }, 'ignored report of an account this session does not cache');
      return;
    }
    await this.deps.accountStore.applyReport(this.id, info);
    await this.deps.syncState.recordProgress(
      info.name,
      progress.map((p) => ({ apiVersion: p.apiVersion, kind: p.kind, watchNamespace: p.namespace, listed: Number(p.listed) })),
    );
  }

  private startHeartbeats(): void {
    const timer = setInterval(() => {
      this.outbox.push(
        create(ConnectResponseSchema, {
          message: { case: 'heartbeat', value: { agentId: this.deps.gatewayId, sentAtUnixMs: BigInt(Date.now()) } },
        }),
      );
    }, this.deps.heartbeatIntervalSeconds * 1000);
    timer.unref();
    this.timers.push(timer);
  }

  private startDeadTimer(): void {
    const deadMs = this.deps.deadAfterSeconds * 1000;
    const timer = setInterval(
      () => {
        if (this.busy || this.inflight || Date.now() - this.lastSeen <= deadMs) return;
        this.log.warn({ deadAfterSeconds: this.deps.deadAfterSeconds }, 'agent silent for too long; closing its stream');
        this.close(new ConnectError(`no message from the agent for ${this.deps.deadAfterSeconds}s`, Code.DeadlineExceeded));
      },
      Math.max(50, Math.min(1000, deadMs / 4)),
    );
    timer.unref();
    this.timers.push(timer);
  }

  private async cleanup(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.stop();
    try {
      await this.deps.accountStore.deactivate(this.id, [...this.claimed]);
    } catch (err) {
      this.log.error({ err }, 'could not mark accounts INACTIVE');
    }
    if (this.helloSeen) this.log.info({ accounts: this.claimed.size }, 'agent stream ended');
    this.resolveDone();
  }
}
