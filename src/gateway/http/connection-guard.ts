/**
 * What an unauthenticated peer may hold on a gateway port (docs/security.md, "No work before authentication"): every
 * connection starts *unproven* and counts against `limits.maxUnauthenticatedConnections` (beyond it, new
 * connections are closed at once) until one of its requests is admitted or served; an unproven connection that sends
 * no request within `limits.idleConnectionSeconds` — the TLS handshake included, also bounded on its own by the TLS
 * server — is closed, and so is one whose refused requests pass `limits.maxRefusedRequestsPerConnection`. Proven
 * connections (agents' streams, clients) are left alone. Connections are told apart by their local port and peer
 * address and port, which the raw socket, the TLS socket, the HTTP/2 session and every request share; one guard
 * serves both ports.
 */
import type http from 'node:http';
import type http2 from 'node:http2';
import type { Socket } from 'node:net';

/** The `limits` section of the gateway configuration that the guard applies. */
export interface ConnectionLimits {
  idleConnectionSeconds: number;
  maxUnauthenticatedConnections: number;
  maxRefusedRequestsPerConnection: number;
}

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** The guard of a gateway's listening servers. */
export interface ConnectionGuard {
  /** Call for every raw connection the server accepts (its `connection` event). */
  accepted(socket: Socket): void;
  /** A request arrived (headers read): the connection is not idle. */
  requestArrived(req: AnyRequest): void;
  /** A request of the connection was admitted or served: the connection is proven. */
  proven(req: AnyRequest): void;
  /** A request of the connection was refused (no or bad credentials); may close the connection. */
  refused(req: AnyRequest): void;
  /** Unproven connections open now (tests, metrics). */
  readonly unproven: number;
}

interface Entry {
  socket: Socket;
  timer?: NodeJS.Timeout;
  refusals: number;
}

/**
 * Closes a connection at once, with a reset: on an h2c port the HTTP/2 session, created before the `connection`
 * listeners run, owns the socket's handle, and neither `socket.destroy()` nor `session.destroy()` closes a connection
 * that never sent the HTTP/2 preface (Node 20).
 */
function cut(socket: Socket): void {
  if (!socket.destroyed) socket.resetAndDestroy();
}

/** Creates a guard. */
export function createConnectionGuard(limits: ConnectionLimits): ConnectionGuard {
  const entries = new Map<string, Entry>();
  const idleMs = limits.idleConnectionSeconds * 1000;
  const keyOf = (s: { localPort?: number; remoteAddress?: string; remotePort?: number } | undefined) =>
    s?.remoteAddress ? `${s.localPort}|${s.remoteAddress}|${s.remotePort}` : undefined;
  const socketOf = (req: AnyRequest) =>
    req.httpVersionMajor === 2 ? ((req as http2.Http2ServerRequest).stream?.session?.socket as Socket | undefined) : (req.socket as Socket);
  const entryOf = (req: AnyRequest) => {
    const key = keyOf(socketOf(req));
    return key === undefined ? undefined : entries.get(key);
  };
  const arm = (entry: Entry) => {
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => cut(entry.socket), idleMs);
    entry.timer.unref();
  };
  return {
    accepted(socket) {
      const key = keyOf(socket);
      if (key === undefined) return;
      if (entries.size >= limits.maxUnauthenticatedConnections) {
        cut(socket);
        return;
      }
      const entry: Entry = { socket, refusals: 0 };
      entries.set(key, entry);
      arm(entry);
      socket.once('close', () => {
        clearTimeout(entry.timer);
        if (entries.get(key) === entry) entries.delete(key);
      });
    },
    requestArrived(req) {
      const entry = entryOf(req);
      if (entry) clearTimeout(entry.timer);
    },
    proven(req) {
      const key = keyOf(socketOf(req));
      const entry = key === undefined ? undefined : entries.get(key);
      if (!entry) return;
      clearTimeout(entry.timer);
      entries.delete(key!);
    },
    refused(req) {
      const entry = entryOf(req);
      if (!entry) return;
      entry.refusals++;
      if (entry.refusals >= limits.maxRefusedRequestsPerConnection) {
        // Let the answer go out first; then the connection is done.
        setImmediate(() => cut(entry.socket));
        return;
      }
      arm(entry);
    },
    get unproven() {
      return entries.size;
    },
  };
}
