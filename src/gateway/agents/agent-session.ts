/**
 * One agent stream (`AgentService.Connect`) on the gateway side: Hello → verdicts and Welcome (with the session's
 * token; a Hello may resume an earlier session by presenting its token), then data messages (event batches, sync
 * markers) stored strictly in order and acknowledged once committed, account changes (AccountsChanged → verdicts),
 * account commands pushed by the gateway, heartbeats both ways, and on any end of the stream the session's accounts
 * become INACTIVE (their cache is kept) and its `agent_sessions` row ended. A stream authenticated with expiring
 * credentials (a JWT) ends UNAUTHENTICATED when they expire.
 *
 * This module owns the stream's life (its state, the request loop and the order of messages, the end); the steps
 * live beside it: session-welcome.ts (Hello), accounts-changed-handler.ts, write-pipeline.ts (events, sync markers,
 * reports), stream-timers.ts (heartbeats, dead peer, credential expiry) and session-row.ts (the `agent_sessions` row).
 */
import { randomUUID } from 'node:crypto';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  ConnectResponseSchema,
  type AccountCommand,
  type ConnectRequest,
  type ConnectResponse,
  Verdict,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Db } from '../../db/database.js';
import type { Operation } from '../../gen/outpost/agent/v1/operation_pb.js';
import type { Logger } from '../../shared/logger.js';
import { releaseAccounts } from '../accounts/account-claim-queries.js';
import { removeAccountCaches } from '../cache/cache-removal.js';
import { hasRole, mayRegister, type Principal } from '../auth/principal.js';
import type { ObjectWriter } from '../cache/object-writer.js';
import type { ClaimRecorder, IngestRecorder } from '../metrics/gateway-metrics.js';
import type { SyncState } from '../cache/sync-state.js';
import { invalidArgument, toConnectError } from '../http/errors.js';
import { createClosers } from '../../shared/closers.js';
import { findUnstorableText } from '../../shared/unstorable-text.js';
import type { DynamicAccountSource } from './account-commands.js';
import type { AgentSessionStore } from './agent-session-store.js';
import type { AgentTransport } from './agent-transport.js';
import type { OperationHooks } from './operation-hooks.js';
import { createOutbox, type Outbox } from './outbox.js';
import type { SessionRegistry } from './session-registry.js';
import { applyAccountsChanged } from './accounts-changed-handler.js';
import { createAccountStreamState } from './account-stream-state.js';
import { createSessionRow, type SessionRow } from './session-row.js';
import { welcomeAgent } from './session-welcome.js';
import { demoteLost, promoteStandby } from './session-promotion.js';
import type { StreamState } from './stream-state.js';
import { createKubeMux, type KubeChannel, type KubeChannelEvents } from './kube-mux.js';
import { createStreamTimers, type StreamTimers } from './stream-timers.js';
import { createWritePipeline, type WritePipeline } from './write-pipeline.js';

/** Everything a session needs; shared by all sessions of a gateway. */
export interface AgentSessionDeps {
  gatewayId: string;
  heartbeatIntervalSeconds: number;
  deadAfterSeconds: number;
  /** `agents.maxStreamAgeSeconds`: streams end (jittered ±10%) after this long; never when absent. */
  maxStreamAgeSeconds?: number;
  maxUnacked: number;
  resumeMaxAgeSeconds: number;
  /** `replicas.leaseSeconds`: length of an account ownership lease (renewed by the lease keeper). */
  leaseSeconds: number;
  registry: SessionRegistry;
  /** The database: account claims, releases and reports (src/gateway/accounts/account-claim-queries.ts). */
  db: Db;
  objectWriter: ObjectWriter;
  syncState: SyncState;
  logger: Logger;
  /** The `agent_sessions` rows (session tokens, live listing). */
  sessionStore: AgentSessionStore;
  /** The operations feature; absent in tests of the cache path alone. */
  operations?: OperationHooks;
  /** Dynamic accounts pushed (ADD commands) to each stream right after its Welcome; none when absent. */
  dynamicAccounts?: DynamicAccountSource;
  /** Called after a stream released accounts (they may be promoted on a STANDBY stream at once). */
  onAccountsReleased?: () => void;
  /** Records committed event batches; none when absent. */
  metrics?: IngestRecorder;
  /** Counts refused account claims; none when absent. */
  claimMetrics?: ClaimRecorder;
}

const STOP = Symbol('stop');

/**
 * Serves one Connect stream: pass the request iterable the endpoint received and yield what this returns; `transport`
 * names the endpoint's transport (recorded in the session row, its log lines and the listings). The stream ends
 * cleanly when the agent half-closes or the gateway shuts down, with an error otherwise.
 */
export function serveAgentStream(
  requests: AsyncIterable<ConnectRequest>,
  deps: AgentSessionDeps,
  principal: Principal | undefined,
  transport: AgentTransport,
): AsyncIterable<ConnectResponse> {
  if (!principal) throw new ConnectError('agent stream without an authenticated principal', Code.Internal);
  if (!hasRole(principal, 'agent')) {
    throw new ConnectError(`${principal.subject} is not allowed to open agent streams (no agent role)`, Code.PermissionDenied);
  }
  return new AgentSession(deps, principal, transport).run(requests);
}

class AgentSession implements StreamState {
  readonly id = randomUUID();
  agentId = '';
  zone = '';
  connection = 0;
  version = '';
  log: Logger;
  readonly done: Promise<void>;
  readonly outbox: Outbox = createOutbox();
  stopped = false;
  welcomed = false;
  readonly accounts = createAccountStreamState();
  sessionToken = '';
  readonly row: SessionRow;
  private resolveDone!: () => void;
  private helloSeen = false;
  /** Background database work of the session (touches, dynamic accounts), awaited before the session ends. */
  private readonly background = new Set<Promise<void>>();
  private readonly pipeline: WritePipeline;
  /** kubectl through the gateway: the stream's proxied Kubernetes API requests. */
  private readonly kube = createKubeMux((request) => {
    if (this.stopped || !this.welcomed || this.outbox.closed) return false;
    this.outbox.push(create(ConnectResponseSchema, { message: { case: 'kubeRequest', value: request } }));
    return true;
  });
  private readonly timers: StreamTimers;
  private stopNow!: () => void;
  private readonly stopSignal: Promise<typeof STOP>;
  /** Serialises the steps that change the stream's accounts (Hello, AccountsChanged, promotion). */
  private accountSteps: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: AgentSessionDeps,
    readonly principal: Principal,
    readonly transport: AgentTransport,
  ) {
    this.log = deps.logger.child({ sessionId: this.id, subject: principal.subject, transport });
    this.row = createSessionRow(this, deps.sessionStore);
    this.pipeline = createWritePipeline(this, deps, (err) => this.failStream(err));
    this.timers = createStreamTimers({
      gatewayId: deps.gatewayId,
      heartbeatIntervalSeconds: deps.heartbeatIntervalSeconds,
      deadAfterSeconds: deps.deadAfterSeconds,
      outbox: this.outbox,
      log: () => this.log,
      isWriting: () => this.pipeline.writing,
      close: (error) => this.close(error),
    });
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
    this.stopSignal = new Promise((resolve) => (this.stopNow = () => resolve(STOP)));
  }

  serves(account: string): boolean {
    return !this.stopped && this.accounts.serves(account);
  }

  sendOperation(operation: Operation): boolean {
    if (this.stopped || !this.welcomed || this.outbox.closed) return false;
    this.outbox.push(create(ConnectResponseSchema, { message: { case: 'operation', value: operation } }));
    return true;
  }

  sendAccountCommand(command: AccountCommand): boolean {
    if (this.stopped || !this.welcomed || this.outbox.closed) return false;
    // A dynamic account's definition (its kubeconfig path, namespaces) goes only to agents allowed to serve the name.
    if (!mayRegister(this.principal, command.account?.name ?? '')) return false;
    this.outbox.push(create(ConnectResponseSchema, { message: { case: 'accountCommand', value: command } }));
    return true;
  }

  openKube(events: KubeChannelEvents): KubeChannel | undefined {
    if (this.stopped || !this.welcomed || this.outbox.closed) return undefined;
    return this.kube.open(events);
  }

  standbyAccounts(): string[] {
    if (this.stopped || !this.welcomed) return [];
    return this.accounts.withVerdict(Verdict.STANDBY);
  }

  promote(accounts: string[]): Promise<void> {
    return this.exclusive(async () => {
      if (this.stopped) return;
      const won = await promoteStandby(this, accounts, this.deps);
      if (won.length > 0) this.deps.operations?.sessionStarted(this, won);
    }).catch((err) => this.log.error({ err, accounts }, 'could not promote the stream for accounts'));
  }

  leaseLost(accounts: string[]): Promise<void> {
    return this.exclusive(() => demoteLost(this, accounts, this.deps.registry)).catch((err) =>
      this.log.error({ err, accounts }, 'could not demote the stream for accounts whose lease it lost'),
    );
  }

  private exclusive<T>(step: () => Promise<T>): Promise<T> {
    const run = this.accountSteps.then(step, step);
    this.accountSteps = run.catch(() => {});
    return run;
  }

  close(error?: ConnectError): void {
    if (error) this.outbox.fail(error);
    else this.outbox.close();
    this.stop();
  }

  runInBackground(work: Promise<void>, failure: string): void {
    const tracked = work.catch((err) => this.log.error({ err }, failure));
    this.background.add(tracked);
    void tracked.finally(() => this.background.delete(tracked));
  }

  /**
   * Starts the session and returns its responses: the outbox, with the session's end run once when the outbox is
   * exhausted, fails, or the consumer returns early. A plain iterator, not an async generator, for the same reason as
   * the outbox (memory per idle stream).
   *
   * Each part of the stream registers how it ends as it starts, on one stack of closers (src/shared/closers.ts) run
   * newest first at the end: stop reading, let the request loop finish, stop the timers, release the accounts, wait
   * for background work, end the session row, and only then resolve {@link AgentSession.done}. A step that fails is
   * logged and the others still run.
   */
  run(requests: AsyncIterable<ConnectRequest>): AsyncIterableIterator<ConnectResponse> {
    const closers = createClosers((step, err) => this.log.error({ err }, `could not ${step}`));
    closers.defer('finish the session', () => this.finished());
    closers.defer('end its Kubernetes API requests', () => this.kube.closeAll('the agent stream ended'));
    closers.defer('end the session row', () => this.row.end());
    closers.defer('finish background work', () => Promise.all(this.background));
    closers.defer('mark accounts INACTIVE', () => this.releaseClaimed());
    // Before they start (stopping one that never started does nothing): they stop once the request loop finished.
    closers.defer('stop the timers', () => this.timers.stop());
    this.deps.registry.add(this);
    const reading = this.readLoop(requests).then(
      () => this.outbox.close(),
      (err) => this.outbox.fail(toConnectError(err, this.log, 'agent stream')),
    );
    closers.defer('finish the request loop', () => reading);
    // The stop signal ends the request loop and takes the stream out of the registry: early at the end.
    closers.defer('stop the stream', () => this.stop());
    this.timers.startDeadPeerCheck();
    if (this.principal.expiresAt !== undefined) this.timers.startCredentialExpiry(this.principal.expiresAt);
    // a credential revoked while the stream is open (token file deleted or changed) ends it UNAUTHENTICATED
    const unsubscribeRevocation = this.principal.revocation?.subscribe((message) => {
      this.log.info('agent credential revoked; closing its stream');
      this.close(new ConnectError(message, Code.Unauthenticated));
    });
    if (unsubscribeRevocation) closers.defer('unsubscribe from credential revocation', unsubscribeRevocation);
    if (this.deps.maxStreamAgeSeconds !== undefined) this.timers.startMaxAge(this.deps.maxStreamAgeSeconds);
    const end = () => closers.close();
    const outbox = this.outbox;
    const responses: AsyncIterableIterator<ConnectResponse> = {
      async next() {
        let result: IteratorResult<ConnectResponse>;
        try {
          result = await outbox.next();
        } catch (err) {
          await end();
          throw err;
        }
        if (result.done) await end();
        return result;
      },
      async return() {
        await outbox.return();
        await end();
        return { value: undefined, done: true };
      },
      [Symbol.asyncIterator]: () => responses,
    };
    return responses;
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    // Callers of proxied requests hear it now, not after the stream's accounts were released.
    this.kube.closeAll('the agent stream ended');
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
      this.timers.messageStarted();
      this.row.touch();
      try {
        await this.handle(next.value);
      } finally {
        this.timers.messageDone();
      }
      if (this.stopped) break;
    }
    await this.pipeline.drain();
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
    if (m.case === 'sync' || m.case === 'accountReport' || m.case === 'accountsChanged') {
      // Names, namespaces, kinds and versions go into text columns: text Postgres cannot store is refused up front
      // (INVALID_ARGUMENT) rather than failing the write (INTERNAL). Event batches, the hot path, are checked field by
      // field by the event decoder.
      const unstorable = findUnstorableText(m.value, m.case);
      if (unstorable) throw invalidArgument(unstorable);
    }
    if (m.case === 'kubeResponse') {
      // Not ordered behind event writes: a part of a proxied request goes to its caller at once (its credit bounds it).
      if (!this.welcomed) throw new ConnectError('kube_response before the welcome', Code.FailedPrecondition);
      this.kube.received(m.value);
      return;
    }
    if (m.case === 'operationResult') {
      // Not ordered behind event writes: a result is recorded by its own conditional update.
      if (!this.welcomed) throw new ConnectError('operation_result before the welcome', Code.FailedPrecondition);
      this.deps.operations?.resultReceived(this, m.value);
      return;
    }
    if (m.case !== 'events' && m.case !== 'heartbeat') {
      // Everything but event batches runs after the previous batch committed.
      await this.pipeline.drain();
      if (this.stopped) return;
    }
    switch (m.case) {
      case 'hello':
        if (this.helloSeen) throw invalidArgument('hello may only be sent once per stream');
        this.helloSeen = true;
        if (await this.exclusive(() => welcomeAgent(this, m.value, this.deps))) this.timers.startHeartbeats();
        return;
      case 'events':
        return this.pipeline.events(m.value);
      case 'sync':
        return this.pipeline.sync(m.value);
      case 'heartbeat':
        return;
      case 'accountReport':
        return this.pipeline.report(m.value.account, m.value.progress);
      case 'accountsChanged':
        return this.exclusive(() => applyAccountsChanged(this, m.value, this.deps));
      default:
        throw invalidArgument('empty message');
    }
  }

  /** Marks the stream's claimed accounts INACTIVE (their cache is kept); they may then be promoted elsewhere. */
  private async releaseClaimed(): Promise<void> {
    const claimed = this.accounts.end();
    await releaseAccounts(this.deps.db, this.id, claimed, removeAccountCaches);
    if (claimed.length > 0) this.deps.onAccountsReleased?.();
  }

  private finished(): void {
    if (this.helloSeen) this.log.info({ accounts: this.accounts.claimed().length }, 'agent stream ended');
    this.resolveDone();
  }
}
