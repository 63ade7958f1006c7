/**
 * The history behind the dashboard's charts: MetricsService on every replica (it reads the shared samples), and on
 * replicas with `history.enabled` the writer loop, of which one at a time holds the lease and writes
 * (src/gateway/history/, docs/scaling.md for the cost). Serves a Connect service, so it comes before the client API,
 * whose reflection and health name every service served earlier. Its stop ends the loop and gives the lease up.
 */
import { MetricsService } from '../../gen/outpost/api/v1/metrics_service_pb.js';
import { createHistoryWriter } from '../history/history-writer.js';
import { createMetricsService } from '../history/metrics-service.js';
import type { GatewayModule } from './module.js';

/** The history module (module-list.ts). */
export const historyModule: GatewayModule = {
  name: 'history',
  serves: 'Connect/gRPC: MetricsService (the charts’ history); the samples’ writer when `history.enabled`',
  build: (core) => {
    const { config, database } = core;
    const logger = core.logger.child({ component: 'history' });
    const steps = config.history;
    const writer = config.history.enabled
      ? createHistoryWriter({
          db: database.db,
          replicaId: config.id,
          steps,
          staleAfterSeconds: core.agentStaleAfterSeconds,
          logger,
        })
      : undefined;
    return {
      services: [
        {
          type: MetricsService,
          register: (r) => r.service(MetricsService, createMetricsService({ database, steps, logger })),
        },
      ],
      start: () => {
        if (!writer) return;
        writer.start();
        core.closers.defer('history writer', () => writer.close());
      },
    };
  },
};
