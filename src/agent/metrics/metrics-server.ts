/**
 * The agent's Prometheus endpoint: `GET /metrics` on `prometheus.host:prometheus.port`, nothing else. Like the admin
 * server it binds to 127.0.0.1 unless configured otherwise (the agent accepts no outside connection by default).
 */
import { AGENT_DEFAULTS } from '../config/defaults.js';
import type { AgentConfig } from '../config/schema.js';
import { listenHttp, sendJson, type HttpListener } from '../admin/http-listener.js';
import type { AgentMetrics } from './agent-metrics.js';

/**
 * Where metrics are served: `prometheus.port`, else {@link AGENT_DEFAULTS.metricsPort} — or an ephemeral port when
 * `server.port` is 0, so several agents on one host (tests) never fight over 8008; `prometheus.host`, else
 * `server.host`. Undefined when `prometheus.enabled` is false.
 */
export function metricsAddress(config: Pick<AgentConfig, 'server' | 'prometheus'>): { port: number; host: string } | undefined {
  if (!config.prometheus.enabled) return undefined;
  return {
    port: config.prometheus.port ?? (config.server.port === 0 ? 0 : AGENT_DEFAULTS.metricsPort),
    host: config.prometheus.host ?? config.server.host,
  };
}

/** Serves `metrics` at `/metrics`. Rejects when the address cannot be bound. */
export function startMetricsServer(metrics: AgentMetrics, address: { port: number; host: string }): Promise<HttpListener> {
  return listenHttp(
    (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (path !== '/metrics') return sendJson(res, 404, { error: 'not_found', message: `no route ${path}; metrics are at /metrics` });
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        return sendJson(
          res,
          405,
          { error: 'method_not_allowed', message: `${req.method} is not allowed; use GET` },
          { allow: 'GET, HEAD' },
        );
      }
      metrics.scrape().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
          res.end(body);
        },
        (err: unknown) => sendJson(res, 500, { error: 'internal', message: `cannot collect metrics: ${(err as Error).message}` }),
      );
    },
    address.port,
    address.host,
  );
}
