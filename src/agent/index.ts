/**
 * The Outpost agent: watches the configured clusters and streams their objects to the gateway over one outbound
 * HTTP/2 gRPC stream (see `proto/outpost/agent/v1/agent.proto`). This module is its programmatic entry point, used by
 * the CLI (`outpost agent`), the demo and end-to-end tests.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import { dirname, resolve } from 'node:path';
import type { Logger } from 'pino';
import { createSilentLogger } from '../shared/logger.js';
import { createAccountManager } from './accounts/account-manager.js';
import { createAccountRuntime, unpreparedAccount } from './accounts/account-runtime.js';
import { startAdminServer } from './admin/admin-server.js';
import type { HttpListener } from './admin/http-listener.js';
import { watchConfigFile } from './config/config-watcher.js';
import { AGENT_DEFAULTS } from './config/defaults.js';
import type { AgentConfig } from './config/schema.js';
import { createAgentMetrics } from './metrics/agent-metrics.js';
import { metricsAddress, startMetricsServer } from './metrics/metrics-server.js';
import { createOperationRunner, type AccountLookup } from './operations/operation-runner.js';
import type { AgentStatus } from './status.js';
import { createMirrorState, servingRuntimes } from './stream/agent-connections.js';
import { runConnectionLoop } from './stream/connection-loop.js';
import { createTokenSource } from './stream/token-source.js';
import type { SessionState } from './stream/session.js';
import { agentVersion } from './version.js';
import { createClosers } from '../shared/closers.js';

export type { AgentConfig, AgentConfigInput } from './config/schema.js';
export { loadAgentConfig, parseAgentConfig, AgentConfigError } from './config/load.js';
export { AGENT_DEFAULTS } from './config/defaults.js';
export type { AgentStatus } from './status.js';

/**
 * Whether the agent runs operations for an account right now: it must be configured, have a Kubernetes client, and
 * not be refused (or left without a verdict) by the gateway in the current session.
 */
function servedAccount(state: SessionState, name: string): AccountLookup {
  const account = state.accounts.find((a) => a.prepared.config.name === name);
  if (account === undefined) return { notServed: `account "${name}" is not configured on this agent` };
  if (account.verdict === 'refused')
    return { notServed: `account "${name}" was refused by the gateway${account.reason ? `: ${account.reason}` : ''}` };
  if (account.verdict === 'unknown') return { notServed: `account "${name}" has no verdict from the gateway in this session` };
  const client = account.prepared.client;
  if (client === undefined) return { notServed: `account "${name}" cannot reach its cluster: ${account.prepared.error || 'no client'}` };
  return { client };
}

/** Optional collaborators and settings of {@link startAgent}. */
export interface StartAgentDeps {
  logger?: Logger;
  /**
   * The file `config` was loaded from: it is then watched, and account changes in it take effect without a restart
   * (other settings need one). Relative kubeconfig paths of dynamic accounts are resolved against its directory.
   */
  configFile?: string;
  /** Environment for the overrides when the file is reloaded (default: process.env). */
  env?: NodeJS.ProcessEnv;
  /** How often the file is checked (default AGENT_DEFAULTS.configPollMs). */
  configPollMs?: number;
}

/** A started agent. */
export interface RunningAgent {
  /** The agent id sent in the Hello. */
  readonly id: string;
  /** The local admin port actually bound (useful when `server.port` is 0). */
  readonly adminPort: number;
  /** The Prometheus port actually bound; undefined when `prometheus.enabled` is false. */
  readonly metricsPort: number | undefined;
  /** A snapshot of the connection, accounts and watches. */
  status(): AgentStatus;
  /** Closes the stream, stops every watch, the admin and the metrics servers. Idempotent. */
  close(): Promise<void>;
}

/**
 * Starts the agent: binds the admin port and the metrics port, watches the config file when given, then connects to
 * the gateway in the background and keeps retrying with backoff forever. Resolves once started (not necessarily
 * connected); rejects only if the admin or metrics port cannot be bound. The caller must `close()` it.
 */
export async function startAgent(config: AgentConfig, deps: StartAgentDeps = {}): Promise<RunningAgent> {
  const logger = deps.logger ?? createSilentLogger();
  const id = config.agent.id ?? (process.env.POD_NAME || hostname());
  const zone = config.agent.zone ?? (process.env.POD_NAMESPACE || AGENT_DEFAULTS.zone);
  const state: SessionState = {
    connected: false,
    accounts: config.kubernetes.accounts.map((account) => createAccountRuntime(unpreparedAccount(account), 'file')),
    lastChangeId: 0n,
  };
  // One state per connection to the gateway (clouddriver.connections): stream/agent-connections.ts.
  const states: SessionState[] = [state];
  for (let i = 1; i < config.clouddriver.connections; i++) states.push(createMirrorState(state));
  let operationsStatus = (): AgentStatus['operations'] => ({ active: 0, pendingResults: 0, running: [] });
  const status = (): AgentStatus => ({
    operations: operationsStatus(),
    connected: states.some((s) => s.connected),
    sessionId: state.sessionId,
    transport: state.transport && { ...state.transport },
    ...(states.length > 1
      ? {
          connections: states.map((s, connection) => ({
            connection,
            connected: s.connected,
            sessionId: s.sessionId,
            gatewayId: s.gatewayId,
            transport: s.transport?.kind,
          })),
        }
      : {}),
    accounts: servingRuntimes(states).map((a) => ({
      name: a.prepared.config.name,
      source: a.source,
      verdict: a.verdict,
      reason: a.reason ?? (a.prepared.error || undefined),
      error: a.prepared.error || undefined,
      watches: a.watches.map((w) => ({
        apiVersion: w.apiVersion,
        kind: w.kind,
        namespace: w.namespace,
        state: w.state,
        resourceVersion: w.resourceVersion,
        listed: w.listed,
        synced: w.synced,
        startedAt: w.startedAt,
      })),
      skipped: a.prepared.skipped.map((s) => ({ ...s })),
    })),
  });
  const metrics = createAgentMetrics({
    connected: () => states.some((s) => s.connected),
    watchesOpen: () =>
      states.reduce((total, s) => total + s.accounts.reduce((n, a) => n + a.watches.filter((w) => w.state === 'watching').length, 0), 0),
    unackedBatches: () => states.reduce((n, s) => n + (s.live?.unacked() ?? 0), 0),
  });
  const log = logger.child({ agentId: id });
  // Every part registers how it stops as soon as it started: close() runs them in reverse order, and so does a start
  // that fails half-way (only what started is stopped).
  const closers = createClosers((step, err) => log.warn({ err, step }, 'stopping a part of the agent failed'));
  try {
    return await startParts();
  } catch (err) {
    await closers.close();
    throw err;
  }

  async function startParts(): Promise<RunningAgent> {
    const admin = closers.add(
      'admin server',
      await startAdminServer({
        port: config.server.port,
        host: config.server.host,
        status,
        info: { agentId: id, version: agentVersion(), configFile: deps.configFile },
      }),
      (server) => server.close(),
    );
    const metricsAt = metricsAddress(config);
    const metricsServer: HttpListener | undefined =
      metricsAt === undefined
        ? undefined
        : closers.add('metrics server', await startMetricsServer(metrics, metricsAt), (server) => server.close());
    // The Kubernetes clients close after the operations that use them have stopped.
    closers.defer('kubernetes clients', () => {
      for (const account of state.accounts) account.prepared.client?.close();
    });
    // One runner per connection: a result goes back on the session its operation came from.
    const runners = states.map((connectionState) =>
      createOperationRunner({
        account: (name) => servedAccount(connectionState, name),
        settings: {
          serverSideApplyKinds: config.kubernetes.serverSideApply,
          defaultFieldManager: AGENT_DEFAULTS.fieldManager,
          deletePollMs: 50,
        },
        retries: config.kubernetes.retries,
        concurrency: config.operations.concurrency,
        resultCacheSize: config.operations.resultCacheSize,
        resultTtlMs: config.operations.resultTtlSeconds * 1000,
        outboxSize: config.operations.outboxSize,
        logger: log,
      }),
    );
    closers.defer('operations', () => Promise.all(runners.map((r) => r.close())).then(() => undefined));
    operationsStatus = () => ({
      active: runners.reduce((n, r) => n + r.active, 0),
      pendingResults: runners.reduce((n, r) => n + r.pending, 0),
      running: runners.flatMap((r) =>
        r.list().map((op) => ({ id: op.id, account: op.account, kind: op.kind, state: op.state, startedAt: op.receivedAt })),
      ),
    });
    log.info(
      {
        adminPort: admin.port,
        metricsPort: metricsServer?.port,
        gateway: config.clouddriver.grpc,
        accounts: state.accounts.length,
        zone,
        configFile: deps.configFile,
      },
      'agent started',
    );
    const controller = new AbortController();
    setMaxListeners(0, controller.signal); // parallel API requests of every account listen on it
    const accounts = createAccountManager({
      state,
      mirrors: states.slice(1),
      logger: log,
      signal: controller.signal,
      baseDir: deps.configFile !== undefined ? dirname(resolve(deps.configFile)) : undefined,
      kubeconfigDirs: config.kubernetes.dynamicKubeconfigDirs,
      kubeRecorder: metrics,
    });
    closers.defer('account preparation', () => accounts.idle());
    const token = closers.add('token source', createTokenSource(config.clouddriver.auth, log), (source) => source.close());
    const watcher =
      deps.configFile === undefined
        ? undefined
        : await watchConfigFile({
            file: deps.configFile,
            env: deps.env,
            running: config,
            intervalMs: deps.configPollMs ?? AGENT_DEFAULTS.configPollMs,
            logger: log,
            onAccounts: (next) => accounts.setFileAccounts(next),
          });
    if (watcher !== undefined) closers.defer('configuration file watcher', () => watcher.close());
    const loops = states.map((connectionState, connection) =>
      runConnectionLoop({
        config,
        agentId: id,
        zone,
        version: agentVersion(),
        state: connectionState,
        accounts,
        token,
        operations: runners[connection],
        recorder: metrics,
        logger: log,
        signal: controller.signal,
        ...(states.length > 1
          ? { connection, otherGatewayId: () => states.find((s) => s !== connectionState && s.connected)?.gatewayId }
          : {}),
      }),
    );
    const loop = Promise.all(loops).then(() => undefined);
    closers.defer('connection loop', () => loop);
    // First at close: the stream, the watches and the retries stop.
    closers.defer('stop signal', () => controller.abort());
    let closing: Promise<void> | undefined;
    return {
      id,
      adminPort: admin.port,
      metricsPort: metricsServer?.port,
      status,
      close() {
        closing ??= closers.close().then(() => log.info('agent stopped'));
        return closing;
      },
    };
  }
}
