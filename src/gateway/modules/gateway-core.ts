/**
 * The gateway's core: what every module may need and no module owns — the configuration, the logger, the database,
 * the authenticator, the agent streams' registry, the replica directory, metrics, the audit log, operations and reads,
 * account administration, and the gateway's own state. Built once, before any module, in an order that matters: each
 * part registers how it stops right after it opened, on the one stack of closers, so the core's parts close after
 * every module's (the audit log after everything that records into it, the database last).
 */
import { openDatabase, type Database } from '../../db/database.js';
import type { Closers } from '../../shared/closers.js';
import type { Logger } from '../../shared/logger.js';
import { createAccountAdmin, type AccountAdmin } from '../account-admin/account-admin.js';
import { createDynamicAccountSource } from '../account-admin/dynamic-account-source.js';
import { createAccountCommandBus, type AccountCommandBus, type DynamicAccountSource } from '../agents/account-commands.js';
import { createCachedSessionVerifier, staleAfterSeconds } from '../agents/agent-session-store.js';
import { createSessionRegistry, type SessionRegistry } from '../agents/session-registry.js';
import { createAuditLog, type AuditLog } from '../audit/audit-log.js';
import { createAuthenticator, type Authenticator } from '../auth/authenticator.js';
import { createOidcIssuers, type OidcIssuers } from '../auth/oidc-issuers.js';
import { createReplicaTokenSigner, type ReplicaTokenSigner } from '../auth/replica-token.js';
import { createTlsContextSource, type TlsContextSource } from '../auth/tls-context.js';
import type { GatewayConfig } from '../config/schema.js';
import { createGatewayMetrics, type GatewayMetrics } from '../metrics/gateway-metrics.js';
import { accountCountsByState } from '../accounts/account-reads.js';
import { objectsListedWhileListing, syncScopeCounts } from '../cache/watch-state-reads.js';
import { createOperationManager, type OperationManager } from '../operations/operation-manager.js';
import { createOperationSealer } from '../operations/operation-sealing.js';
import { createOperationStore } from '../operations/operation-store.js';
import { createReadForward } from '../operations/read-forward.js';
import { createReadRunner, type ReadRunner } from '../operations/read-runner.js';
import { createResultRelay } from '../operations/result-relay.js';
import { createDispatch, dispatchLocal, sendLocal } from '../replicas/dispatch.js';
import { createLeaseKeeper, type LeaseKeeper } from '../replicas/lease-keeper.js';
import { createOwnerLookup, type OwnerLookup } from '../replicas/owner-lookup.js';
import { createPeerClient, type PeerClient } from '../replicas/peer-client.js';
import { createReplicaDirectory, type ReplicaDirectory } from '../replicas/replica-directory.js';
import { createKeyRing, type KeyRing } from '../secrets/key-ring.js';
import { createGatewayState, type GatewayState } from './gateway-state.js';
import { createLegacySealing, type LegacySealing } from './legacy-sealing.js';
import { warnAboutObjectPartitions, warnAboutReplicaSecret, warnAboutSecretKeys } from './setup-warnings.js';

/** What a caller may hand the core instead of its defaults (GatewayDeps). */
export interface GatewayCoreDeps {
  /** Dynamic accounts pushed to each agent stream after its Welcome; read from the database by default. */
  dynamicAccounts?: DynamicAccountSource;
  /** The monotonic clock behind the Fiat permission cache's expiry (tests move it). */
  fiatClock?: () => number;
  /** The wall clock (epoch ms) of the dashboard's sessions: expiry, idleness, renewals (tests move it). */
  sessionClock?: () => number;
}

/**
 * The core every module is built from. Modules read it; they never close its parts (the core's own shutdown steps
 * do, after every module stopped) and register their own stops on `closers`.
 */
export interface GatewayCore {
  readonly config: GatewayConfig;
  readonly logger: Logger;
  /** The one stack of shutdown steps: a module registers each part's stop right after starting it. */
  readonly closers: Closers;
  /** Dynamic accounts pushed to each agent stream after its Welcome. */
  readonly dynamicAccounts: DynamicAccountSource;
  /** The Fiat permission cache's clock; `performance.now` when undefined. */
  readonly fiatClock: (() => number) | undefined;
  /** The dashboard sessions' wall clock (epoch ms); `Date.now` unless a test drives it. */
  readonly sessionClock: () => number;
  /** Draining and the base URL (gateway-state.ts). */
  readonly state: GatewayState;
  readonly database: Database;
  readonly authenticator: Authenticator;
  /** The `auth.oidc` providers: the authenticator checks their tokens, the sign-in module signs people in with them. */
  readonly oidc: OidcIssuers;
  /**
   * The keys of `secrets.keyFile` (an ephemeral one in insecure mode without it; none in secure mode): Secret values
   * in operations, and the dashboard's session tokens and sign-ins in flight, are sealed with them.
   */
  readonly secretKeys: KeyRing;
  /** The TLS contexts of both ports; undefined without `tls`. */
  readonly tls: TlsContextSource | undefined;
  /** Signs the calls replicas make on each other; undefined without `auth.replicaSecretFile`. */
  readonly signer: ReplicaTokenSigner | undefined;
  /** This replica's live agent streams. */
  readonly registry: SessionRegistry;
  readonly accountCommands: AccountCommandBus;
  /** Seconds after which an agent session row counts as a dead replica's. */
  readonly agentStaleAfterSeconds: number;
  /** Which replica's stream serves an account. */
  readonly owners: OwnerLookup;
  readonly peers: PeerClient;
  readonly replicas: ReplicaDirectory;
  /** Renews this replica's leases; the replicas module starts it, agent streams poke it. */
  readonly leaseKeeper: LeaseKeeper;
  readonly metrics: GatewayMetrics;
  /** The audit log: closed after every module, as they all may record into it. */
  readonly audit: AuditLog;
  /** Recovered (its previous process's operations taken back), not started: the operations module starts it. */
  readonly operations: OperationManager;
  readonly reads: ReadRunner;
  readonly accountAdmin: AccountAdmin;
  /** The sealing of requests stored in plaintext: the operations module starts it. */
  readonly legacySealing: LegacySealing;
}

/**
 * Reads the credential files, opens the database (applying migrations) and builds the core's parts, registering
 * their shutdown steps on `closers`. Rejects when a credential file cannot be read or the database cannot be opened;
 * the caller then runs `closers` (only what opened is closed).
 */
export async function createGatewayCore(
  config: GatewayConfig,
  deps: GatewayCoreDeps,
  logger: Logger,
  closers: Closers,
): Promise<GatewayCore> {
  // Registered first, so that it runs last: nothing may touch the database after it closed. It opens only after the
  // credential files were read (a gateway that cannot check credentials does not start, nor migrate the database).
  let opened: Database | undefined;
  closers.defer('database', () => opened?.close());
  const oidc = createOidcIssuers(config.auth.oidc, logger.child({ component: 'oidc' }));
  const authenticator = closers.add(
    'authenticator',
    createAuthenticator(config, { logger: logger.child({ component: 'auth' }), oidc }),
    (a) => a.close(),
  );
  const tls = config.tls
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
  const sealer = createOperationSealer(secretKeys);
  // Started by the operations module once serving; stopped before the database closes.
  const legacySealing = createLegacySealing(database, sealer, logger.child({ component: 'operations' }));
  closers.defer('sealing of legacy requests', () => legacySealing.stop());
  const registry = createSessionRegistry();
  const agentStaleAfterSeconds = staleAfterSeconds(config.agents.deadAfterSeconds);
  const state = createGatewayState(config.baseUrl, logger);
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
  const replicas = closers.add(
    'replica directory',
    createReplicaDirectory({
      id: config.id,
      baseUrl: state.baseUrl,
      isDraining: state.isDraining,
      database,
      config: config.replicas,
      scheme: config.tls ? 'https' : 'http',
      logger: replicasLogger,
    }),
    (d) => d.close(),
  );
  warnAboutReplicaSecret(config, logger);
  const metrics = createGatewayMetrics({
    accountsByState: () => accountCountsByState(database.db),
    syncScopesByState: () => syncScopeCounts(database.db),
    objectsListedWhileListing: () => objectsListedWhileListing(database.db),
    connectedAgents: () => registry.all().length,
    replicasKnown: () => replicas.list().length,
  });
  // Closed after everything that records into it (closers run in reverse) and before the database.
  const audit = closers.add(
    'audit log',
    createAuditLog({ database, gatewayId: config.id, logger, metrics, maxPending: config.audit.maxPending }),
    (a) => a.close(),
  );
  const operationStore = createOperationStore(database);
  const operations = createOperationManager({
    gatewayId: config.id,
    store: operationStore,
    sealer,
    dispatch: createDispatch(registry, { selfId: config.id, owners, replicas, peers, logger: replicasLogger, metrics }),
    dispatchLocal: (account, operation) => dispatchLocal(registry, account, operation),
    relay: createResultRelay({ selfId: config.id, replicas, peers, logger: replicasLogger }),
    verifySession: createCachedSessionVerifier(database),
    metrics,
    config: config.operations,
    logger: logger.child({ component: 'operations' }),
  });
  // Reads of clusters run in memory, never stored (read-runner.ts); the ones another replica's stream serves go there.
  const reads = createReadRunner({
    gatewayId: config.id,
    sendLocal: (account, operation) => sendLocal(registry, account, operation),
    forward: createReadForward({ owners, replicas, peers, logger: replicasLogger }),
    accountExists: (name) => operationStore.accountExists(name),
    agentWaitMs: config.operations.agentWaitSeconds * 1000,
    metrics,
    logger: logger.child({ component: 'operations' }),
  });
  closers.defer('reads', () => reads.close());
  // Its timers, should the start fail from here on; a started gateway closes it earlier (the operations module).
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
  const accountCommands = createAccountCommandBus(registry);
  const accountAdmin = createAccountAdmin({
    database,
    bus: accountCommands,
    limits: config.accounts,
    sessionStaleAfterSeconds: agentStaleAfterSeconds,
    logger: logger.child({ component: 'accounts' }),
  });
  return {
    config,
    logger,
    closers,
    dynamicAccounts: deps.dynamicAccounts ?? createDynamicAccountSource(database),
    fiatClock: deps.fiatClock,
    sessionClock: deps.sessionClock ?? Date.now,
    state,
    database,
    authenticator,
    oidc,
    secretKeys,
    tls,
    signer,
    registry,
    accountCommands,
    agentStaleAfterSeconds,
    owners,
    peers,
    replicas,
    leaseKeeper,
    metrics,
    audit,
    operations,
    reads,
    accountAdmin,
    legacySealing,
  };
}
