/**
 * The gateway program: opens the database, serves the agent stream (gRPC), the client API (gRPC + Connect JSON) and
 * the REST routes from one handler on two ports, and shuts down in stages (drain, end agent streams, close sockets,
 * close the database).
 */
import { getRequestListener } from '@hono/node-server';
import type { ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { openDatabase, type Database } from '../db/database.js';
import { AgentService } from '../gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../gen/outpost/api/v1/account_service_pb.js';
import { ObjectService } from '../gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../gen/outpost/api/v1/operation_service_pb.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { createAccountStore } from './agents/account-store.js';
import { serveAgentStream, type AgentSessionDeps } from './agents/agent-session.js';
import { createSessionRegistry } from './agents/session-registry.js';
import { createAccountService } from './api/account-service.js';
import { createObjectService } from './api/object-service.js';
import { createOperationService } from './api/operation-service.js';
import { createObjectWriter } from './cache/object-writer.js';
import { createSyncState } from './cache/sync-state.js';
import type { GatewayConfig } from './config.js';
import { createDispatch } from './cluster/dispatch.js';
import { createErrorInterceptor } from './errors.js';
import { createOperationManager } from './operations/operation-manager.js';
import { createOperationStore } from './operations/operation-store.js';
import { createRestApp } from './rest/rest-app.js';
import { listenGatewayServers } from './servers.js';

export { gatewayConfigSchema, loadGatewayConfig, GatewayConfigError, type GatewayConfig, type GatewayConfigInput } from './config.js';

type NodeHandlerFn = NonNullable<Parameters<typeof connectNodeAdapter>[0]['fallback']>;

/** Largest message (after decompression) the gateway reads: bigger ones fail with RESOURCE_EXHAUSTED. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** How long shutdown waits for agent streams and open requests before cutting connections. */
const SHUTDOWN_GRACE_MS = 5000;

/** A started gateway. `close()` must be awaited before the process exits or the database is reused. */
export interface RunningGateway {
  readonly id: string;
  /** `http://host:port` of the HTTP/1.1 port (Connect JSON, REST). */
  readonly httpUrl: string;
  /** `http://host:port` of the h2c port (gRPC: agents, buf curl, gRPC clients). */
  readonly grpcUrl: string;
  readonly database: Database;
  /** Drains: health turns 503, agent streams end cleanly, sockets close, then the database closes. Idempotent. */
  close(): Promise<void>;
}

/**
 * Opens the database (applying migrations), binds both ports and starts serving. Rejects — leaving nothing open —
 * when the database cannot be opened or a port cannot be bound.
 */
export async function startGateway(config: GatewayConfig, deps: { logger?: Logger } = {}): Promise<RunningGateway> {
  const logger = (deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })).child({ gatewayId: config.id });
  const database = await openDatabase(config.database);
  const registry = createSessionRegistry();
  const operations = createOperationManager({
    gatewayId: config.id,
    store: createOperationStore(database),
    dispatch: createDispatch(registry),
    config: config.operations,
    logger: logger.child({ component: 'operations' }),
  });
  try {
    await operations.recover();
  } catch (err) {
    await database.close().catch(() => {});
    throw err;
  }
  let draining = false;
  let baseUrl = config.baseUrl ?? '';

  const sessionDeps: AgentSessionDeps = {
    gatewayId: config.id,
    heartbeatIntervalSeconds: config.agents.heartbeatIntervalSeconds,
    deadAfterSeconds: config.agents.deadAfterSeconds,
    maxUnacked: config.agents.maxUnacked,
    resumeMaxAgeSeconds: config.cache.resumeMaxAgeSeconds,
    registry,
    accountStore: createAccountStore(database),
    objectWriter: createObjectWriter(database),
    syncState: createSyncState(database),
    logger: logger.child({ component: 'agent-stream' }),
    operations,
  };
  const routes = (router: ConnectRouter) => {
    router.service(AgentService, { connect: (requests) => serveAgentStream(requests, sessionDeps) });
    router.service(ObjectService, createObjectService(database));
    router.service(AccountService, createAccountService(database));
    // Strict JSON: an unknown key (say, an operation kind this gateway does not know) is an error, not ignored.
    router.service(OperationService, createOperationService(operations, logger.child({ component: 'api' })), {
      jsonOptions: { ignoreUnknownFields: false },
    });
  };
  const rest = createRestApp({
    id: config.id,
    baseUrl: () => baseUrl,
    database,
    isDraining: () => draining,
    logger: logger.child({ component: 'rest' }),
    operations,
  });
  const handler = connectNodeAdapter({
    routes,
    // Same runtime objects; the two libraries only type the http2 response's write callback differently.
    fallback: getRequestListener(rest.fetch) as unknown as NodeHandlerFn,
    readMaxBytes: MAX_MESSAGE_BYTES,
    interceptors: [createErrorInterceptor(logger.child({ component: 'api' }))],
  });

  let servers;
  try {
    servers = await listenGatewayServers(handler, config.host, config.httpPort, config.grpcPort);
  } catch (err) {
    operations.close();
    await database.close().catch(() => {});
    throw err;
  }
  operations.start();
  const urlHost = displayHost(config.host);
  const httpUrl = `http://${urlHost}:${servers.httpPort}`;
  const grpcUrl = `http://${urlHost}:${servers.grpcPort}`;
  if (!baseUrl) baseUrl = httpUrl;
  logger.info({ httpUrl, grpcUrl, database: database.displayUrl }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      logger.info('gateway shutting down');
      // Timers stop and waiters end first, so nothing touches the database after it closes.
      operations.close();
      const sockets = servers.close(SHUTDOWN_GRACE_MS);
      const sessions = registry.all();
      for (const s of sessions) s.close();
      await Promise.race([Promise.all(sessions.map((s) => s.done)), delay(SHUTDOWN_GRACE_MS)]);
      await sockets;
      await database.close();
      logger.info('gateway stopped');
    })());

  return { id: config.id, httpUrl, grpcUrl, database, close };
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
