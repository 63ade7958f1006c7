/**
 * One session on the gateway stream: Hello → Welcome, then the watchers of every CACHING account stream through one
 * outbox; acks release the window; heartbeats flow both ways. The session ends (and everything it started stops, its
 * unacknowledged data discarded) when the stream ends or fails, when the gateway is silent for too long, or when the
 * agent closes. The caller reconnects and starts a fresh session from the new Welcome's resume points.
 */
import { setMaxListeners } from 'node:events';
import { create } from '@bufbuild/protobuf';
import type { Client } from '@connectrpc/connect';
import type { Logger } from 'pino';
import {
  AccountInfoSchema,
  AccountReportSchema,
  AgentService,
  ConnectRequestSchema,
  HeartbeatSchema,
  HelloSchema,
  KindInfoSchema,
  SkippedKindSchema,
  SyncProgressSchema,
  Verdict,
  type AccountInfo,
  type ConnectRequest,
  type Welcome,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { PreparedAccount } from '../account/prepare-account.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import { runScopeWatcher, type WatchState } from '../watch/scope-watcher.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createPushable } from './pushable.js';

/** Per-account state shared with the status snapshot. */
export interface AccountRuntime {
  prepared: PreparedAccount;
  verdict: 'caching' | 'standby' | 'refused' | 'unknown';
  reason?: string;
  watches: WatchState[];
}

/** Session state shared with the status snapshot. */
export interface SessionState {
  connected: boolean;
  sessionId?: string;
  accounts: AccountRuntime[];
}

/** Options of {@link runSession}. */
export interface SessionOptions {
  client: Client<typeof AgentService>;
  headers: Record<string, string>;
  agentId: string;
  zone: string;
  version: string;
  replicas: number;
  /** Heartbeat interval until the Welcome gives one; 0 disables heartbeats (and dead-peer detection). */
  heartbeatSeconds: number;
  state: SessionState;
  /** Runs the operations the gateway sends; lives across sessions (results of one may go out on the next). */
  operations?: OperationRunner;
  logger: Logger;
  /** Aborts when the agent closes. */
  signal: AbortSignal;
}

/** Raised when the stream ends; `welcomed` tells whether the session got as far as a Welcome. */
export class SessionEndedError extends Error {
  readonly welcomed: boolean;
  constructor(message: string, welcomed: boolean, cause?: unknown) {
    super(message, { cause });
    this.name = 'SessionEndedError';
    this.welcomed = welcomed;
  }
}

/** Describes an account for the Hello (and for AccountReports). */
export function accountInfo(prepared: PreparedAccount): AccountInfo {
  return create(AccountInfoSchema, {
    name: prepared.config.name,
    apiHost: prepared.apiHost,
    caFingerprint: prepared.caFingerprint,
    kubernetesVersion: prepared.kubernetesVersion,
    namespaces: prepared.config.namespaces,
    kinds: prepared.kinds.map((k) => create(KindInfoSchema, { apiVersion: k.apiVersion, kind: k.kind, resource: k.resource, namespaced: k.namespaced })),
    skippedKinds: prepared.skipped.map((s) => create(SkippedKindSchema, s)),
    properties: prepared.config.properties,
    error: prepared.error,
  });
}

const verdictName = (v: Verdict) =>
  v === Verdict.CACHING ? 'caching' : v === Verdict.STANDBY ? 'standby' : v === Verdict.REFUSED ? 'refused' : 'unknown';

/** Runs one session until it ends. Resolves only when the agent closes; otherwise throws {@link SessionEndedError}. */
export async function runSession(options: SessionOptions): Promise<void> {
  const { state, logger, signal } = options;
  const controller = new AbortController();
  // Every watcher listens on this signal: hundreds of scopes are normal.
  setMaxListeners(0, controller.signal);
  const onClose = () => controller.abort();
  signal.addEventListener('abort', onClose, { once: true });
  const requests = createPushable<ConnectRequest>();
  const timers: NodeJS.Timeout[] = [];
  const watchers: Promise<void>[] = [];
  let outbox: Outbox | undefined;
  let welcomed = false;
  let deadPeer: string | undefined;
  let lastReceived = Date.now();
  let heartbeatSeconds = options.heartbeatSeconds;

  const send = (message: ConnectRequest['message']) => requests.push(create(ConnectRequestSchema, { message }));

  function startHeartbeats(): void {
    for (const t of timers.splice(0)) clearInterval(t);
    if (heartbeatSeconds <= 0) return;
    const intervalMs = heartbeatSeconds * 1000;
    timers.push(
      setInterval(() => send({ case: 'heartbeat', value: create(HeartbeatSchema, { agentId: options.agentId, sentAtUnixMs: BigInt(Date.now()) }) }), intervalMs),
    );
    const deadAfterMs = intervalMs * AGENT_DEFAULTS.deadPeerIntervals;
    timers.push(
      setInterval(() => {
        if (Date.now() - lastReceived > deadAfterMs) {
          deadPeer = `no message from the gateway for ${Math.round((Date.now() - lastReceived) / 1000)} s (heartbeat interval ${heartbeatSeconds} s); treating it as dead`;
          controller.abort();
        }
      }, Math.min(1000, intervalMs / 4)),
    );
  }

  function reportProgress(): void {
    for (const account of state.accounts) {
      const active = account.watches.filter((w) => w.listInProgress || w.listFinished);
      if (active.length === 0) continue;
      const progress = active.map((w) =>
        create(SyncProgressSchema, { apiVersion: w.apiVersion, kind: w.kind, namespace: w.namespace, listed: BigInt(w.listed), done: !w.listInProgress }),
      );
      for (const w of active) {
        if (w.listInProgress) logger.info({ account: account.prepared.config.name, kind: w.kind, namespace: w.namespace || undefined, listed: w.listed }, 'listing');
        w.listFinished = false;
      }
      send({ case: 'accountReport', value: create(AccountReportSchema, { account: accountInfo(account.prepared), progress }) });
    }
  }

  function onWelcome(welcome: Welcome): void {
    welcomed = true;
    state.connected = true;
    state.sessionId = welcome.sessionId;
    if (welcome.heartbeatIntervalSeconds > 0) heartbeatSeconds = welcome.heartbeatIntervalSeconds;
    startHeartbeats();
    const maxUnacked = welcome.maxUnacked > 0 ? welcome.maxUnacked : AGENT_DEFAULTS.maxUnacked;
    logger.info({ sessionId: welcome.sessionId, gatewayId: welcome.gatewayId, heartbeatSeconds, maxUnacked }, 'welcomed by the gateway');
    outbox = createOutbox({
      send: (message) => requests.push(message),
      maxUnacked,
      batchMaxEvents: AGENT_DEFAULTS.batchMaxEvents,
      batchMaxBytes: AGENT_DEFAULTS.batchMaxBytes,
      batchFlushMs: AGENT_DEFAULTS.batchFlushMs,
    });
    for (const account of state.accounts) {
      const name = account.prepared.config.name;
      const verdict = welcome.accounts.find((a) => a.account === name);
      account.verdict = verdict ? verdictName(verdict.verdict) : 'unknown';
      account.reason = verdict?.reason || undefined;
      const log = logger.child({ account: name });
      if (verdict === undefined) {
        log.warn('the Welcome has no verdict for this account; not streaming it');
        continue;
      }
      if (verdict.verdict !== Verdict.CACHING) {
        log.info({ verdict: account.verdict, reason: verdict.reason }, `account ${account.verdict}: not streaming`);
        continue;
      }
      const client = account.prepared.client;
      if (client === undefined) continue;
      for (const scope of account.prepared.scopes) {
        const resume = verdict.resume.find(
          (r) => r.apiVersion === scope.type.apiVersion && r.kind === scope.type.kind && r.watchNamespace === scope.namespace && r.resourceVersion !== '',
        );
        const watchState: WatchState = {
          apiVersion: scope.type.apiVersion,
          kind: scope.type.kind,
          namespace: scope.namespace,
          state: resume ? 'watching' : 'listing',
          resourceVersion: resume?.resourceVersion ?? '',
          listed: 0,
          listInProgress: false,
          listFinished: false,
        };
        account.watches.push(watchState);
        watchers.push(
          runScopeWatcher({
            account: name,
            client,
            scope,
            outbox,
            state: watchState,
            resumeResourceVersion: resume?.resourceVersion,
            pageSize: AGENT_DEFAULTS.listPageSize,
            backoff: AGENT_DEFAULTS.watchBackoff,
            logger: log,
            signal: controller.signal,
          }),
        );
      }
    }
    timers.push(setInterval(reportProgress, AGENT_DEFAULTS.progressIntervalMs));
    options.operations?.attach((result) => send({ case: 'operationResult', value: result }));
  }

  for (const account of state.accounts) {
    account.verdict = 'unknown';
    account.reason = undefined;
    account.watches = [];
  }
  send({
    case: 'hello',
    value: create(HelloSchema, {
      agentId: options.agentId,
      zone: options.zone,
      version: options.version,
      replicas: options.replicas,
      accounts: state.accounts.map((a) => accountInfo(a.prepared)),
    }),
  });
  startHeartbeats();
  try {
    const responses = options.client.connect(requests, { signal: controller.signal, headers: options.headers });
    for await (const response of responses) {
      lastReceived = Date.now();
      const message = response.message;
      if (message.case === 'welcome') {
        if (welcomed) logger.warn('ignoring a second Welcome on the same stream');
        else onWelcome(message.value);
      } else if (message.case === 'ack') {
        outbox?.ack(message.value.sequence);
      } else if (message.case === 'operation' && welcomed) {
        if (options.operations) options.operations.submit(message.value);
        else logger.warn({ operationId: message.value.id }, 'received an operation but this agent runs none');
      } else if (!welcomed && message.case !== 'heartbeat') {
        throw new Error(`protocol error: expected a Welcome first, got ${String(message.case)}`);
      }
    }
    if (signal.aborted) return;
    throw new SessionEndedError('the gateway ended the stream', welcomed);
  } catch (err) {
    if (signal.aborted) return;
    if (err instanceof SessionEndedError) throw err;
    throw new SessionEndedError(deadPeer ?? (err as Error).message, welcomed, err);
  } finally {
    if (welcomed) options.operations?.detach();
    signal.removeEventListener('abort', onClose);
    controller.abort();
    for (const t of timers) clearInterval(t);
    requests.end();
    outbox?.close();
    await Promise.allSettled(watchers);
    state.connected = false;
    state.sessionId = undefined;
  }
}
