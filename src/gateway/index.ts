/**
 * The gateway program: opens the database, serves the agent stream (gRPC), the client API (gRPC + Connect JSON) and
 * the REST routes from one handler on two ports, and shuts down in stages (drain, end agent streams, close sockets,
 * close the database).
 *
 * Every part registers how it stops as soon as it started, on one stack of closers (src/shared/closers.ts) that runs
 * in reverse order — on `close()`, and the same way when the start fails half-way (only what started is stopped).
 * Parts that hold resources are opened first; the parts that serve (sockets, timers) start last, so they stop first:
 * see docs/architecture.md, "Inside the gateway".
 */
import { Code, ConnectError, type ConnectRouter } from '@connectrpc/connect';
import { openDatabase, pingDatabase, type Database } from '../db/database.js';
import { Health } from '../gen/grpc/health/v1/health_pb.js';
import { AgentService } from '../gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../gen/outpost/api/v1/account_service_pb.js';
import { AuditService } from '../gen/outpost/api/v1/audit_service_pb.js';
import { FleetService } from '../gen/outpost/api/v1/fleet_service_pb.js';
import { ObjectService } from '../gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../gen/outpost/api/v1/operation_service_pb.js';
import { createClosers, type Closers } from '../shared/closers.js';
import { createLogger, type Logger } from '../shared/logger.js';
import { serveAgentStream, type AgentSessionDeps } from './agents/agent-session.js';
import { createAccountCommandBus, type AccountCommandBus, type DynamicAccountSource } from './agents/account-commands.js';
import { createAgentSessionStore, createCachedSessionVerifier, staleAfterSeconds } from './agents/agent-session-store.js';
import { createSessionRegistry, type SessionRegistry } from './agents/session-registry.js';
import { createAccountService } from './api/account-service.js';
import { createAuditService } from './api/audit-service.js';
import { createAuditLog, type AuditLog } from './audit/audit-log.js';
import { createAuditPurge } from './audit/audit-purge.js';
import { createAuditStore } from './audit/audit-store.js';
import { createAccountAdmin } from './account-admin/account-admin.js';
import { createAccountCleanup } from './accounts/account-cleanup.js';
import { removeAccountCaches } from './cache/cache-removal.js';
import { GATEWAY_ERROR_SHAPES, GATEWAY_PATH_RULES } from './feature-paths.js';
import { createAccountSweeper } from './accounts/account-sweeper.js';
import { createDynamicAccountSource } from './account-admin/dynamic-account-source.js';
import { createAgentListing } from './api/list-agents.js';
import { createFleetMonitor } from './api/fleet-monitor.js';
import { createFleetService } from './api/fleet-service.js';
import { readFleet } from './api/fleet-snapshot.js';
import { createObjectService } from './api/object-service.js';
import { createOperationService } from './api/operation-service.js';
import { createCoalescingWriter } from './cache/write-coalescer.js';
import { createObjectWriter } from './cache/object-writer.js';
import { createSyncState } from './cache/sync-state.js';
import type { GatewayConfig } from './config/schema.js';
import { createDispatch, dispatchLocal, sendLocal } from './replicas/dispatch.js';
import { createReadForward } from './operations/read-forward.js';
import { createReadRunner, readsFirst } from './operations/read-runner.js';
import { createLeaseKeeper } from './replicas/lease-keeper.js';
import { createOwnerLookup } from './replicas/owner-lookup.js';
import { createKubeEndpoint } from './kube/kube-endpoint.js';
import { createKubeForwarder } from './kube/kube-forward.js';
import { createPeerClient } from './replicas/peer-client.js';
import { createReplicaTokenSigner } from './auth/replica-token.js';
import { createResultRelay } from './operations/result-relay.js';
import { createGatewayMetrics } from './metrics/gateway-metrics.js';
import { createReplicaDirectory } from './replicas/replica-directory.js';
import { createHealthService } from './grpc/health-service.js';
import { createReflectionServices, ServerReflectionV1, ServerReflectionV1alpha } from './grpc/reflection-service.js';
import { createOperationManager } from './operations/operation-manager.js';
import { createOperationStore } from './operations/operation-store.js';
import { createOperationSealer } from './operations/operation-sealing.js';
import { sealLegacyRequests } from './operations/legacy-requests.js';
import { createKeyRing } from './secrets/key-ring.js';
import { createRestApp } from './rest/rest-app.js';
import { ANSWER_KINDS } from './spinnaker/infrastructure/answer-cache.js';
import { createClouddriverApi } from './spinnaker/clouddriver-api.js';
import { RECONNECT_HEADER, RECONNECT_NOW } from './agents/stream-timers.js';
import { createAuthenticator } from './auth/authenticator.js';
import { principalOf } from './auth/connect-auth.js';
import { createGatewayHandler } from './request-handler.js';
import { listenGatewayServers, type GatewayServers } from './servers.js';
import { warnAboutAuthSetup, warnAboutObjectPartitions, warnAboutReplicaSecret, warnAboutSecretKeys } from './setup-warnings.js';
import { DEFAULT_WEB_DIR } from './web/web-assets.js';
import { createTlsContextSource } from './auth/tls-context.js';
import { keepLeadingByteOrderMarks } from '../shared/protobuf-text.js';

export { gatewayConfigSchema, type GatewayConfig, type GatewayConfigInput } from './config/schema.js';
export { loadGatewayConfig, GatewayConfigError } from './config/load.js';
export { authSetupProblem } from './setup-warnings.js';

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
  const closers = createClosers((step, err) => logger.warn({ err, step }, 'stopping a part of the gateway failed'));
  try {
    return await startParts(config, deps, logger, closers);
  } catch (err) {
    await closers.close();
    throw err;
  }
}

async function startParts(config: GatewayConfig, deps: GatewayDeps, logger: Logger, closers: Closers): Promise<RunningGateway> {
  // Registered first, so that it runs last: nothing may touch the database after it closed. It opens only after the
  // credential files were read (a gateway that cannot check credentials does not start, nor migrate the database).
  let opened: Database | undefined;
  closers.defer('database', () => opened?.close());
  const authenticator = closers.add('authenticator', createAuthenticator(config, { logger: logger.child({ component: 'auth' }) }), (a) =>
    a.close(),
  );
  const tlsContext = config.tls
    ? closers.add('TLS context', createTlsContextSource(config.tls, logger.child({ component: 'tls' })), (t) => t.close())
    : undefined;
  const secretKeys = createKeyRing({
    keyFile: config.secrets.keyFile,
    insecure: config.insecure,
    logger: logger.child({ component: 'secrets' }),
  });
  warnAboutSecretKeys(secretKeys.source, logger);
  const database = (opened = await openDatabase(config.database, { objectPartitions: config.cache.objectPartitions }));
  await warnAboutObjectPartitions(database, config.cache.objectPartitions, logger);
  // Requests stored in plaintext by an older version are sealed in the background once serving (a scan of the
  // operations table must not delay it: legacy-requests.ts); the scan stops before the database closes.
  const stopSealing = new AbortController();
  let legacySealing: Promise<unknown> = Promise.resolve();
  closers.defer('sealing of legacy requests', () => {
    stopSealing.abort();
    return legacySealing;
  });
  const registry = createSessionRegistry();
  const accountCommands = createAccountCommandBus(registry);
  const agentStaleAfterSeconds = staleAfterSeconds(config.agents.deadAfterSeconds);
  let draining = false;
  let baseUrl = config.baseUrl ?? '';
  const signer = config.auth.replicaSecretFile ? createReplicaTokenSigner(config.auth.replicaSecretFile, config.id, logger) : undefined;
  const owners = createOwnerLookup(database, { selfId: config.id, cacheMs: 2000, staleAfterSeconds: agentStaleAfterSeconds });
  const peers = closers.add(
    'peer client',
    createPeerClient({
      signer,
      caFile: config.replicas.peerCaFile ?? config.tls?.caFile,
      timeoutMs: config.replicas.forwardTimeoutSeconds * 1000,
    }),
    (p) => p.close(),
  );
  const replicasLogger = logger.child({ component: 'replicas' });
  const replicaDirectory = closers.add(
    'replica directory',
    createReplicaDirectory({
      id: config.id,
      baseUrl: () => baseUrl,
      isDraining: () => draining,
      database,
      config: config.replicas,
      scheme: config.tls ? 'https' : 'http',
      logger: replicasLogger,
    }),
    (d) => d.close(),
  );
  warnAboutReplicaSecret(config, logger);
  const metrics = createGatewayMetrics({
    database,
    connectedAgents: () => registry.all().length,
    replicasKnown: () => replicaDirectory.list().length,
  });
  // Closed after everything that records into it (closers run in reverse) and before the database.
  const audit = closers.add(
    'audit log',
    createAuditLog({ database, gatewayId: config.id, logger, metrics, maxPending: config.audit.maxPending }),
    (a) => a.close(),
  );
  const auditPurge = createAuditPurge({
    store: createAuditStore(database),
    retentionDays: config.audit.retentionDays,
    batchSize: config.audit.purgeBatchSize,
    intervalMs: config.audit.purgeIntervalSeconds * 1000,
    logger: logger.child({ component: 'audit' }),
  });
  const sealer = createOperationSealer(secretKeys);
  const operationStore = createOperationStore(database);
  const operations = createOperationManager({
    gatewayId: config.id,
    store: operationStore,
    sealer,
    dispatch: createDispatch(registry, {
      selfId: config.id,
      owners,
      replicas: replicaDirectory,
      peers,
      logger: replicasLogger,
      metrics,
    }),
    dispatchLocal: (account, operation) => dispatchLocal(registry, account, operation),
    relay: createResultRelay({ selfId: config.id, replicas: replicaDirectory, peers, logger: replicasLogger }),
    verifySession: createCachedSessionVerifier(database),
    metrics,
    config: config.operations,
    logger: logger.child({ component: 'operations' }),
  });
  // Reads of clusters run in memory, never stored (read-runner.ts); the ones another replica's stream serves go there.
  const reads = createReadRunner({
    gatewayId: config.id,
    sendLocal: (account, operation) => sendLocal(registry, account, operation),
    forward: createReadForward({ owners, replicas: replicaDirectory, peers, logger: replicasLogger }),
    accountExists: (name) => operationStore.accountExists(name),
    agentWaitMs: config.operations.agentWaitSeconds * 1000,
    metrics,
    logger: logger.child({ component: 'operations' }),
  });
  closers.defer('reads', () => reads.close());
  // Its timers, should the start fail from here on; a started gateway closes it earlier (idempotent), see below.
  closers.defer('operations (recovered, not serving yet)', () => operations.close());
  await operations.recover();
  const leaseKeeper = createLeaseKeeper({
    gatewayId: config.id,
    registry,
    db: database.db,
    leaseSeconds: config.replicas.leaseSeconds,
    standbyCheckIntervalSeconds: config.replicas.standbyCheckIntervalSeconds,
    logger: replicasLogger,
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
    db: database.db,
    // Only what Deck's kept answers are built from moves accounts' objects_version (answer-cache.ts).
    objectWriter: createCoalescingWriter(createObjectWriter(database, { versionedKinds: ANSWER_KINDS }), config.cache.coalesce, {
      metrics,
    }),
    syncState: createSyncState(database, { versionedKinds: ANSWER_KINDS }),
    logger: logger.child({ component: 'agent-stream' }),
    operations: readsFirst(operations, reads),
    sessionStore: createAgentSessionStore(database),
    dynamicAccounts: deps.dynamicAccounts ?? createDynamicAccountSource(database),
  };
  const accountAdmin = createAccountAdmin({
    database,
    bus: accountCommands,
    limits: config.accounts,
    sessionStaleAfterSeconds: agentStaleAfterSeconds,
    logger: logger.child({ component: 'accounts' }),
  });
  const clouddriver = createClouddriverApi({
    selfId: config.id,
    database,
    operations,
    reads,
    auditReads: config.audit.reads,
    accounts: accountAdmin,
    logger: logger.child({ component: 'spinnaker' }),
    replicaAlive: (id) => replicaDirectory.get(id) !== undefined,
    maxBodyBytes: config.operations.maxManifestBytes + 64 * 1024,
    audit,
    fiat: config.spinnaker.fiat,
    metrics,
    now: deps.fiatClock,
    artifacts: config.spinnaker.artifacts,
    answerCacheBytes: config.spinnaker.answerCacheMegabytes * 1024 * 1024,
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
    removeCaches: removeAccountCaches,
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
  const apiServices = [AgentService, ObjectService, AccountService, OperationService, FleetService, AuditService];
  // gRPC health tells what GET /health tells (draining, database); reflection describes every service served here.
  const health = createHealthService({
    services: apiServices.map((s) => s.typeName),
    ping: () => pingDatabase(database),
    logger: logger.child({ component: 'health' }),
  });
  const reflection = createReflectionServices({ services: [...apiServices, Health] });
  const routes = (router: ConnectRouter) => {
    // connect-node serves the agent stream's other forms (Connect protocol, gRPC-Web, gRPC-JSON): RPC streams too.
    router.service(AgentService, {
      connect: (requests, context) => serveAgentStream(requests, sessionDeps, principalOf(context.values), 'grpc'),
    });
    router.service(ObjectService, createObjectService(database));
    router.service(AccountService, {
      ...createAccountService(accountAdmin),
      ...createAgentListing(database, { staleAfterSeconds: agentStaleAfterSeconds }),
    });
    // Strict JSON: an unknown key (say, an operation kind this gateway does not know) is an error, not ignored.
    const readLimits = {
      defaultTimeoutMs: config.operations.defaultTimeoutSeconds * 1000,
      maxManifestBytes: config.operations.maxManifestBytes,
    };
    router.service(
      OperationService,
      createOperationService(operations, logger.child({ component: 'api' }), audit, {
        cluster: reads,
        limits: readLimits,
        audit: config.audit.reads,
      }),
      {
        jsonOptions: { ignoreUnknownFields: false },
      },
    );
    router.service(FleetService, createFleetService(fleet, { logger: logger.child({ component: 'fleet' }) }));
    router.service(AuditService, createAuditService(audit));
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
    routes: clouddriver ? [clouddriver] : [],
    pathRules: GATEWAY_PATH_RULES,
    errorShapes: GATEWAY_ERROR_SHAPES,
    metrics,
    audit,
    reads,
    webDir: config.web.enabled ? (config.web.dir ?? DEFAULT_WEB_DIR) : undefined,
  });
  const kubeForwarder = createKubeForwarder({
    owners,
    replicas: replicaDirectory,
    signer,
    caFile: config.replicas.peerCaFile ?? config.tls?.caFile,
  });
  const { handler, guard, upgrade } = createGatewayHandler({
    routes,
    services: [...apiServices, Health, ServerReflectionV1, ServerReflectionV1alpha].map((s) => s.typeName),
    restFetch: rest.fetch,
    authenticator,
    serveAgentStream: (requests, principal, transport) => serveAgentStream(requests, sessionDeps, principal, transport),
    limits: config.limits,
    kube: createKubeEndpoint({
      gatewayId: config.id,
      authenticator,
      registry,
      config: config.kube,
      audit,
      metrics,
      // The one forwarder: the instance the shutdown step below closes is the one that forwards.
      forwarder: kubeForwarder,
      logger: logger.child({ component: 'kube' }),
    }),
    logger,
  });

  // Serving. Each part below stops before every part above: the servers stop accepting and the agent streams end
  // after the timers and waiters below have stopped, and before the parts above (the database last) close.
  const servers = await listenGatewayServers(handler, config.host, config.httpPort, config.grpcPort, {
    tls: tlsContext,
    guard,
    limits: config.limits,
    upgrade,
  });
  closers.defer('servers and agent streams', () => stopServing(servers, registry));
  // kubectl requests passed to other replicas are cut first: their callers reconnect to another replica.
  closers.defer('forwarded kubectl requests', () => kubeForwarder.close());
  // WatchFleet and health Watch streams never end by themselves: they end first, so the servers do not wait on them.
  closers.defer('fleet monitor', () => fleet.close(new ConnectError('gateway shutting down', Code.Unavailable)));
  health.start();
  closers.defer('health', () => health.close());
  leaseKeeper.start();
  closers.defer('lease keeper', () => leaseKeeper.stop());
  accountCleanup.start();
  closers.defer('account cleanup', () => accountCleanup.stop());
  accountSweeper.start();
  closers.defer('account sweeper', () => accountSweeper.stop());
  auditPurge.start();
  closers.defer('audit purge', () => auditPurge.stop());
  // Operation timers stop and waiters end before the agent streams end and the servers wait for open requests.
  operations.start();
  closers.defer('operations', () => operations.close());
  legacySealing = sealLegacyRequests(database, sealer, logger.child({ component: 'operations' }), stopSealing.signal).catch(
    (err: unknown) => logger.error({ err }, 'could not seal the operation requests stored in plaintext; retried at the next start'),
  );
  // Spinnaker tasks stop waiting and record why, before the operations they wait on close.
  closers.defer('Spinnaker tasks', () => clouddriver.close());
  const urlHost = displayHost(config.host);
  const scheme = servers.secure ? 'https' : 'http';
  const httpUrl = `${scheme}://${urlHost}:${servers.httpPort}`;
  const grpcUrl = `${scheme}://${urlHost}:${servers.grpcPort}`;
  if (!baseUrl) baseUrl = httpUrl;
  // Discovery failures are logged and retried by the directory itself; they never stop the gateway serving.
  await replicaDirectory.start().catch((err) => logger.error({ err }, 'replica discovery could not start; retrying'));
  // First at close: health turns NOT_SERVING and peers see this replica not ready at once, before its streams and
  // sockets close.
  closers.defer('drain', async () => {
    draining = true;
    health.drain();
    logger.info('gateway shutting down');
    await replicaDirectory.markDraining().catch(() => {});
  });
  logger.info({ httpUrl, grpcUrl, database: database.displayUrl }, 'gateway listening');

  let closing: Promise<void> | undefined;
  const close = () => (closing ??= closers.close().then(() => logger.info('gateway stopped')));
  return { id: config.id, httpUrl, grpcUrl, database, accountCommands, audit, close };
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
