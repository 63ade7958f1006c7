/**
 * The gateway program: builds the core (database, authenticator, registry, replica directory, audit log, operations:
 * modules/gateway-core.ts), then walks one list of modules (modules/module-list.ts) — builds each, serves what they
 * contribute from one handler on two ports, starts each — and shuts down in stages (drain, the modules in reverse,
 * servers and agent streams, the core, the database last).
 *
 * Every part registers how it stops as soon as it started, on one stack of closers (src/shared/closers.ts) that runs
 * in reverse order — on `close()`, and the same way when the start fails half-way (only what started is stopped).
 * See docs/architecture.md, "Inside the gateway", and the order written down in modules/module-list.ts.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import type { Database } from '../db/database.js';
import { createClosers, type Closers } from '../shared/closers.js';
import { createLogger, type Logger } from '../shared/logger.js';
import type { AccountCommandBus, DynamicAccountSource } from './agents/account-commands.js';
import type { SessionRegistry } from './agents/session-registry.js';
import { RECONNECT_HEADER, RECONNECT_NOW } from './agents/stream-timers.js';
import type { AuditLog } from './audit/audit-log.js';
import type { GatewayConfig } from './config/schema.js';
import { buildModules, startModules } from './modules/build-modules.js';
import { createGatewayCore } from './modules/gateway-core.js';
import { GATEWAY_MODULES } from './modules/module-list.js';
import { warnAboutAuthSetup } from './modules/setup-warnings.js';
import { createGatewayHandler } from './request-handler.js';
import { listenGatewayServers, type GatewayServers } from './servers.js';
import { keepLeadingByteOrderMarks } from '../shared/protobuf-text.js';

export { gatewayConfigSchema, type GatewayConfig, type GatewayConfigInput } from './config/schema.js';
export { loadGatewayConfig, GatewayConfigError } from './config/load.js';
export { authSetupProblem } from './modules/setup-warnings.js';
export { GATEWAY_MODULES } from './modules/module-list.js';

/** How long shutdown waits for agent streams and open requests before cutting connections. */
const SHUTDOWN_GRACE_MS = 5000;

/** A started gateway. `close()` must be awaited before the process exits or the database is reused. */
export interface RunningGateway {
  readonly id: string;
  /** `http://host:port` of the HTTP/1.1 port (Connect JSON, REST); `https://` (HTTP/2 + HTTP/1.1) with TLS. */
  readonly httpUrl: string;
  /** `http://host:port` of the h2c port (gRPC: agents, buf curl, gRPC clients); `https://` with TLS. */
  readonly grpcUrl: string;
  readonly database: Database;
  /** Pushes account commands to this replica's live agent streams (by zone). */
  readonly accountCommands: AccountCommandBus;
  /** The audit log of this replica (also given to the REST routes as `RestAppOptions.audit`). */
  readonly audit: AuditLog;
  /** Drains: health turns 503 (gRPC: NOT_SERVING), agent streams end cleanly, sockets close, then the database closes. Idempotent. */
  close(): Promise<void>;
}

/** Parts a caller may supply to {@link startGateway}; defaults otherwise. */
export interface GatewayDeps {
  logger?: Logger;
  /** Dynamic accounts pushed to each agent stream after its Welcome; none by default. */
  dynamicAccounts?: DynamicAccountSource;
  /** The monotonic clock (ms) behind the Fiat permission cache's expiry; `performance.now` by default (tests move it). */
  fiatClock?: () => number;
  /** The wall clock (epoch ms) of the dashboard's sessions — expiry, idleness, renewals; `Date.now` by default (tests move it). */
  sessionClock?: () => number;
  /** Hears the name of each shutdown step just before it runs (tests check the order the gateway stops in). */
  onStopStep?: (step: string) => void;
}

/**
 * Opens the database (applying migrations), binds both ports and starts serving. Rejects — after closing everything
 * it had opened — when a credential file cannot be read, the database cannot be opened or a port cannot be bound.
 * Makes protobuf-es keep a leading U+FEFF of decoded strings, in the whole process (protobuf-text.ts).
 */
export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<RunningGateway> {
  keepLeadingByteOrderMarks();
  const logger = (deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })).child({ gatewayId: config.id });
  warnAboutAuthSetup(config, logger);
  const closers = createClosers((step, err) => logger.warn({ err, step }, 'stopping a part of the gateway failed'), deps.onStopStep);
  try {
    return await startParts(config, deps, logger, closers);
  } catch (err) {
    await closers.close();
    throw err;
  }
}

async function startParts(config: GatewayConfig, deps: GatewayDeps, logger: Logger, closers: Closers): Promise<RunningGateway> {
  const core = await createGatewayCore(
    config,
    { dynamicAccounts: deps.dynamicAccounts, fiatClock: deps.fiatClock, sessionClock: deps.sessionClock },
    logger,
    closers,
  );
  const built = await buildModules(GATEWAY_MODULES, core);
  const { services = [], restFetch, agentStream, kube } = built.contributions;
  if (restFetch === undefined || agentStream === undefined) throw new Error('no module serves the REST app or the agent stream');
  const { handler, guard, upgrade } = createGatewayHandler({
    routes: (router) => {
      for (const service of services) service.register(router);
    },
    services: services.map((s) => s.type.typeName),
    restFetch,
    authenticator: core.authenticator,
    serveAgentStream: agentStream,
    limits: config.limits,
    kube,
    logger,
  });

  // Serving. The servers stop after every module's parts (modules start below, so they stop first) and before the
  // core's parts (the database last) close.
  const servers = await listenGatewayServers(handler, config.host, config.httpPort, config.grpcPort, {
    tls: core.tls,
    guard,
    limits: config.limits,
    upgrade,
  });
  closers.defer('servers and agent streams', () => stopServing(servers, core.registry));
  const urlHost = displayHost(config.host);
  const scheme = servers.secure ? 'https' : 'http';
  const httpUrl = `${scheme}://${urlHost}:${servers.httpPort}`;
  const grpcUrl = `${scheme}://${urlHost}:${servers.grpcPort}`;
  core.state.listeningAt(httpUrl);
  await startModules(built);
  // First at close: health turns NOT_SERVING and peers see this replica not ready at once, before its streams and
  // sockets close (the modules added what the drain does: gateway-state.ts).
  closers.defer('drain', () => core.state.drain());
  logger.info({ httpUrl, grpcUrl, database: core.database.displayUrl, modules: built.modules.map((m) => m.name) }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= closers.close().then(() => logger.info('gateway stopped')));
  return { id: config.id, httpUrl, grpcUrl, database: core.database, accountCommands: core.accountCommands, audit: core.audit, close };
}

/**
 * Stops accepting connections, ends every agent stream with a "reconnect now" status (agents reconnect at once, to
 * another replica behind the same address, instead of waiting out a backoff), and waits for the streams to end and
 * the open exchanges to finish — each at most {@link SHUTDOWN_GRACE_MS}, then connections are cut.
 */
async function stopServing(servers: GatewayServers, registry: SessionRegistry): Promise<void> {
  const sockets = servers.close(SHUTDOWN_GRACE_MS);
  const sessions = registry.all();
  const shuttingDown = new ConnectError('gateway shutting down; reconnect now', Code.Unavailable, { [RECONNECT_HEADER]: RECONNECT_NOW });
  for (const s of sessions) s.close(shuttingDown);
  await Promise.race([Promise.all(sessions.map((s) => s.done)), delay(SHUTDOWN_GRACE_MS)]);
  await sockets;
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
