/**
 * The agent's local admin HTTP server (`server.host:server.port`, 127.0.0.1:8082 by default): the read-only JSON
 * endpoints of {@link ADMIN_ROUTES} — readiness, liveness, version, status, accounts, operations, watches. It binds to
 * 127.0.0.1 unless configured otherwise: the agent accepts no other inbound connection. Answers are always JSON:
 * 400 `{error: "bad_request", message}` for a bad query, 404 for an unknown path, 405 for a method other than GET/HEAD.
 */
import type { AgentStatus } from '../status.js';
import { AdminQueryError } from './admin-query.js';
import { ADMIN_ROUTES, type AdminInfo } from './admin-routes.js';
import { listenHttp, sendJson, type HttpListener } from './http-listener.js';

/** A started admin server. */
export type AdminServer = HttpListener;

/** Options of {@link startAdminServer}. */
export interface AdminServerOptions {
  /** 0 = ephemeral. */
  port: number;
  host: string;
  /** Read on each request. */
  status: () => AgentStatus;
  info: AdminInfo;
}

/** Starts the server. Rejects when the address cannot be bound. */
export function startAdminServer(options: AdminServerOptions): Promise<AdminServer> {
  return listenHttp(
    (req, res) => {
      try {
        // Parsed as a path only (a request target such as `//host/x` or `*` must not be read as a URL of its own).
        const target = req.url ?? '/';
        const url = new URL(target.startsWith('/') ? `http://admin.local${target}` : 'http://admin.local/');
        const route = ADMIN_ROUTES[url.pathname];
        if (route === undefined) {
          return sendJson(res, 404, {
            error: 'not_found',
            message: `no route ${url.pathname}; try ${Object.keys(ADMIN_ROUTES).join(', ')}`,
          });
        }
        if (req.method !== 'GET' && req.method !== 'HEAD') {
          const message = `${req.method} ${url.pathname} is not allowed; the admin endpoints are read-only (GET)`;
          return sendJson(res, 405, { error: 'method_not_allowed', message }, { allow: 'GET, HEAD' });
        }
        const answer = route({ status: options.status(), query: url.searchParams, info: options.info, now: Date.now() });
        sendJson(res, answer.code, answer.body);
      } catch (err) {
        if (err instanceof AdminQueryError) return sendJson(res, 400, { error: 'bad_request', message: err.message });
        sendJson(res, 500, { error: 'internal', message: (err as Error).message });
      }
    },
    options.port,
    options.host,
  );
}
