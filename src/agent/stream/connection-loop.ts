/**
 * Keeps the agent connected: prepares the accounts, opens a session, and when it ends reconnects forever with
 * exponential backoff and full jitter, logging each failure (address, error, next retry). Account preparation is
 * redone when it failed or is older than a minute, so a reconnect also picks up new kinds and RBAC changes.
 */
import type { Logger } from 'pino';
import { prepareAccount } from '../account/prepare-account.js';
import type { AgentConfig } from '../config/schema.js';
import type { OperationRunner } from '../operations/operation-runner.js';
import { backoffDelayMs, sleep } from './backoff.js';
import { runSession, SessionEndedError, type SessionState } from './session.js';
import { connectGateway, explainConnectError } from './transport.js';

const REPREPARE_AFTER_MS = 60_000;
/** A session that lasted this long resets the backoff. */
const STABLE_SESSION_MS = 10_000;

/** Options of {@link runConnectionLoop}. */
export interface ConnectionLoopOptions {
  config: AgentConfig;
  agentId: string;
  zone: string;
  version: string;
  state: SessionState;
  /** Shared by every session (see `SessionOptions.operations`). */
  operations?: OperationRunner;
  logger: Logger;
  signal: AbortSignal;
}

/** Runs until `signal` aborts. Never rejects. */
export async function runConnectionLoop(options: ConnectionLoopOptions): Promise<void> {
  const { config, state, logger, signal } = options;
  const address = config.clouddriver.grpc;
  const headers: Record<string, string> = { 'x-outpost-agent-id': options.agentId };
  if (config.clouddriver.auth?.token) headers.authorization = `Bearer ${config.clouddriver.auth.token}`;
  let attempt = 0;
  while (!signal.aborted) {
    await Promise.all(
      state.accounts.map(async (account, index) => {
        const p = account.prepared;
        if (p.preparedAt > 0 && p.error === '' && Date.now() - p.preparedAt < REPREPARE_AFTER_MS) return;
        const fresh = await prepareAccount(p.config, logger, signal);
        if (p.client !== fresh.client) p.client?.close();
        state.accounts[index]!.prepared = fresh;
      }),
    );
    if (signal.aborted) break;
    const started = Date.now();
    let connection;
    try {
      connection = connectGateway(config.clouddriver);
      logger[attempt === 0 ? 'info' : 'debug']({ gateway: connection.baseUrl }, 'connecting to the gateway');
      await runSession({
        client: connection.client,
        headers,
        agentId: options.agentId,
        zone: options.zone,
        version: options.version,
        replicas: config.agent.replicas,
        heartbeatSeconds: config.clouddriver.keepAliveHeartbeatSeconds,
        state,
        operations: options.operations,
        logger,
        signal,
      });
    } catch (err) {
      if (signal.aborted) break;
      const welcomed = err instanceof SessionEndedError && err.welcomed;
      if (welcomed && Date.now() - started > STABLE_SESSION_MS) attempt = 0;
      const delay = backoffDelayMs(config.clouddriver.reconnect, attempt++);
      const reason = explainConnectError((err as Error).message);
      const verb = welcomed ? 'lost the gateway stream' : 'cannot connect to the gateway';
      logger.warn(
        { gateway: address, err: reason, retryInSeconds: Number((delay / 1000).toFixed(1)), attempt },
        `${verb} at ${address}: ${reason}; next retry in ${(delay / 1000).toFixed(1)} s`,
      );
      await sleep(delay, signal);
    } finally {
      connection?.close();
    }
  }
}
