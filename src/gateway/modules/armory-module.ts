/**
 * The REST app (Hono, connect-node's fallback on both ports): `/health`, `/metrics`, `/armory/…` (replicas,
 * operations, accounts, agents, the internal routes replicas call on each other), then the REST routes and the
 * dashboard directory of the modules built before it — so it comes after them in the list. The features' path rules
 * and error shapes apply whether or not a feature is left out (feature-paths.ts). Starts nothing.
 */
import { GATEWAY_ERROR_SHAPES, GATEWAY_PATH_RULES } from './feature-paths.js';
import { createRestApp } from '../rest/rest-app.js';
import type { GatewayModule } from './module.js';

/** The REST `/armory` module (module-list.ts). */
export const armoryModule: GatewayModule = {
  name: 'armory',
  serves: 'REST: `/health`, `/metrics`, `/armory/…`, and the routes and files of the modules above',
  build: (core, earlier) => {
    const rest = createRestApp({
      id: core.config.id,
      baseUrl: core.state.baseUrl,
      database: core.database,
      isDraining: core.state.isDraining,
      logger: core.logger.child({ component: 'rest' }),
      operations: core.operations,
      authenticator: core.authenticator,
      agentStaleAfterSeconds: core.agentStaleAfterSeconds,
      accounts: core.accountAdmin,
      replicas: core.replicas,
      routes: earlier.restRoutes ?? [],
      pathRules: GATEWAY_PATH_RULES,
      errorShapes: GATEWAY_ERROR_SHAPES,
      metrics: core.metrics,
      audit: core.audit,
      reads: core.reads,
      webDir: earlier.webDir,
    });
    return { restFetch: rest.fetch };
  },
};
