/**
 * Keeps the agent connected: refreshes the accounts, gets the bearer token, opens a session, and when it ends
 * reconnects forever with exponential backoff and full jitter, logging each failure (address, error, next retry).
 * Account preparation is redone when it failed or is older than a minute, so a reconnect also picks up new kinds and
 * RBAC changes. Headers (and so the token) are recomputed for every attempt; after the gateway refused the
 * credentials (UNAUTHENTICATED, e.g. the stream ended because its JWT expired) the token source fetches a new token
 * first. The session token is kept when a welcomed stream ends that way, so the next Hello resumes the session.
 * A welcomed stream the gateway ended on purpose (its maximum age, trailer `x-outpost-reconnect: now`) is not a
 * failure: the agent reconnects at once, resumes its session, and the backoff starts over. Nor is the loss of a stream
 * that lived `reconnect.stableSeconds`: its first retry goes at once, later ones with the backoff.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Logger } from 'pino';
import type { AccountManager } from '../accounts/account-manager.js';
import type { AgentConfig } from '../config/schema.js';
import type { StreamRecorder } from '../metrics/agent-metrics.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import { backoffDelayMs, sleep } from './backoff.js';
import { runSession, SameReplicaError, SessionEndedError, type SessionState } from './session.js';
import type { TokenSource } from './token-source.js';
import { createTransportChoice } from './transport-choice.js';
import { diagnoseGrpcFailure, explainConnectError, openGatewayConnection, webSocketUrl, type GatewayConnection } from './transport.js';

/** Trailer the gateway sets on a stream it ended on purpose (see the gateway's stream-timers.ts). */
const RECONNECT_HEADER = 'x-outpost-reconnect';

/** True when the gateway asked for an immediate reconnect (maximum stream age reached). */
function reconnectRequested(err: unknown): boolean {
  if (!(err instanceof SessionEndedError) || !err.welcomed || err.cause === undefined) return false;
  return ConnectError.from(err.cause).metadata.get(RECONNECT_HEADER) === 'now';
}

/** Reconnects in a row to reach a replica other than the other connection's before settling for the same one. */
export const MAX_SAME_REPLICA_TRIES = 5;

/** Options of {@link runConnectionLoop}. */
export interface ConnectionLoopOptions {
  config: AgentConfig;
  agentId: string;
  zone: string;
  version: string;
  state: SessionState;
  /** Prepares and changes the account set. */
  accounts: AccountManager;
  /** The bearer token for each attempt. */
  token: TokenSource;
  /** Shared by every session (see `SessionOptions.operations`). */
  operations?: OperationRunner;
  /** The agent's metrics: data sent, and every welcomed session that ends. */
  recorder?: StreamRecorder;
  /** Which of the agent's connections this loop keeps (`clouddriver.connections`): 0 (default) or 1. */
  connection?: number;
  /**
   * The gateway replica the agent's other connection is live on, if any: a Welcome from that same replica ends the
   * session and this loop reconnects at once to reach another (at most {@link MAX_SAME_REPLICA_TRIES} times in a row).
   */
  otherGatewayId?: () => string | undefined;
  logger: Logger;
  signal: AbortSignal;
}

/** Runs until `signal` aborts. Never rejects. */
export async function runConnectionLoop(options: ConnectionLoopOptions): Promise<void> {
  const { config, state, logger, signal } = options;
  let address = config.clouddriver.grpc;
  const choice = createTransportChoice(config.clouddriver.transport, config.clouddriver.transportRetrySeconds);
  let attempt = 0;
  let lastTransport = '';
  let sameReplicaTries = 0;
  const log = options.connection ? logger.child({ connection: options.connection }) : logger;
  while (!signal.aborted) {
    const started = Date.now();
    const pick = choice.next();
    let connection: GatewayConnection | undefined;
    try {
      const headers: Record<string, string> = { 'x-outpost-agent-id': options.agentId };
      const token = await options.token.current();
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      await options.accounts.refresh();
      if (signal.aborted) break;
      address = pick.kind === 'grpc' ? config.clouddriver.grpc : webSocketUrl(config.clouddriver).href;
      connection = await openGatewayConnection(pick.kind, config.clouddriver, { signal });
      state.transport = { ...pick, url: connection.url };
      const label = `${pick.kind} ${pick.reason}`;
      if (label !== lastTransport) {
        lastTransport = label;
        const name = pick.kind === 'grpc' ? 'gRPC over HTTP/2' : 'WebSocket';
        log.info({ gateway: connection.url, transport: pick.kind, why: pick.reason }, `transport: ${name} (${pick.reason})`);
      }
      log[attempt === 0 ? 'info' : 'debug']({ gateway: connection.url, transport: pick.kind }, 'connecting to the gateway');
      await runSession({
        connect: connection.connect,
        headers,
        agentId: options.agentId,
        zone: options.zone,
        version: options.version,
        replicas: config.agent.replicas,
        connection: options.connection ?? 0,
        sameReplica: options.otherGatewayId
          ? (gatewayId) => {
              if (options.otherGatewayId?.() !== gatewayId) return false;
              if (sameReplicaTries < MAX_SAME_REPLICA_TRIES) return true;
              log.warn(
                { gatewayId, tries: sameReplicaTries },
                `both connections reached gateway replica ${gatewayId} after ${sameReplicaTries} tries: only one replica seems reachable; keeping it`,
              );
              return false;
            }
          : undefined,
        heartbeatSeconds: config.clouddriver.keepAliveHeartbeatSeconds,
        state,
        operations: options.operations,
        recorder: options.recorder,
        onAccountCommand: (command) => void options.accounts.applyCommand(command),
        logger: log,
        signal,
      });
    } catch (err) {
      if (signal.aborted) break;
      const welcomed = err instanceof SessionEndedError && err.welcomed;
      if (err instanceof SameReplicaError) {
        sameReplicaTries++;
        log.info({ tries: sameReplicaTries }, err.message);
        continue;
      }
      if (welcomed) sameReplicaTries = 0;
      if (welcomed) options.recorder?.disconnected();
      if (err instanceof SessionEndedError && err.cause !== undefined && ConnectError.from(err.cause).code === Code.Unauthenticated) {
        options.token.rejected();
      }
      let failure = (err as Error).message;
      if (!welcomed && pick.kind === 'grpc') {
        const cause = err instanceof SessionEndedError ? (err.cause ?? err) : err;
        const diagnosis = await diagnoseGrpcFailure(cause, failure, config.clouddriver, { signal });
        failure = diagnosis.message;
        if (diagnosis.cannotPass && choice.http2Refused(pick.kind, diagnosis.message)) {
          log.warn(
            { gateway: address, err: diagnosis.message, transport: pick.kind },
            `HTTP/2 cannot pass to the gateway at ${address}: ${diagnosis.message}; switching to WebSocket now`,
          );
          continue;
        }
      }
      if (reconnectRequested(err)) {
        attempt = 0;
        log.info({ gateway: address, reason: (err as Error).message }, 'the gateway asked for a reconnect; reconnecting now');
        continue;
      }
      // A stream that lived `stableSeconds` was healthy: its loss (its replica died, a connection was cut) is retried at
      // once, once — the same burst a graceful stop's "reconnect now" already causes; a retry that fails goes on with
      // the jittered backoff from its start (docs/replicas.md, "What failover costs").
      const stable = welcomed && Date.now() - started > config.clouddriver.reconnect.stableSeconds * 1000;
      if (stable) attempt = 0;
      const delay = stable ? 0 : backoffDelayMs(config.clouddriver.reconnect, attempt++);
      const reason = explainConnectError(failure, welcomed ? {} : { insecure: config.clouddriver.insecure });
      const verb = welcomed ? 'lost the gateway stream' : 'cannot connect to the gateway';
      log.warn(
        { gateway: address, err: reason, retryInSeconds: Number((delay / 1000).toFixed(1)), attempt },
        `${verb} at ${address}: ${reason}; next retry in ${(delay / 1000).toFixed(1)} s`,
      );
      await sleep(delay, signal);
    } finally {
      connection?.close();
    }
  }
}
