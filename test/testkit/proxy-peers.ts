/**
 * Both ends of a connection through a reverse proxy, for test/testkit/reverse-proxies.test.ts: an upstream Node server
 * on 127.0.0.1 port 0 that answers HTTP/1.1 requests with what it saw and accepts WebSocket upgrades (a raw RFC 6455
 * handshake, then plain bytes: proxies tunnel an upgraded connection without reading frames, so none are built), and
 * the clients: a GET, an upgrade, an HTTP/2 attempt. Every wait is bounded only to turn a hang into a failure.
 */
import { createHash, randomBytes } from 'node:crypto';
import http, { type IncomingHttpHeaders } from 'node:http';
import http2 from 'node:http2';
import https from 'node:https';
import type net from 'node:net';
import type { Duplex } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long any single exchange here may take before it counts as a hang. */
const HANG_MS = 30_000;

/** The subprotocol the agent asks for. */
export const SUBPROTOCOL = 'outpost.agent.v1';

/** What the upstream saw of one request. */
interface SeenRequest {
  method: string;
  url: string;
  httpVersion: string;
  headers: IncomingHttpHeaders;
}

/** The upstream server. */
export interface Upstream {
  readonly port: number;
  /** Every request and upgrade request it received, in order. */
  readonly seen: SeenRequest[];
  close(): Promise<void>;
}

/** The `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key` (RFC 6455 §4.2.2). */
function acceptFor(key: string): string {
  return createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC65B11`).digest('base64');
}

/**
 * Starts the upstream: a GET is answered `200` with the body `<url> HTTP/<version>`; a WebSocket upgrade with `101`,
 * the subprotocol echoed, then `hello` written at once and every chunk received echoed back as `echo:<chunk>`.
 */
export async function startUpstream(): Promise<Upstream> {
  const seen: SeenRequest[] = [];
  const sockets = new Set<Duplex>();
  const note = (req: http.IncomingMessage) =>
    seen.push({ method: req.method!, url: req.url!, httpVersion: req.httpVersion, headers: req.headers });
  const server = http.createServer((req, res) => {
    note(req);
    res.setHeader('content-type', 'text/plain');
    res.end(`${req.url} HTTP/${req.httpVersion}`);
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex) => {
    note(req);
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    const key = req.headers['sec-websocket-key'];
    if (req.headers.upgrade?.toLowerCase() !== 'websocket' || typeof key !== 'string') {
      socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    const protocol = req.headers['sec-websocket-protocol'] === SUBPROTOCOL ? `sec-websocket-protocol: ${SUBPROTOCOL}\r\n` : '';
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-accept: ${acceptFor(key)}\r\n${protocol}\r\nhello`,
    );
    socket.on('data', (chunk: Buffer) => socket.write(`echo:${chunk}`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    seen,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** Rejects after {@link HANG_MS} with `what`, unless `promise` settled first. */
async function bounded<T>(what: string, promise: Promise<T>): Promise<T> {
  const timer = sleep(HANG_MS, undefined, { ref: false }).then(() => {
    throw new Error(`${what}: no outcome within ${HANG_MS} ms`);
  });
  return Promise.race([promise, timer]);
}

/** The answer to a GET. */
export interface GetResult {
  status: number;
  body: string;
}

/** GETs `url` on a fresh connection (no keep-alive agent); `ca` trusts a test CA for https. */
export function get(url: string, ca?: string): Promise<GetResult> {
  const request = url.startsWith('https:') ? https.request : http.request;
  return bounded(
    `GET ${url}`,
    new Promise((resolve, reject) => {
      const req = request(url, { agent: false, ...(ca ? { ca } : {}) }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    }),
  );
}

/** An upgraded connection. */
interface Upgraded {
  headers: IncomingHttpHeaders;
  socket: net.Socket;
  /** The `Sec-WebSocket-Accept` the upstream computes for the key sent. */
  expectedAccept: string;
  /** Everything the socket carried after the response head so far. */
  received(): string;
}

/** The outcome of an upgrade request: the status, and the upgraded connection on 101 or the body otherwise. */
export interface UpgradeResult {
  status: number;
  body?: string;
  upgraded?: Upgraded;
}

/** Asks `url` for a WebSocket upgrade (key, version 13, subprotocol {@link SUBPROTOCOL}). */
export function upgrade(url: string, ca?: string): Promise<UpgradeResult> {
  const key = randomBytes(16).toString('base64');
  const request = url.startsWith('https:') ? https.request : http.request;
  const headers = {
    connection: 'Upgrade',
    upgrade: 'websocket',
    'sec-websocket-key': key,
    'sec-websocket-version': '13',
    'sec-websocket-protocol': SUBPROTOCOL,
  };
  return bounded(
    `upgrade ${url}`,
    new Promise((resolve, reject) => {
      const req = request(url, { agent: false, headers, ...(ca ? { ca } : {}) });
      req.on('upgrade', (res, socket: net.Socket, head: Buffer) => {
        let data = head.toString('utf8');
        socket.on('data', (chunk: Buffer) => (data += chunk.toString('utf8')));
        socket.on('error', () => socket.destroy());
        resolve({
          status: res.statusCode!,
          upgraded: { headers: res.headers, socket, expectedAccept: acceptFor(key), received: () => data },
        });
      });
      req.on('response', (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      });
      req.on('error', reject);
      req.end();
    }),
  );
}

/** Resolves once `socket` closed (at once if it has). */
export function closed(socket: net.Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return bounded('socket close', new Promise((resolve) => socket.once('close', () => resolve())));
}

/** What an HTTP/2 client saw: the response, or the stream's and the session's errors. */
export interface Http2Outcome {
  /** The ALPN protocol the TLS handshake agreed on (`false`: none; undefined: cleartext or no handshake). */
  alpn?: string | false;
  response?: { status: number; body: string };
  /** `code: message` of the request stream's error. */
  streamError?: string;
  /** `code: message` of the session's error. */
  sessionError?: string;
}

/**
 * One GET of `path` with Node's HTTP/2 client (`http2.connect`: prior knowledge on http:, ALPN h2 on https:), followed
 * until the session closed; the errors recorded as `code: message` (first line of the message).
 */
export function http2Get(url: string, path: string, ca?: string): Promise<Http2Outcome> {
  const outcome: Http2Outcome = {};
  const line = (e: NodeJS.ErrnoException) => `${e.code}: ${e.message.split('\n')[0]}`;
  return bounded(
    `HTTP/2 GET ${url}${path}`,
    new Promise((resolve) => {
      const session = http2.connect(url, ca ? { ca } : {});
      session.on('connect', (_s, socket) => {
        if ('alpnProtocol' in socket) outcome.alpn = socket.alpnProtocol ?? undefined;
      });
      session.on('error', (e) => (outcome.sessionError = line(e)));
      session.on('close', () => resolve(outcome));
      const req = session.request({ ':path': path });
      req.on('error', (e) => (outcome.streamError = line(e)));
      req.on('response', (headers) => {
        let body = '';
        req.setEncoding('utf8');
        req.on('data', (chunk: string) => (body += chunk));
        req.on('end', () => {
          outcome.response = { status: Number(headers[':status']), body };
          session.close();
        });
      });
      req.end();
    }),
  );
}
