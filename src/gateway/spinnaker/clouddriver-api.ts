/**
 * The Clouddriver API of one replica (docs/spinnaker.md): the HTTP routes Orca and Gate call for Kubernetes manifest
 * stages, over the gateway's own features — operations (every cluster call is an Outpost operation), accounts and
 * the tasks table. Create it, `recover()` before serving, add its routes to the REST app, `close()` on shutdown.
 */
import type { Hono } from 'hono';
import type { Database } from '../../db/database.js';
import type { Logger } from '../../shared/logger.js';
import type { AccountAdmin } from '../accounts/account-admin.js';
import type { AuditLog } from '../audit/audit-log.js';
import type { RestEnv } from '../auth/rest-auth.js';
import type { OperationManager } from '../operations/operation-manager.js';
import { createAccountLookup } from './account-lookup.js';
import { createAgentCalls } from './agent-calls.js';
import { createClouddriverTasks, type ClouddriverTasks } from './clouddriver-tasks.js';
import { addOpsRoutes, addTaskRoutes } from './routes/ops-routes.js';
import { addCredentialsRoutes } from './routes/credentials-routes.js';
import { createCacheReads } from './cache-reads.js';
import { addJobRoutes } from './routes/job-routes.js';
import { addManifestRoutes } from './routes/manifest-routes.js';
import { addCacheRoutes } from './routes/cache-routes.js';
import { readsOf } from './live-reads.js';
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
import { artifactsSchema, type ArtifactsConfig } from './artifacts/artifact-config.js';

/** What the API needs from the gateway. */
export interface ClouddriverApiDeps {
  selfId: string;
  database: Database;
  operations: Pick<OperationManager, 'submit'>;
  accounts: Pick<AccountAdmin, 'get' | 'list' | 'limits'>;
  logger: Logger;
  /** True while the replica with this id is alive; without it only this replica counts as alive. */
  replicaAlive?: (id: string) => boolean;
  /** Largest request body (an ops array with its manifests). */
  maxBodyBytes: number;
  /** Records every ops submission (accepted or refused) in the audit log; none when absent. */
  audit?: Pick<AuditLog, 'record'>;
  /** The artifact accounts of `PUT /artifacts/fetch` (spinnaker.artifacts); only the built-in ones when absent. */
  artifacts?: ArtifactsConfig;
}

/** See the module comment. */
export interface ClouddriverApi {
  readonly tasks: ClouddriverTasks;
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
  const reads = (requestedBy: string) => readsOf(deps.operations, requestedBy);
  const artifacts = deps.artifacts ?? artifactsSchema.parse({});
  // Reads the credential files now: one that cannot be read fails the start, naming the account.
  const artifactAccounts = createArtifactAccounts(artifacts);
  return {
    tasks,
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
      });
      addTaskRoutes(app, tasks);
      addCredentialsRoutes(app, accounts, cache);
      addJobRoutes(app, { accounts, reads, operations: deps.operations });
      addManifestRoutes(app, { accounts, reads, cache });
      addCacheRoutes(app);
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
