/**
 * The Clouddriver API of one replica (docs/spinnaker.md): the HTTP routes Orca and Gate call for Kubernetes manifest
 * stages, over the gateway's own features — operations (every cluster call is an Outpost operation), accounts and
 * the tasks table. Create it, `recover()` before serving, add its routes to the REST app, `close()` on shutdown.
 */
import type { Context, Hono } from 'hono';
import { create } from '@bufbuild/protobuf';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { AccountAdmin } from '../account-admin/account-admin.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { RestEnv } from '../auth/rest-auth.js';
import type { OperationManager } from '../operations/operation-manager.js';
import type { AnswerCacheRecorder, FiatRecorder } from '../metrics/gateway-metrics.js';
import { createFiatClient } from './fiat/fiat-client.js';
import type { FiatConfig } from '../config/fiat-schema.js';
import { createFiatPermissions } from './fiat/fiat-permissions.js';
import { createSpinnakerAccess, type SpinnakerAccess } from './spinnaker-access.js';
import { createAccountLookup } from './account-lookup.js';
import { createAgentCalls } from './agent-calls.js';
import { createClouddriverTasks, type ClouddriverTasks } from './clouddriver-tasks.js';
import { addOpsRoutes, addTaskRoutes } from './routes/ops-routes.js';
import { addCredentialsRoutes } from './routes/credentials-routes.js';
import { createCacheReads } from './cache-reads.js';
import { addJobRoutes } from './routes/job-routes.js';
import { addManifestRoutes } from './routes/manifest-routes.js';
import { addCacheRoutes } from './routes/cache-routes.js';
import { addInfrastructureRoutes } from './routes/infrastructure-routes.js';
import { addConsoleRoutes } from './routes/console-routes.js';
import { addClusterRoutes } from './routes/cluster-routes.js';
import { createClusterReads } from './infrastructure/cluster-reads.js';
import { createInfrastructureReads } from './infrastructure/infrastructure-reads.js';
import { createInfrastructureStore } from './infrastructure/infrastructure-store.js';
import { createAnswerCache } from './infrastructure/answer-cache.js';
import { readObjectsVersions } from '../accounts/objects-version-queries.js';
import { readsOf, type ReadListener } from './live-reads.js';
import { requesterOfRequest } from './spinnaker-headers.js';
import type { ReadRunner } from '../operations/read-runner.js';
import { identityOf, insecurePrincipal } from '../auth/principal.js';
import { recordSubmission } from '../audit/operation-audit.js';
import { SubmitOperationRequestSchema } from '../../gen/outpost/api/v1/operation_service_pb.js';
import { prepareTraffic } from './ops/traffic-manifest.js';
import { prepareDeploy } from './ops/deploy-manifest.js';
import { prepareCleanup } from './ops/cleanup-artifacts.js';
import { prepareRunJob } from './ops/run-job.js';
import { bindPatchArtifacts } from './ops/patch-binding.js';
import type { Description } from './ops/description-fields.js';
import { createTaskRunner } from './task-runner.js';
import { createTaskStore } from './task-store.js';
import { addArtifactRoutes } from './routes/artifact-routes.js';
import { createArtifactAccounts } from './artifacts/artifact-accounts.js';
import { artifactsSchema, type ArtifactsConfig } from '../config/artifacts-schema.js';

/** What the API needs from the gateway. */
export interface ClouddriverApiDeps {
  selfId: string;
  database: Database;
  operations: Pick<OperationManager, 'submit'>;
  /** Runs the routes' reads of clusters without storing them (read-runner.ts). */
  reads: Pick<ReadRunner, 'run'>;
  /** `audit.reads`: record the routes' reads in the audit log too. */
  auditReads?: boolean;
  accounts: Pick<AccountAdmin, 'get' | 'list' | 'names' | 'exists' | 'limits'>;
  logger: Logger;
  /** True while the replica with this id is alive; without it only this replica counts as alive. */
  replicaAlive?: (id: string) => boolean;
  /** Largest request body (an ops array with its manifests). */
  maxBodyBytes: number;
  /** Records every ops submission (accepted or refused) in the audit log; none when absent. */
  audit?: Pick<AuditLog, 'record'>;
  /** `spinnaker.fiat`: with a `baseUrl`, every route also asks Fiat about the Spinnaker user (spinnaker-access.ts). */
  fiat?: FiatConfig;
  /** Where Fiat lookups and answer-cache lookups are counted; none when absent. */
  metrics?: FiatRecorder & AnswerCacheRecorder;
  /** The monotonic clock (ms) of the Fiat cache; tests move it. */
  now?: () => number;
  /** The artifact accounts of `PUT /artifacts/fetch` (spinnaker.artifacts); only the built-in ones when absent. */
  artifacts?: ArtifactsConfig;
  /** Bytes of Deck's application answers kept (`spinnaker.answerCacheMegabytes`; answer-cache.ts); none when absent or 0. */
  answerCacheBytes?: number;
}

/** See the module comment. */
export interface ClouddriverApi {
  readonly tasks: ClouddriverTasks;
  /** The check every Clouddriver route calls: Outpost's rules, then Fiat when configured. */
  readonly access: SpinnakerAccess;
  /** Adds every Clouddriver route to the REST app. */
  addRoutes(app: Hono<RestEnv>): void;
  /** Fails this replica's tasks a previous process left running. */
  recover(): Promise<number>;
  /** Stops running tasks (they end FAILED saying the gateway shut down). */
  close(): Promise<void>;
}

/** Creates the API. */
export function createClouddriverApi(deps: ClouddriverApiDeps): ClouddriverApi {
  const logger = deps.logger;
  const store = createTaskStore(deps.database);
  const runner = createTaskRunner({
    store,
    logger,
    callsFor: (taskId, signal, by) => createAgentCalls(deps.operations, taskId, signal, by),
  });
  const replicaAlive = deps.replicaAlive ?? ((id: string) => id === deps.selfId);
  const tasks = createClouddriverTasks({
    selfId: deps.selfId,
    store,
    runner,
    logger,
    replicaAlive: (id) => id === deps.selfId || replicaAlive(id),
  });
  const accounts = createAccountLookup(deps.accounts);
  const cache = createCacheReads(deps.database);
  const audit = deps.audit;
  const reads = (c: Context<RestEnv>) => {
    const principal = c.get('principal') ?? insecurePrincipal();
    const requestedBy = requesterOfRequest(c);
    const onRead: ReadListener | undefined =
      audit && deps.auditReads
        ? (account, spec, row, startedAt) =>
            recordSubmission(audit, create(SubmitOperationRequestSchema, { account, spec }), {
              principal: identityOf(principal),
              groups: principal.groups,
              startedAt,
              operationId: row.id,
            })
        : undefined;
    return readsOf(deps.reads, { principal, role: 'spinnaker' }, requestedBy, onRead);
  };
  const fiat = deps.fiat;
  const access = createSpinnakerAccess(
    fiat?.baseUrl
      ? createFiatPermissions({
          client: createFiatClient({ ...fiat, baseUrl: fiat.baseUrl }),
          ttlMs: fiat.cacheTtlSeconds * 1000,
          maxEntries: fiat.maxCachedUsers,
          logger: logger.child({ component: 'fiat' }),
          metrics: deps.metrics,
          now: deps.now,
        })
      : undefined,
    { legacyFallback: fiat?.legacyFallback, logger: logger.child({ component: 'fiat' }) },
  );
  const artifacts = deps.artifacts ?? artifactsSchema.parse({});
  // Reads the credential files now: one that cannot be read fails the start, naming the account.
  const artifactAccounts = createArtifactAccounts(artifacts);
  return {
    tasks,
    access,
    addRoutes(app) {
      const deployEnv = { cache };
      const extra = {
        deployManifest: (d: Description) => prepareDeploy(d, deployEnv),
        cleanupArtifacts: (d: Description) => prepareCleanup(d, deployEnv),
        runJob: (d: Description) => prepareRunJob(d, deployEnv),
        enableManifest: (d: Description) => prepareTraffic('enableManifest', d),
        disableManifest: (d: Description) => prepareTraffic('disableManifest', d),
      };
      addOpsRoutes(app, {
        tasks,
        accounts,
        prepare: { extra, bindPatch: bindPatchArtifacts },
        maxBodyBytes: deps.maxBodyBytes,
        audit: deps.audit,
        access,
      });
      addTaskRoutes(app, tasks, access);
      addCredentialsRoutes(app, accounts, cache, access);
      addJobRoutes(app, { accounts, reads, operations: deps.operations, access });
      addManifestRoutes(app, { accounts, reads, cache, access });
      addCacheRoutes(app);
      const infrastructure = createInfrastructureStore(deps.database);
      const answers = createAnswerCache({
        versions: (names) => readObjectsVersions(deps.database.db, names),
        maxBytes: deps.answerCacheBytes ?? 0,
        metrics: deps.metrics,
      });
      addInfrastructureRoutes(app, { accounts, reads: createInfrastructureReads(infrastructure), access, answers });
      addClusterRoutes(app, { accounts, clusters: createClusterReads(infrastructure), access });
      addConsoleRoutes(app, { accounts, reads, access });
      addArtifactRoutes(app, {
        accounts: artifactAccounts,
        maxRequestBytes: artifacts.maxRequestBytes,
        logger,
      });
    },
    recover: () => tasks.recover(),
    close: () => runner.close(),
  };
}
