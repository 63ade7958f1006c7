/**
 * The two listening sockets of a gateway — HTTP/1.1 and cleartext HTTP/2 (h2c) — serving one request handler, with
 * a shutdown that stops accepting, lets open exchanges finish for a grace period, then cuts what is left.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';

type Handler = http.RequestListener & ((req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);

/** Both servers, listening. */
export interface GatewayServers {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** Stops accepting new connections now; resolves once every connection closed (forcibly after `graceMs`). */
  close(graceMs: number): Promise<void>;
}

/** Starts both servers on `host`; rejects (with nothing left listening) when either port cannot be bound. */
export async function listenGatewayServers(handler: Handler, host: string, httpPort: number, grpcPort: number): Promise<GatewayServers> {
  const h1 = http.createServer(handler);
  const h2 = http2.createServer({}, handler);
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.Http2Session>();
  h1.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  h2.on('session', (s) => {
    sessions.add(s);
    s.on('close', () => sessions.delete(s));
  });
  try {
    await listen(h1, httpPort, host);
    await listen(h2, grpcPort, host);
  } catch (err) {
    h1.close();
    h2.close();
    throw err;
  }
  return {
    httpPort: (h1.address() as AddressInfo).port,
    grpcPort: (h2.address() as AddressInfo).port,
    async close(graceMs) {
      const closed = Promise.all([
        new Promise<void>((resolve) => h1.close(() => resolve())),
        new Promise<void>((resolve) => h2.close(() => resolve())),
      ]);
      h1.closeIdleConnections();
      for (const s of sessions) if (!s.closed) s.close();
      const timer = setTimeout(() => {
        h1.closeAllConnections();
        for (const s of sockets) s.destroy();
        for (const s of sessions) s.destroy();
      }, graceMs);
      timer.unref();
      try {
        await closed;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

function listen(server: http.Server | http2.Http2Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => {
      server.off('listening', onListening);
      reject(new Error(`cannot listen on ${host}:${port}: ${err.message}`, { cause: err }));
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen(port, host);
  });
}
