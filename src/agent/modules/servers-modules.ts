/**
 * The agent's two local servers: the admin server (status, health, readiness) and the Prometheus metrics server.
 * Started first, so they stop last: the agent can be asked about itself until the end.
 */
import { startAdminServer } from '../admin/admin-server.js';
import { metricsAddress, startMetricsServer } from '../metrics/metrics-server.js';
import { agentVersion } from '../version.js';
import type { AgentModule } from './module.js';

/** The admin server (`server.host`/`server.port`). */
export const adminServerModule: AgentModule = {
  name: 'admin-server',
  serves: 'the local admin port: status, health, readiness',
  start: async (core) => {
    const admin = core.closers.add(
      'admin server',
      await startAdminServer({
        port: core.config.server.port,
        host: core.config.server.host,
        status: core.status,
        info: { agentId: core.id, version: agentVersion(), configFile: core.deps.configFile },
      }),
      (server) => server.close(),
    );
    return { adminPort: admin.port };
  },
};

/** The Prometheus metrics server; left out when `prometheus.enabled` is false. */
export const metricsServerModule: AgentModule = {
  name: 'metrics-server',
  serves: 'the Prometheus port when `prometheus.enabled`',
  enabled: (core) => metricsAddress(core.config) !== undefined,
  start: async (core) => {
    const server = core.closers.add('metrics server', await startMetricsServer(core.metrics, metricsAddress(core.config)!), (s) =>
      s.close(),
    );
    return { metricsPort: server.port };
  },
};
