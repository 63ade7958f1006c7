/**
 * Spinnaker's Clouddriver API (the routes Orca and Gate call), on top of operations and reads. Left out with
 * `spinnaker.enabled: false`: no Clouddriver route is served (its paths still require what they would, and answer
 * 404 in Spring's shape: feature-paths.ts) and no task recovery runs. Built after the core recovered operations, it
 * fails the Spinnaker tasks a previous process left running; its start registers the stop of the running tasks, which
 * stop waiting and record why before the operations they wait on close.
 */
import { createClouddriverApi } from '../spinnaker/clouddriver-api.js';
import type { GatewayModule } from './module.js';

/** The Spinnaker module (module-list.ts). */
export const spinnakerModule: GatewayModule = {
  name: 'spinnaker',
  serves: 'the Clouddriver API (`/credentials`, `/applications`, `/task`, `/manifests`, …) when `spinnaker.enabled`',
  enabled: (config) => config.spinnaker.enabled,
  build: async (core) => {
    const { config, logger } = core;
    const clouddriver = createClouddriverApi({
      selfId: config.id,
      database: core.database,
      operations: core.operations,
      reads: core.reads,
      auditReads: config.audit.reads,
      accounts: core.accountAdmin,
      logger: logger.child({ component: 'spinnaker' }),
      replicaAlive: (id) => core.replicas.get(id) !== undefined,
      maxBodyBytes: config.operations.maxManifestBytes + 64 * 1024,
      audit: core.audit,
      fiat: config.spinnaker.fiat,
      metrics: core.metrics,
      now: core.fiatClock,
      artifacts: config.spinnaker.artifacts,
      answerCacheBytes: config.spinnaker.answerCacheMegabytes * 1024 * 1024,
    });
    await clouddriver
      .recover()
      .catch((err: unknown) => logger.error({ err }, 'could not fail the Spinnaker tasks a previous process left running'));
    return {
      restRoutes: [clouddriver],
      start: () => core.closers.defer('Spinnaker tasks', () => clouddriver.close()),
    };
  },
};
