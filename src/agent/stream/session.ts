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
import {
  AccountsChangedSchema,
  AccountReportSchema,
  ConnectRequestSchema,
  HeartbeatSchema,
  HelloSchema,
  SyncProgressSchema,
  Verdict,
  type AccountCommand,
  type AccountVerdict,
  type AccountVerdicts,
  type ConnectRequest,
  type Welcome,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AccountRuntime } from '../accounts/account-runtime.js';
import { AGENT_DEFAULTS } from '../config/defaults.js';
import type { StreamRecorder } from '../metrics/agent-metrics.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import { startAccountWatchers, stopAccountWatchers } from './account-watchers.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createPushable } from './pushable.js';
import type { StreamConnect } from './stream-connect.js';
import type { TransportPick } from './transport-choice.js';
import { applyVerdictUpdate } from './verdict-updates.js';
import { SameReplicaError, SessionEndedError } from './session-errors.js';
import { accountInfo } from '../accounts/account-info.js';
import { createKubeProxy } from '../kube-proxy/kube-proxy.js';

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
interface LiveSession {
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

const verdictName = (v: Verdict) =>
  v === Verdict.CACHING ? 'caching' : v === Verdict.STANDBY ? 'standby' : v === Verdict.REFUSED ? 'refused' : 'unknown';

/** Runs one session until it ends. Resolves only when the agent closes; otherwise throws {@link SessionEndedError}. */
export async function runSession(options: SessionOptions): Promise<void> {
  const { state, logger, signal } = options;
  const controller = new AbortController();
  // Every account's watchers listen on this signal.
  setMaxListeners(0, controller.signal);
  const onClose = () => controller.abort();
  signal.addEventListener('abort', onClose, { once: true });
  const requests = createPushable<ConnectRequest>();
  const timers: NodeJS.Timeout[] = [];
  const stopped: Promise<void>[] = [];
  /** Accounts the gateway knows in this session (from the Hello or an AccountsChanged). */
  const known = new Set<AccountRuntime>(state.accounts);
  /** Accounts of each unanswered AccountsChanged, by change_id. */
  const awaitingVerdicts = new Map<bigint, AccountRuntime[]>();
  /** Announcements made before the Welcome, sent just after it. */
  const beforeWelcome: Array<{ removed: string[]; added: AccountRuntime[] }> = [];
  const resumed = state.resume;
  let outbox: Outbox | undefined;
  let welcomed = false;
  let deadPeer: string | undefined;
  let sameReplica: string | undefined;
  let lastReceived = Date.now();
  let heartbeatSeconds = options.heartbeatSeconds;

  const send = (message: ConnectRequest['message']) => requests.push(create(ConnectRequestSchema, { message }));
  // kubectl through the gateway: requests of this session only (the gateway answered their callers when it ends).
  const kubeProxy = createKubeProxy({
    account: (name) => state.accounts.find((a) => a.prepared.config.name === name),
    send: (value) => send({ case: 'kubeResponse', value }),
    logger: logger.child({ component: 'kube-proxy' }),
  });

  function startHeartbeats(): void {
    for (const t of timers.splice(0)) clearInterval(t);
    if (heartbeatSeconds <= 0) return;
    const intervalMs = heartbeatSeconds * 1000;
    timers.push(
      setInterval(
        () => send({ case: 'heartbeat', value: create(HeartbeatSchema, { agentId: options.agentId, sentAtUnixMs: BigInt(Date.now()) }) }),
        intervalMs,
      ),
    );
    const deadAfterMs = intervalMs * AGENT_DEFAULTS.deadPeerIntervals;
    timers.push(
      setInterval(
        () => {
          if (Date.now() - lastReceived > deadAfterMs) {
            deadPeer = `no message from the gateway for ${Math.round((Date.now() - lastReceived) / 1000)} s (heartbeat interval ${heartbeatSeconds} s); treating it as dead`;
            controller.abort();
          }
        },
        Math.min(1000, intervalMs / 4),
      ),
    );
  }

  /** What was last reported per account in this session (an unchanged report is not sent again). */
  const reported = new Map<AccountRuntime, string>();

  function reportProgress(): void {
    for (const account of state.accounts) {
      const active = account.watches.filter((w) => w.listInProgress || w.listFinished);
      if (active.length === 0) continue;
      // Only progress that moved is reported (and logged): each report is a database write at the gateway, and
      // hundreds of accounts re-reporting lists stalled behind backpressure saturated it, which kept them stalled.
      const key = active.map((w) => `${w.kind}/${w.namespace}:${w.listed}:${w.listInProgress ? 0 : 1}`).join(',');
      if (reported.get(account) === key) continue;
      reported.set(account, key);
      const progress = active.map((w) =>
        create(SyncProgressSchema, {
          apiVersion: w.apiVersion,
          kind: w.kind,
          namespace: w.namespace,
          listed: BigInt(w.listed),
          done: !w.listInProgress,
        }),
      );
      for (const w of active) {
        if (w.listInProgress)
          logger.info(
            { account: account.prepared.config.name, kind: w.kind, namespace: w.namespace || undefined, listed: w.listed },
            'listing',
          );
        w.listFinished = false;
      }
      send({ case: 'accountReport', value: create(AccountReportSchema, { account: accountInfo(account.prepared), progress }) });
    }
  }

  /** Records the gateway's verdict for one account and starts its watchers when CACHING. */
  function applyVerdict(account: AccountRuntime, verdict: AccountVerdict | undefined): void {
    const name = account.prepared.config.name;
    account.verdict = verdict ? verdictName(verdict.verdict) : 'unknown';
    account.reason = verdict?.reason || undefined;
    const log = logger.child({ account: name });
    if (verdict === undefined) {
      log.warn('the gateway gave no verdict for this account; not streaming it');
      return;
    }
    if (verdict.verdict === Verdict.REFUSED) {
      log.warn(
        { verdict: account.verdict, reason: verdict.reason },
        `account refused by the gateway: ${verdict.reason || 'no reason given'}; not streaming it`,
      );
      return;
    }
    if (verdict.verdict !== Verdict.CACHING) {
      log.info({ verdict: account.verdict, reason: verdict.reason }, `account ${account.verdict}: not streaming`);
      return;
    }
    if (outbox === undefined || account.prepared.client === undefined) return;
    if (account.run !== undefined) stopped.push(stopAccountWatchers(account, outbox));
    startAccountWatchers(account, { outbox, verdict, logger: log, sessionSignal: controller.signal });
    const run = account.run;
    if (run !== undefined) stopped.push(run.done);
  }

  function sendAccountsChanged(removed: string[], added: AccountRuntime[]): void {
    const changeId = ++state.lastChangeId;
    if (added.length > 0) awaitingVerdicts.set(changeId, added);
    send({
      case: 'accountsChanged',
      value: create(AccountsChangedSchema, { changeId, removed, added: added.map((a) => accountInfo(a.prepared)) }),
    });
    logger.info(
      { changeId: Number(changeId), removed, added: added.map((a) => a.prepared.config.name) },
      'announced account changes to the gateway',
    );
  }

  function onVerdicts(verdicts: AccountVerdicts): void {
    if (verdicts.changeId === 0n) {
      // Pushed by the gateway on its own (promotion from STANDBY, or a demotion).
      applyVerdictUpdate(verdicts, {
        accounts: known,
        startCaching: applyVerdict,
        stopWatchers: (account) => stopped.push(stopAccountWatchers(account, outbox)),
        logger,
      });
      return;
    }
    const added = awaitingVerdicts.get(verdicts.changeId);
    if (added === undefined) {
      logger.warn({ changeId: Number(verdicts.changeId) }, 'ignoring AccountVerdicts for an unknown change');
      return;
    }
    awaitingVerdicts.delete(verdicts.changeId);
    added.forEach((account, index) => {
      if (!state.accounts.includes(account)) return; // removed again meanwhile
      const name = account.prepared.config.name;
      const byName = verdicts.accounts.find((v) => v.account === name);
      const byOrder = verdicts.accounts[index];
      applyVerdict(account, byName ?? (byOrder && byOrder.account === '' ? byOrder : undefined));
    });
  }

  function onWelcome(welcome: Welcome): void {
    welcomed = true;
    state.sessionId = welcome.sessionId;
    state.resume = welcome.sessionToken !== '' ? { sessionId: welcome.sessionId, token: welcome.sessionToken } : undefined;
    if (options.sameReplica?.(welcome.gatewayId)) {
      sameReplica = welcome.gatewayId;
      controller.abort();
      return;
    }
    state.connected = true;
    state.gatewayId = welcome.gatewayId;
    if (welcome.heartbeatIntervalSeconds > 0) heartbeatSeconds = welcome.heartbeatIntervalSeconds;
    startHeartbeats();
    const maxUnacked = welcome.maxUnacked > 0 ? welcome.maxUnacked : AGENT_DEFAULTS.maxUnacked;
    logger.info(
      { sessionId: welcome.sessionId, gatewayId: welcome.gatewayId, heartbeatSeconds, maxUnacked, resumed: resumed?.sessionId },
      'welcomed by the gateway',
    );
    const recorder = options.recorder;
    outbox = createOutbox({
      send: recorder
        ? (message) => {
            requests.push(message);
            recorder.dataSent(message);
          }
        : (message) => requests.push(message),
      maxUnacked,
      batchMaxEvents: AGENT_DEFAULTS.batchMaxEvents,
      batchMaxBytes: AGENT_DEFAULTS.batchMaxBytes,
      batchFlushMs: AGENT_DEFAULTS.batchFlushMs,
    });
    const announcedLater = new Set(beforeWelcome.flatMap((c) => c.added));
    for (const account of state.accounts) {
      if (!helloAccounts.has(account) || announcedLater.has(account)) continue;
      applyVerdict(
        account,
        welcome.accounts.find((a) => a.account === account.prepared.config.name),
      );
    }
    for (const change of beforeWelcome.splice(0)) sendAccountsChanged(change.removed, change.added);
    timers.push(setInterval(reportProgress, AGENT_DEFAULTS.progressIntervalMs));
    options.operations?.attach((result) => send({ case: 'operationResult', value: result }));
  }

  const live: LiveSession = {
    announce(removed, added) {
      const done = removed.map((account) => stopAccountWatchers(account, outbox));
      const removedNames = removed.filter((a) => known.delete(a)).map((a) => a.prepared.config.name);
      for (const account of added) {
        account.verdict = 'unknown';
        account.reason = undefined;
        account.watches = [];
        known.add(account);
      }
      if (removedNames.length > 0 || added.length > 0) {
        if (welcomed) sendAccountsChanged(removedNames, added);
        else beforeWelcome.push({ removed: removedNames, added });
      }
      return Promise.all(done).then(() => undefined);
    },
    unacked: () => outbox?.inFlight ?? 0,
  };

  for (const account of state.accounts) {
    account.verdict = 'unknown';
    account.reason = undefined;
    account.watches = [];
  }
  const helloAccounts = new Set(state.accounts);
  send({
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
  state.live = live;
  startHeartbeats();
  try {
    const responses = options.connect(requests, { signal: controller.signal, headers: options.headers });
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
      } else if (message.case === 'kubeRequest' && welcomed) {
        kubeProxy.received(message.value);
      } else if (message.case === 'verdicts' && welcomed) {
        onVerdicts(message.value);
      } else if (message.case === 'accountCommand' && welcomed) {
        if (options.onAccountCommand) options.onAccountCommand(message.value);
        else logger.warn({ account: message.value.account?.name }, 'received an account command but this agent takes none');
      } else if (!welcomed && message.case !== 'heartbeat') {
        throw new Error(`protocol error: expected a Welcome first, got ${String(message.case)}`);
      }
    }
    if (signal.aborted) return;
    if (sameReplica !== undefined) throw new SameReplicaError(sameReplica);
    throw new SessionEndedError('the gateway ended the stream', welcomed);
  } catch (err) {
    if (signal.aborted) return;
    if (sameReplica !== undefined) throw new SameReplicaError(sameReplica);
    if (!welcomed && resumed !== undefined && ConnectError.from(err).code === Code.Unauthenticated && state.resume === resumed) {
      state.resume = undefined;
      logger.warn(
        { sessionId: resumed.sessionId },
        `the gateway refused to resume session ${resumed.sessionId}; the next attempt connects as a new session`,
      );
    }
    if (err instanceof SessionEndedError) throw err;
    throw new SessionEndedError(deadPeer ?? (err as Error).message, welcomed, err);
  } finally {
    if (state.live === live) state.live = undefined;
    if (welcomed) options.operations?.detach();
    kubeProxy.close('the agent stream ended');
    signal.removeEventListener('abort', onClose);
    controller.abort();
    for (const t of timers) clearInterval(t);
    requests.end();
    for (const account of state.accounts) stopped.push(stopAccountWatchers(account));
    outbox?.close();
    await Promise.allSettled(stopped);
    state.connected = false;
    state.sessionId = undefined;
    state.gatewayId = undefined;
  }
}
