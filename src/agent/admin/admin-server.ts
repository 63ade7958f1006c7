/**
 * The agent's local admin HTTP server: `/health` (liveness, with connection state), `/status` (accounts and
 * watches) and `/accounts` (each account with its source, file or dynamic, its verdict and reason, and its watches). It binds to 127.0.0.1 only: the agent accepts no other inbound connection.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AgentStatus } from '../status.js';

/** A started admin server. */
export interface AdminServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Starts the server on `port` (0 = ephemeral). `status` is read on each request. */
export async function startAdminServer(port: number, status: () => AgentStatus, host = '127.0.0.1'): Promise<AdminServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const reply = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'GET') return reply(405, { error: 'method not allowed' });
    if (path === '/health') {
      const s = status();
      return reply(200, { status: 'UP', connected: s.connected, sessionId: s.sessionId ?? null });
    }
    if (path === '/status') return reply(200, status());
    if (path === '/accounts') return reply(200, { accounts: status().accounts });
    reply(404, { error: `no route ${path}; try /health, /status or /accounts` });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
