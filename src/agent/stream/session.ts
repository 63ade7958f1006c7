/**
 * One session on the gateway stream: Hello → Welcome, then the watchers of every CACHING account stream through one
 * outbox; acks release the window; heartbeats flow both ways. The session ends (and everything it started stops, its
 * unacknowledged data discarded) when the stream ends or fails, when the gateway is silent for too long, or when the
 * agent closes. The caller reconnects and starts a fresh session from the new Welcome's resume points.
 *
 * Accounts have their own watch lifecycle inside the session: an account added or removed mid-session (config file
 * reloaded, gateway AccountCommand) is announced with an AccountsChanged, and only that account's watchers start (once
 * its AccountVerdicts say CACHING) or stop. The gateway may also push verdict changes on its own (AccountVerdicts with
 * change_id 0, see verdict-updates.ts): a STANDBY account promoted to CACHING starts streaming, a demoted one stops.
 * The Welcome's session token is kept and presented in the next Hello to resume the session; it is never logged.
 */
import { setMaxListeners } from 'node:events';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from 'pino';
import { HelloSchema, type AccountCommand, type ConnectRequest, type Welcome } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import { accountInfo } from '../accounts/account-info.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import { createKubeProxy, type KubeProxy } from '../kube-proxy/kube-proxy.js';
import type { StreamRecorder } from '../metrics/agent-metrics.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import { createClosers } from '../../shared/closers.js';
import { stopAccountWatchers } from './account-watchers.js';
import { createOutbox } from './outbox.js';
import { createPushable } from './pushable.js';
import { SameReplicaError, SessionEndedError } from './session-errors.js';
import { createSessionRun, send, type SessionRun } from './session-run.js';
import { startHeartbeats, startProgressReports } from './session-timers.js';
import { applyVerdict, createLiveSession, onVerdicts, sendAccountsChanged } from './session-verdicts.js';
import type { StreamConnect } from './stream-connect.js';
import type { TransportPick } from './transport-choice.js';

export { SameReplicaError, SessionEndedError } from './session-errors.js';

/** Session state shared with the status snapshot, the account manager and the next sessions. */
export interface SessionState {
  connected: boolean;
  sessionId?: string;
  accounts: AccountRuntime[];
  /** The running session, from its Hello until it ends: account changes are announced through it. */
  live?: LiveSession;
  /** The last Welcome's session id and token, presented in the next Hello; cleared when the gateway refuses them. */
  resume?: { sessionId: string; token: string };
  /** The last AccountsChanged change_id (grows for the life of the process). */
  lastChangeId: bigint;
  /** The transport of the current or last connection attempt, why it was chosen, and the URL dialled. */
  transport?: TransportPick & { url: string };
  /** The gateway replica of the running session (its Welcome's `gateway_id`); undefined between sessions. */
  gatewayId?: string;
}

/** The running session, as the account manager sees it. */
export interface LiveSession {
  /**
   * Tells the gateway that `removed` are no longer served and `added` are (the caller has already updated
   * `state.accounts`). Synchronously stops the removed accounts' watchers and drops their unsent data, then sends one
   * AccountsChanged (right away, or just after the Welcome when it has not come yet). The added accounts stream once
   * their AccountVerdicts say CACHING. Resolves when the removed accounts' watchers have returned.
   */
  announce(removed: AccountRuntime[], added: AccountRuntime[]): Promise<void>;
  /** Data messages sent on this stream and not acknowledged yet (0 before the Welcome). */
  unacked(): number;
}

/** Options of {@link runSession}. */
export interface SessionOptions {
  /** Opens the stream on the attempt's transport (gRPC or WebSocket: stream-connect.ts). */
  connect: StreamConnect;
  headers: Record<string, string>;
  agentId: string;
  zone: string;
  version: string;
  replicas: number;
  /** Which of the agent's connections this is (`Hello.connection`: 0, or 1 for the second of `clouddriver.connections: 2`). */
  connection?: number;
  /**
   * Asked at the Welcome: true when the agent's other connection is live on that same replica and this one should
   * reconnect to reach another (`clouddriver.connections: 2`). The session then ends with {@link SameReplicaError}.
   */
  sameReplica?: (gatewayId: string) => boolean;
  /** Heartbeat interval until the Welcome gives one; 0 disables heartbeats (and dead-peer detection). */
  heartbeatSeconds: number;
  state: SessionState;
  /** Runs the operations the gateway sends; lives across sessions (results of one may go out on the next). */
  operations?: OperationRunner;
  logger: Logger;
  /** Told about every data message written to the stream (the agent's metrics). */
  recorder?: StreamRecorder;
  /** Receives the gateway's AccountCommands (dynamic accounts); applied asynchronously by the caller. */
  onAccountCommand?: (command: AccountCommand) => void;
  /** Aborts when the agent closes. */
  signal: AbortSignal;
}

/** Runs one session until it ends. Resolves only when the agent closes; otherwise throws {@link SessionEndedError}. */
export async function runSession(options: SessionOptions): Promise<void> {
  const { state, logger, signal } = options;
  // Each part registers how it stops as it starts (src/shared/closers.ts); at the end they run newest first: account
  // changes are no longer announced through the session, the operations runner is detached, kubectl requests end, the
  // session is aborted, the timers stop, the requests end, every account's watchers stop, the outbox closes, the
  // watchers are waited for, and the shared state forgets the session. A step that fails is logged; the others run.
  const closers = createClosers((step, err) => logger.error({ err }, `could not ${step}`));
  closers.defer('forget the session', () => {
    state.connected = false;
    state.sessionId = undefined;
    state.gatewayId = undefined;
  });
  const requests = createPushable<ConnectRequest>();
  const controller = new AbortController();
  // Every account's watchers listen on this signal.
  setMaxListeners(0, controller.signal);
  const run = createSessionRun(options, requests, controller);
  closers.defer('wait for the watchers', () => Promise.allSettled(run.watchers));
  closers.defer('close the outbox', () => run.outbox?.close());
  closers.defer('stop the watchers', () => {
    for (const account of state.accounts) run.watchers.push(stopAccountWatchers(account));
  });
  closers.defer('end the requests', () => requests.end());
  closers.defer('stop the timers', () => {
    for (const t of run.timers) clearInterval(t);
  });
  closers.defer('abort the session', () => controller.abort());
  const onClose = () => controller.abort();
  signal.addEventListener('abort', onClose, { once: true });
  closers.defer('stop listening for the agent closing', () => signal.removeEventListener('abort', onClose));
  // kubectl through the gateway: requests of this session only (the gateway answered their callers when it ends).
  const kubeProxy = createKubeProxy({
    account: (name) => state.accounts.find((a) => a.prepared.config.name === name),
    send: (value) => send(run, { case: 'kubeResponse', value }),
    logger: logger.child({ component: 'kube-proxy' }),
  });
  closers.defer('end the kubectl requests', () => kubeProxy.close('the agent stream ended'));
  // The runner is attached at the Welcome.
  closers.defer('detach the operations runner', () => {
    if (run.welcomed) options.operations?.detach();
  });
  const live = createLiveSession(run);
  sendHello(run);
  state.live = live;
  closers.defer('stop announcing account changes', () => {
    if (state.live === live) state.live = undefined;
  });
  startHeartbeats(run);
  try {
    await receive(run, kubeProxy);
    if (signal.aborted) return;
    if (run.sameReplica !== undefined) throw new SameReplicaError(run.sameReplica);
    throw new SessionEndedError('the gateway ended the stream', run.welcomed);
  } catch (err) {
    if (signal.aborted) return;
    if (run.sameReplica !== undefined) throw new SameReplicaError(run.sameReplica);
    const { resumed } = run;
    if (!run.welcomed && resumed !== undefined && ConnectError.from(err).code === Code.Unauthenticated && state.resume === resumed) {
      state.resume = undefined;
      logger.warn(
        { sessionId: resumed.sessionId },
        `the gateway refused to resume session ${resumed.sessionId}; the next attempt connects as a new session`,
      );
    }
    if (err instanceof SessionEndedError) throw err;
    throw new SessionEndedError(run.deadPeer ?? (err as Error).message, run.welcomed, err);
  } finally {
    await closers.close();
  }
}

/** Announces the session's accounts (their verdicts unknown until the Welcome) and the session it resumes. */
function sendHello(run: SessionRun): void {
  const { options, state, resumed } = run;
  for (const account of state.accounts) {
    account.verdict = 'unknown';
    account.reason = undefined;
    account.watches = [];
  }
  send(run, {
    case: 'hello',
    value: create(HelloSchema, {
      agentId: options.agentId,
      zone: options.zone,
      version: options.version,
      replicas: options.replicas,
      accounts: state.accounts.map((a) => accountInfo(a.prepared)),
      resumeSessionId: resumed?.sessionId ?? '',
      resumeSessionToken: resumed?.token ?? '',
      connection: options.connection ?? 0,
    }),
  });
}

/** Reads the gateway's messages until the stream ends (returns) or fails (throws). */
async function receive(run: SessionRun, kubeProxy: KubeProxy): Promise<void> {
  const { options } = run;
  const { logger } = options;
  const responses = options.connect(run.requests, { signal: run.controller.signal, headers: options.headers });
  for await (const response of responses) {
    run.lastReceived = Date.now();
    const message = response.message;
    if (message.case === 'welcome') {
      if (run.welcomed) logger.warn('ignoring a second Welcome on the same stream');
      else onWelcome(run, message.value);
    } else if (message.case === 'ack') {
      run.outbox?.ack(message.value.sequence);
    } else if (message.case === 'operation' && run.welcomed) {
      if (options.operations) options.operations.submit(message.value);
      else logger.warn({ operationId: message.value.id }, 'received an operation but this agent runs none');
    } else if (message.case === 'kubeRequest' && run.welcomed) {
      kubeProxy.received(message.value);
    } else if (message.case === 'verdicts' && run.welcomed) {
      onVerdicts(run, message.value);
    } else if (message.case === 'accountCommand' && run.welcomed) {
      if (options.onAccountCommand) options.onAccountCommand(message.value);
      else logger.warn({ account: message.value.account?.name }, 'received an account command but this agent takes none');
    } else if (!run.welcomed && message.case !== 'heartbeat') {
      throw new Error(`protocol error: expected a Welcome first, got ${String(message.case)}`);
    }
  }
}

/**
 * The Welcome: the session token is kept for the next Hello, the session ends at once when the other connection is on
 * the same replica, and otherwise the data outbox opens, the Hello's accounts get their verdicts, the announcements held
 * until now go out, and the operations runner sends its results here.
 */
function onWelcome(run: SessionRun, welcome: Welcome): void {
  const { options, state } = run;
  run.welcomed = true;
  state.sessionId = welcome.sessionId;
  state.resume = welcome.sessionToken !== '' ? { sessionId: welcome.sessionId, token: welcome.sessionToken } : undefined;
  if (options.sameReplica?.(welcome.gatewayId)) {
    run.sameReplica = welcome.gatewayId;
    run.controller.abort();
    return;
  }
  state.connected = true;
  state.gatewayId = welcome.gatewayId;
  if (welcome.heartbeatIntervalSeconds > 0) run.heartbeatSeconds = welcome.heartbeatIntervalSeconds;
  startHeartbeats(run);
  const maxUnacked = welcome.maxUnacked > 0 ? welcome.maxUnacked : AGENT_DEFAULTS.maxUnacked;
  options.logger.info(
    {
      sessionId: welcome.sessionId,
      gatewayId: welcome.gatewayId,
      heartbeatSeconds: run.heartbeatSeconds,
      maxUnacked,
      resumed: run.resumed?.sessionId,
    },
    'welcomed by the gateway',
  );
  const { recorder } = options;
  run.outbox = createOutbox({
    send: recorder
      ? (message) => {
          run.requests.push(message);
          recorder.dataSent(message);
        }
      : (message) => run.requests.push(message),
    maxUnacked,
    batchMaxEvents: AGENT_DEFAULTS.batchMaxEvents,
    batchMaxBytes: AGENT_DEFAULTS.batchMaxBytes,
    batchFlushMs: AGENT_DEFAULTS.batchFlushMs,
  });
  const announcedLater = new Set(run.beforeWelcome.flatMap((c) => c.added));
  for (const account of state.accounts) {
    if (!run.helloAccounts.has(account) || announcedLater.has(account)) continue;
    applyVerdict(
      run,
      account,
      welcome.accounts.find((a) => a.account === account.prepared.config.name),
    );
  }
  for (const change of run.beforeWelcome.splice(0)) sendAccountsChanged(run, change.removed, change.added);
  startProgressReports(run);
  options.operations?.attach((result) => send(run, { case: 'operationResult', value: result }));
}
