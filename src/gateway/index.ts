/**
 * The gateway program: opens the database, serves the agent stream (gRPC), the client API (gRPC + Connect JSON) and
 * the REST routes from one handler on two ports, and shuts down in stages (drain, end agent streams, close sockets,
 * close the database).
 */
import type http2 from 'node:http2';
import { getRequestListener } from '@hono/node-server';
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import { openDatabase, pingDatabase, type Database } from '../db/database.js';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import { AgentService } from '../gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../gen/outpost/api/v1/account_service_pb.js';
import { FleetService } from '../gen/outpost/api/v1/fleet_service_pb.js';
import { ObjectService } from '../gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../gen/outpost/api/v1/operation_service_pb.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { createAccountStore } from './agents/account-store.js';
import { serveAgentStream, type AgentSessionDeps } from './agents/agent-session.js';
import { createAccountCommandBus, type AccountCommandBus, type DynamicAccountSource } from './agents/account-commands.js';
import { createAgentSessionStore, createCachedSessionVerifier, staleAfterSeconds } from './agents/agent-session-store.js';
import { createSessionRegistry } from './agents/session-registry.js';
import { createAccountService } from './api/account-service.js';
import { createAccountAdmin } from './accounts/account-admin.js';
import { createAccountCleanup } from './accounts/account-cleanup.js';
import { createAccountSweeper } from './accounts/account-sweeper.js';
import { createDynamicAccountSource } from './accounts/dynamic-account-source.js';
import { createAgentListing } from './api/list-agents.js';
import { createFleetMonitor } from './api/fleet-monitor.js';
import { createFleetService } from './api/fleet-service.js';
import { readFleet } from './api/fleet-snapshot.js';
import { createObjectService } from './api/object-service.js';
import { createOperationService } from './api/operation-service.js';
import { createObjectWriter } from './cache/object-writer.js';
import { createSyncState } from './cache/sync-state.js';
import type { GatewayConfig } from './config/schema.js';
import { createDispatch, dispatchLocal } from './replicas/dispatch.js';
import { createLeaseKeeper } from './replicas/lease-keeper.js';
import { createLeaseStore } from './replicas/lease-store.js';
import { createOwnerLookup } from './replicas/owner-lookup.js';
import { createPeerClient, type PeerClient } from './replicas/peer-client.js';
import { createReplicaTokenSigner } from './auth/replica-token.js';
import { createResultRelay } from './operations/result-relay.js';
import { createGatewayMetrics } from './metrics/gateway-metrics.js';
import { createReplicaDirectory, type ReplicaDirectory } from './replicas/replica-directory.js';
import { createErrorInterceptor } from './errors.js';
import { createAgentStreamEndpoint } from './grpc/agent-stream-endpoint.js';
import { createUnstorableTextGuard } from './grpc/unstorable-text-guard.js';
import { answerMalformedRpc, STRICT_COMPRESSIONS } from './grpc/protocol-guards.js';
import { createSendableErrorInterceptor } from './grpc/sendable-errors.js';
import { createHealthService } from './grpc/health-service.js';
import { createRpcNodeHandler, type RpcNodeHandler } from './grpc/rpc-node-handler.js';
import { createUndecodableRequestInterceptor, guardUndecodableRequests } from './grpc/undecodable-request.js';
import { createReflectionServices, ServerReflectionV1, ServerReflectionV1alpha } from './grpc/reflection-service.js';
import { createOperationManager } from './operations/operation-manager.js';
import { createOperationStore } from './operations/operation-store.js';
import { createOperationSealer } from './operations/operation-sealing.js';
import { sealLegacyRequests } from './operations/legacy-requests.js';
import { createKeyRing, type KeyRing } from './secrets/key-ring.js';
import { createRestApp } from './rest/rest-app.js';
import { createClouddriverApi } from './spinnaker/clouddriver-api.js';
import { RECONNECT_HEADER, RECONNECT_NOW } from './agents/stream-timers.js';
import { createAuthenticator } from './auth/authenticator.js';
import { authContextValues, createAuthInterceptor, principalOf, rememberPreAdmitted } from './auth/connect-auth.js';
import { createPreAdmission } from './auth/pre-admission.js';
import { createConnectionGuard } from './connection-guard.js';
import { listenGatewayServers } from './servers.js';
import { DEFAULT_WEB_DIR } from './web/web-assets.js';
import { createTlsContextSource } from './auth/tls-context.js';

export { gatewayConfigSchema, type GatewayConfig, type GatewayConfigInput } from './config/schema.js';
export { loadGatewayConfig, GatewayConfigError } from './config/load.js';

/** Largest message (after decompression) the gateway reads: bigger ones fail with RESOURCE_EXHAUSTED. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

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
  /** Drains: health turns 503 (gRPC: NOT_SERVING), agent streams end cleanly, sockets close, then the database closes. Idempotent. */
  close(): Promise<void>;
}

/** Parts a caller may supply to {@link startGateway}; defaults otherwise. */
export interface GatewayDeps {
  logger?: Logger;
  /** Dynamic accounts pushed to each agent stream after its Welcome; none by default. */
  dynamicAccounts?: DynamicAccountSource;
}

/**
 * Opens the database (applying migrations), binds both ports and starts serving. Rejects — leaving nothing open —
 * when the database cannot be opened or a port cannot be bound.
 */
export async function startGateway(config: GatewayConfig, deps: GatewayDeps = {}): Promise<RunningGateway> {
  const logger = (deps.logger ?? createLogger({ name: 'gateway', level: config.logLevel })).child({ gatewayId: config.id });
  if (config.insecure) {
    logger.warn(
      'INSECURE MODE: requests without credentials get every right and agents may register any account name; never use this outside development',
    );
  } else {
    const problem = authSetupProblem(config);
    if (problem) logger.warn(problem);
  }
  // Key, certificate and token files are read first: a gateway that cannot check credentials does not start.
  const authenticator = createAuthenticator(config, { logger: logger.child({ component: 'auth' }) });
  const tlsContext = config.tls ? createTlsContextSource(config.tls, logger.child({ component: 'tls' })) : undefined;
  let secretKeys: KeyRing;
  try {
    secretKeys = createKeyRing({
      keyFile: config.secrets.keyFile,
      insecure: config.insecure,
      logger: logger.child({ component: 'secrets' }),
    });
  } catch (err) {
    tlsContext?.close();
    authenticator.close();
    throw err;
  }
  if (secretKeys.source === 'ephemeral') {
    logger.warn(
      'secrets.keyFile is not set: Secret values in operations are encrypted with an ephemeral key, so open operations carrying them cannot be sent after a restart (development only)',
    );
  } else if (secretKeys.source === 'none') {
    logger.warn('secrets.keyFile is not set: operations carrying Secret values are refused (they would have to be stored in plaintext)');
  }
  const database = await openDatabase(config.database).catch((err) => {
    tlsContext?.close();
    throw err;
  });
  const registry = createSessionRegistry();
  const accountCommands = createAccountCommandBus(registry);
  const agentStaleAfterSeconds = staleAfterSeconds(config.agents.deadAfterSeconds);
  let draining = false;
  let baseUrl = config.baseUrl ?? '';
  let replicaDirectory: ReplicaDirectory;
  let peers: PeerClient;
  try {
    replicaDirectory = createReplicaDirectory({
      id: config.id,
      baseUrl: () => baseUrl,
      isDraining: () => draining,
      database,
      config: config.replicas,
      scheme: config.tls ? 'https' : 'http',
      logger: logger.child({ component: 'cluster' }),
    });
    peers = createPeerClient({
      signer: config.auth.replicaSecretFile ? createReplicaTokenSigner(config.auth.replicaSecretFile, config.id, logger) : undefined,
      caFile: config.replicas.peerCaFile ?? config.tls?.caFile,
      timeoutMs: config.replicas.forwardTimeoutSeconds * 1000,
    });
  } catch (err) {
    tlsContext?.close();
    authenticator.close();
    await database.close().catch(() => {});
    throw err;
  }
  if (!config.insecure && !config.auth.replicaSecretFile) {
    logger.warn('auth.replicaSecretFile is not set: other replicas cannot forward operations or relay results to this one');
  }
  const clusterLogger = logger.child({ component: 'cluster' });
  const metrics = createGatewayMetrics({
    database,
    connectedAgents: () => registry.all().length,
    replicasKnown: () => replicaDirectory.list().length,
  });
  const sealer = createOperationSealer(secretKeys);
  const operations = createOperationManager({
    gatewayId: config.id,
    store: createOperationStore(database),
    sealer,
    dispatch: createDispatch(registry, {
      selfId: config.id,
      owners: createOwnerLookup(database, { selfId: config.id, cacheMs: 2000, staleAfterSeconds: agentStaleAfterSeconds }),
      replicas: replicaDirectory,
      peers,
      logger: clusterLogger,
      metrics,
    }),
    dispatchLocal: (account, operation) => dispatchLocal(registry, account, operation),
    relay: createResultRelay({ selfId: config.id, replicas: replicaDirectory, peers, logger: clusterLogger }),
    verifySession: createCachedSessionVerifier(database),
    metrics,
    config: config.operations,
    logger: logger.child({ component: 'operations' }),
  });
  try {
    await operations.recover();
  } catch (err) {
    peers.close();
    await database.close().catch(() => {});
    throw err;
  }
  const leaseKeeper = createLeaseKeeper({
    gatewayId: config.id,
    registry,
    store: createLeaseStore(database),
    leaseSeconds: config.replicas.leaseSeconds,
    standbyCheckIntervalSeconds: config.replicas.standbyCheckIntervalSeconds,
    logger: clusterLogger,
  });

  const sessionDeps: AgentSessionDeps = {
    gatewayId: config.id,
    heartbeatIntervalSeconds: config.agents.heartbeatIntervalSeconds,
    deadAfterSeconds: config.agents.deadAfterSeconds,
    maxStreamAgeSeconds: config.agents.maxStreamAgeSeconds,
    maxUnacked: config.agents.maxUnacked,
    resumeMaxAgeSeconds: config.cache.resumeMaxAgeSeconds,
    leaseSeconds: config.replicas.leaseSeconds,
    onAccountsReleased: () => leaseKeeper.poke(),
    metrics,
    claimMetrics: metrics,
    registry,
    accountStore: createAccountStore(database),
    objectWriter: createObjectWriter(database),
    syncState: createSyncState(database),
    logger: logger.child({ component: 'agent-stream' }),
    operations,
    sessionStore: createAgentSessionStore(database),
    dynamicAccounts: deps.dynamicAccounts ?? createDynamicAccountSource(database),
  };
  const accountAdmin = createAccountAdmin({
    database,
    bus: accountCommands,
    limits: config.accounts,
    logger: logger.child({ component: 'accounts' }),
  });
  const clouddriver = createClouddriverApi({
    selfId: config.id,
    database,
    operations,
    accounts: accountAdmin,
    logger: logger.child({ component: 'spinnaker' }),
    replicaAlive: (id) => replicaDirectory.get(id) !== undefined,
    maxBodyBytes: config.operations.maxManifestBytes + 64 * 1024,
  });
  await clouddriver
    .recover()
    .catch((err: unknown) => logger.error({ err }, 'could not fail the Spinnaker tasks a previous process left running'));
  const accountSweeper = createAccountSweeper({
    database,
    timeoutSeconds: config.accounts.activationTimeoutSeconds,
    intervalMs: Math.max(50, Math.min(1000, config.accounts.activationTimeoutSeconds * 250)),
    logger: logger.child({ component: 'accounts' }),
  });
  const accountCleanup = createAccountCleanup({
    database,
    graceSeconds: config.accounts.cleanupGraceSeconds,
    intervalMs: Math.max(50, Math.min(30_000, config.accounts.cleanupGraceSeconds * 100)),
    logger: logger.child({ component: 'accounts' }),
  });
  const fleet = createFleetMonitor({
    read: () =>
      readFleet({
        database,
        staleAfterSeconds: agentStaleAfterSeconds,
        // This replica is always listed, as it sees itself (also before its first heartbeat).
        replicas: () => [
          { id: config.id, baseUrl, ready: !draining, lastSeen: new Date() },
          ...replicaDirectory
            .list()
            .filter((r) => r.id !== config.id)
            .map((r) => ({ ...r, lastSeen: r.lastUpdated })),
        ],
      }),
    intervalMs: config.web.fleetPollSeconds * 1000,
    logger: logger.child({ component: 'fleet' }),
  });
  const apiServices = [AgentService, ObjectService, AccountService, OperationService, FleetService];
  // gRPC health tells what GET /health tells (draining, database); reflection describes every service served here.
  const health = createHealthService({
    services: apiServices.map((s) => s.typeName),
    ping: () => pingDatabase(database),
    logger: logger.child({ component: 'health' }),
  });
  const reflection = createReflectionServices({ services: [...apiServices, Health] });
  const routes = (router: ConnectRouter) => {
    router.service(AgentService, { connect: (requests, context) => serveAgentStream(requests, sessionDeps, principalOf(context.values)) });
    router.service(ObjectService, createObjectService(database));
    router.service(AccountService, {
      ...createAccountService(accountAdmin),
      ...createAgentListing(database, { staleAfterSeconds: agentStaleAfterSeconds }),
    });
    // Strict JSON: an unknown key (say, an operation kind this gateway does not know) is an error, not ignored.
    router.service(OperationService, createOperationService(operations, logger.child({ component: 'api' })), {
      jsonOptions: { ignoreUnknownFields: false },
    });
    router.service(FleetService, createFleetService(fleet, { logger: logger.child({ component: 'fleet' }) }));
    router.service(Health, health.impl);
    router.service(ServerReflectionV1, reflection.v1);
    router.service(ServerReflectionV1alpha, reflection.v1alpha);
  };
  const rest = createRestApp({
    id: config.id,
    baseUrl: () => baseUrl,
    database,
    isDraining: () => draining,
    logger: logger.child({ component: 'rest' }),
    operations,
    authenticator,
    agentStaleAfterSeconds,
    accounts: accountAdmin,
    replicas: replicaDirectory,
    clouddriver,
    metrics,
    webDir: config.web.enabled ? (config.web.dir ?? DEFAULT_WEB_DIR) : undefined,
  });
  // connect-node's handlers, with gRPC errors before any message answered Trailers-Only (rpc-node-handler.ts), and
  // requests that do not decode answered INVALID_ARGUMENT (undecodable-request.ts).
  const connectHandler = createRpcNodeHandler({
    routes,
    // Same runtime objects; the two libraries only type the http2 response's write callback differently.
    fallback: getRequestListener(rest.fetch) as unknown as RpcNodeHandler,
    readMaxBytes: MAX_MESSAGE_BYTES,
    contextValues: authContextValues,
    // The sendable-error interceptor comes first, so it sees what every other one throws; then the undecodable-request
    // interceptor, which also records that a call got past decoding its request.
    interceptors: [
      createSendableErrorInterceptor(),
      createUndecodableRequestInterceptor(),
      createErrorInterceptor(logger.child({ component: 'api' })),
      createAuthInterceptor(authenticator),
      createUnstorableTextGuard(),
    ],
    wrapHandler: guardUndecodableRequests,
    acceptCompression: [...STRICT_COMPRESSIONS],
    logger: logger.child({ component: 'api' }),
  });
  // Agent streams in gRPC form skip connect-node (see agent-stream-endpoint.ts); everything else goes through it.
  const agentEndpoint = createAgentStreamEndpoint({
    authenticator,
    serve: (requests, principal) => serveAgentStream(requests, sessionDeps, principal),
    maxMessageBytes: MAX_MESSAGE_BYTES,
    logger: logger.child({ component: 'agent-stream' }),
  });
  // Credentials are checked from the headers before any body is read (pre-admission.ts); what a peer may hold before
  // it proves itself is bounded per connection (connection-guard.ts).
  const preAdmit = createPreAdmission(
    authenticator,
    [...apiServices, Health, ServerReflectionV1, ServerReflectionV1alpha].map((s) => s.typeName),
  );
  const guard = createConnectionGuard(config.limits);
  const handler: typeof connectHandler = (req, res) => {
    guard.requestArrived(req);
    if (answerMalformedRpc(req, res as unknown as http2.Http2ServerResponse)) return void guard.refused(req);
    preAdmit(req, res as unknown as http2.Http2ServerResponse).then(
      (outcome) => {
        if (outcome.kind === 'refused') return guard.refused(req);
        if (outcome.kind === 'admitted') {
          guard.proven(req);
          rememberPreAdmitted(req, outcome.principal);
        } else {
          // REST, the dashboard's files, health: proven once answered with anything but a refusal.
          res.once('finish', () => (res.statusCode === 401 || res.statusCode === 403 ? guard.refused(req) : guard.proven(req)));
        }
        if (agentEndpoint(req as http2.Http2ServerRequest, res as http2.Http2ServerResponse)) return;
        connectHandler(req, res);
      },
      (err: unknown) => {
        logger.error({ err }, 'pre-admission failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'internal', message: 'internal error' }));
      },
    );
  };

  let servers: Awaited<ReturnType<typeof listenGatewayServers>>;
  try {
    servers = await listenGatewayServers(handler, config.host, config.httpPort, config.grpcPort, {
      tls: tlsContext,
      guard,
      limits: config.limits,
    });
  } catch (err) {
    tlsContext?.close();
    operations.close();
    authenticator.close();
    peers.close();
    await database.close().catch(() => {});
    throw err;
  }
  operations.start();
  // Requests stored in plaintext by an older version are sealed in the background: a scan of the operations table
  // must not delay serving (legacy-requests.ts).
  const stopSealing = new AbortController();
  const legacySealing = sealLegacyRequests(database, sealer, logger.child({ component: 'operations' }), stopSealing.signal).catch(
    (err: unknown) => logger.error({ err }, 'could not seal the operation requests stored in plaintext; retried at the next start'),
  );
  leaseKeeper.start();
  accountSweeper.start();
  accountCleanup.start();
  health.start();
  const urlHost = displayHost(config.host);
  const scheme = servers.secure ? 'https' : 'http';
  const httpUrl = `${scheme}://${urlHost}:${servers.httpPort}`;
  const grpcUrl = `${scheme}://${urlHost}:${servers.grpcPort}`;
  if (!baseUrl) baseUrl = httpUrl;
  // Discovery failures are logged and retried by the directory itself; they never stop the gateway serving.
  await replicaDirectory.start().catch((err) => logger.error({ err }, 'replica discovery could not start; retrying'));
  logger.info({ httpUrl, grpcUrl, database: database.displayUrl }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      draining = true;
      health.drain();
      logger.info('gateway shutting down');
      // Peers see this replica not ready at once, before its streams and sockets close.
      await replicaDirectory.markDraining().catch(() => {});
      // Spinnaker tasks stop waiting and record why; then timers stop and waiters end, so nothing touches the database
      // after it closes.
      await clouddriver.close();
      operations.close();
      await accountSweeper.stop();
      await accountCleanup.stop();
      await leaseKeeper.stop();
      // Health Watch and WatchFleet streams never end by themselves: they end here, so the servers do not wait on them.
      await health.close();
      fleet.close(new ConnectError('gateway shutting down', Code.Unavailable));
      const sockets = servers.close(SHUTDOWN_GRACE_MS);
      const sessions = registry.all();
      // Agents reconnect at once (to another replica behind the same address) instead of waiting out a backoff.
      const shuttingDown = new ConnectError('gateway shutting down; reconnect now', Code.Unavailable, {
        [RECONNECT_HEADER]: RECONNECT_NOW,
      });
      for (const s of sessions) s.close(shuttingDown);
      await Promise.race([Promise.all(sessions.map((s) => s.done)), delay(SHUTDOWN_GRACE_MS)]);
      await sockets;
      await replicaDirectory.close();
      peers.close();
      tlsContext?.close();
      authenticator.close();
      stopSealing.abort();
      await legacySealing;
      await database.close();
      logger.info('gateway stopped');
    })());

  return { id: config.id, httpUrl, grpcUrl, database, accountCommands, close };
}

/**
 * A secure gateway that nobody can use is a set-up mistake worth saying at start-up: no way to authenticate, or no
 * rule granting any role. Returns the warning, or undefined when the set-up can admit someone.
 */
export function authSetupProblem(config: Pick<GatewayConfig, 'auth' | 'authorization' | 'tls'>): string | undefined {
  const canAuthenticate =
    config.auth.tokens.length > 0 || config.auth.jwt !== undefined || (config.tls !== undefined && config.tls.clientAuth !== 'NONE');
  if (!canAuthenticate) {
    return 'no credentials are configured (auth.tokens, auth.jwt, or tls.clientAuth with a CA): every request but health checks will be refused; configure them, or run with --insecure for development only';
  }
  if (config.authorization.rules.length === 0) {
    return 'authorization.rules is empty: authenticated callers get no role, so every request but health checks will be refused with PERMISSION_DENIED';
  }
  return undefined;
}

function displayHost(host: string): string {
  if (host === '0.0.0.0' || host === '::' || host === '') return '127.0.0.1';
  return host.includes(':') ? `[${host}]` : host;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
