/**
 * The two listening sockets of a gateway serving one request handler, with a shutdown that stops accepting, lets open
 * exchanges finish for a grace period, then cuts what is left.
 *
 * Cleartext: HTTP/1.1 on the HTTP port and HTTP/2 (h2c) on the gRPC port. With TLS: the HTTP port speaks HTTP/2 and
 * HTTP/1.1 (chosen by ALPN) and the gRPC port HTTP/2, both with the context of a {@link TlsContextSource}, which
 * replaces it when the certificate files change. The gRPC port drops every request's cookies.
 */
import http from 'node:http';
import http2 from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import type { TlsContextSource } from './auth/tls-context.js';
import { answerClientError } from './grpc/protocol-guards.js';
import type { GatewayConfig } from './config/schema.js';
import type { ConnectionGuard } from './http/connection-guard.js';

type Handler = http.RequestListener & ((req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
type AnyServer = http.Server | http2.Http2Server | http2.Http2SecureServer;

/** Both servers, listening. */
export interface GatewayServers {
  readonly httpPort: number;
  readonly grpcPort: number;
  /** True when both ports serve TLS. */
  readonly secure: boolean;
  /** Stops accepting new connections now; resolves once every connection closed (forcibly after `graceMs`). */
  close(graceMs: number): Promise<void>;
}

/** Options of {@link listenGatewayServers}. */
export interface GatewayServersOptions {
  /** Serve TLS on both ports with this (reloadable) context. */
  tls?: TlsContextSource;
  /** Told about every accepted connection (connection-guard.ts). */
  guard?: Pick<ConnectionGuard, 'accepted'>;
  /** HTTP/2 streams per connection, and the idle bound that also caps a TLS handshake and HTTP/1.1 headers. */
  limits?: Pick<GatewayConfig['limits'], 'maxConcurrentStreams' | 'idleConnectionSeconds'>;
  /** Serves HTTP/1.1 upgrade requests on the HTTP port (the agent stream over WebSocket); refused when absent. */
  upgrade?: (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;
}

/** Starts both servers on `host`; rejects (with nothing left listening) when either port cannot be bound. */
export async function listenGatewayServers(
  handler: Handler,
  host: string,
  httpPort: number,
  grpcPort: number,
  options: GatewayServersOptions = {},
): Promise<GatewayServers> {
  const sockets = new Set<Socket>();
  const sessions = new Set<http2.Http2Session>();
  /** HTTP/1.1 connections on a TLS port, with how many requests each has open (closed when idle at shutdown). */
  const h1OverTls = new Map<TLSSocket, number>();
  let closing = false;

  const tracked: Handler = ((
    req: http.IncomingMessage | http2.Http2ServerRequest,
    res: http.ServerResponse | http2.Http2ServerResponse,
  ) => {
    const socket = req.socket as TLSSocket;
    if (req.httpVersionMajor === 1 && h1OverTls.has(socket)) {
      h1OverTls.set(socket, h1OverTls.get(socket)! + 1);
      if (closing) (res as http.ServerResponse).setHeader('Connection', 'close');
      res.once('close', () => {
        const left = (h1OverTls.get(socket) ?? 1) - 1;
        if (h1OverTls.has(socket)) h1OverTls.set(socket, left);
        if (closing && left === 0) socket.end();
      });
    }
    (handler as (a: unknown, b: unknown) => void)(req, res);
  }) as Handler;

  let h1: http.Server | http2.Http2SecureServer;
  let h2: http2.Http2Server | http2.Http2SecureServer;
  const settings: http2.Settings | undefined = options.limits ? { maxConcurrentStreams: options.limits.maxConcurrentStreams } : undefined;
  const idleMs = options.limits ? Math.round(options.limits.idleConnectionSeconds * 1000) : undefined;
  if (options.tls) {
    const tlsOptions = { ...options.tls.serverOptions(), settings, ...(idleMs ? { handshakeTimeout: idleMs } : {}) };
    const secureHttp = http2.createSecureServer({ ...tlsOptions, allowHTTP1: true }, tracked);
    const secureGrpc = http2.createSecureServer({ ...tlsOptions }, withoutCookies(tracked));
    for (const server of [secureHttp, secureGrpc]) {
      options.tls.attach(server);
      server.on('secureConnection', (s: TLSSocket) => {
        if (s.alpnProtocol === 'h2') return;
        h1OverTls.set(s, 0);
        s.on('close', () => h1OverTls.delete(s));
      });
      // a failed handshake (plain HTTP to a TLS port, a client rejecting our certificate) must not crash anything
      server.on('tlsClientError', () => {});
    }
    h1 = secureHttp;
    h2 = secureGrpc;
  } else {
    h1 = http.createServer(idleMs ? { headersTimeout: idleMs, requestTimeout: Math.max(idleMs, 300_000) } : {}, handler);
    h2 = http2.createServer({ settings }, withoutCookies(handler));
  }
  if (options.upgrade) h1.on('upgrade', options.upgrade);
  for (const server of [h1, h2] as AnyServer[]) {
    // a request the HTTP/1.1 parser refuses gets a JSON 4xx, not Node's bare one
    server.on('clientError', answerClientError);
    server.on('connection', (s: Socket) => {
      options.guard?.accepted(s);
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    server.on('session', (s: http2.Http2Session) => {
      sessions.add(s);
      s.on('close', () => sessions.delete(s));
    });
  }
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
    secure: options.tls !== undefined,
    async close(graceMs) {
      closing = true;
      const closed = Promise.all([
        new Promise<void>((resolve) => h1.close(() => resolve())),
        new Promise<void>((resolve) => h2.close(() => resolve())),
      ]);
      if (h1 instanceof http.Server) h1.closeIdleConnections();
      for (const [s, open] of h1OverTls) if (open === 0) s.end();
      for (const s of sessions) if (!s.closed) s.close();
      const timer = setTimeout(() => {
        if (h1 instanceof http.Server) h1.closeAllConnections();
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

/**
 * The gRPC port's handler: requests there never carry cookies (the dashboard's session is a credential of the HTTP
 * port only: docs/security.md, "The dashboard's sessions"), so the header is dropped before anything reads it.
 */
function withoutCookies(handler: Handler): Handler {
  return ((req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => {
    delete req.headers.cookie;
    handler(req, res);
  }) as Handler;
}

function listen(server: AnyServer, port: number, host: string): Promise<void> {
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
