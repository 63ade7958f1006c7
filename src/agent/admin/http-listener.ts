/**
 * Starts a small local HTTP server (the admin and metrics servers) and closes it for good: `close()` drops idle
 * keep-alive connections too, so the agent's shutdown never waits for a scraper's open socket.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A listening server. */
export interface HttpListener {
  /** The port actually bound (useful with port 0). */
  readonly port: number;
  readonly host: string;
  /** Stops listening and closes every connection. Idempotent. */
  close(): Promise<void>;
}

/** Listens on `host:port` (0 = ephemeral). Rejects when the address cannot be bound (in use, not local…). */
export async function listenHttp(handler: http.RequestListener, port: number, host: string): Promise<HttpListener> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  let closing: Promise<void> | undefined;
  return {
    port: (server.address() as AddressInfo).port,
    host,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** Writes a JSON answer. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  res.end(JSON.stringify(body));
}
