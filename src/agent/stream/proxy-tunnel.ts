/**
 * Opens a TCP tunnel through an HTTP forward proxy with `CONNECT host:port` (RFC 9110 §9.3.6), using Node's own HTTP
 * client for the exchange, and hands back the raw socket for TLS, h2c or WebSocket on top. Every failure becomes a
 * {@link ProxyTunnelError} whose message names the proxy (never its password) and what went wrong.
 */
import http from 'node:http';
import type net from 'node:net';
import { describeProxy } from './proxy-settings.js';

/** Why a tunnel could not be opened (for hints and metrics; the message says it in words). */
export type ProxyTunnelFailure =
  | 'unreachable' // no TCP connection to the proxy (refused, unknown host, network error)
  | 'timeout' // no answer to CONNECT within timeoutMs
  | 'auth-required' // 407 and no credentials were sent
  | 'auth-refused' // 407 (or tinyproxy's 401) to the credentials sent
  | 'refused' // any other non-2xx status
  | 'closed' // the proxy closed the connection without an answer
  | 'protocol'; // the answer was not HTTP

/** A tunnel that could not be opened; `failure` classifies it, `cause` holds the underlying error if any. */
export class ProxyTunnelError extends Error {
  override name = 'ProxyTunnelError';
  constructor(
    readonly failure: ProxyTunnelFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** Options of {@link openProxyTunnel}. */
export interface ProxyTunnelOptions {
  /** `http://[user:password@]host:port` (percent-encoded user info; see `parseProxyUrl`). */
  proxy: URL;
  /** Where the tunnel leads: the gateway's host name (sent as is; no local DNS lookup) and port. */
  host: string;
  port: number;
  /** Aborting destroys the request and rejects with the signal's reason; no effect once the tunnel is open. */
  signal?: AbortSignal;
  /** Bounds the TCP connection to the proxy plus its answer (default 30 s). */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** How much of a refusal's body goes into the message. */
const BODY_EXCERPT_CHARS = 200;
/** How long to wait for the rest of a refusal's body before giving the message without it. */
const BODY_WAIT_MS = 2_000;

/** `Basic base64(user:password)` from the URL's percent-encoded user info, or undefined without a user name. */
function proxyAuthorization(proxy: URL): string | undefined {
  if (proxy.username === '' && proxy.password === '') return undefined;
  const credentials = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`;
  return `Basic ${Buffer.from(credentials, 'utf8').toString('base64')}`;
}

/** Text of a refusal body, tags dropped and whitespace folded, cut to {@link BODY_EXCERPT_CHARS}. */
function excerpt(body: Buffer): string {
  const text = body
    .toString('utf8')
    .replace(/<(head|style|script)[\s\S]*?<\/\1>|<!DOCTYPE[^>]*>|<\?xml[^>]*\?>/gi, ' ')
    .replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  return text.length > BODY_EXCERPT_CHARS ? `${text.slice(0, BODY_EXCERPT_CHARS)}…` : text;
}

/** Reads what follows a refusal's headers, up to the excerpt's worth, the end of the body or a short wait. */
function readBody(socket: net.Socket, head: Buffer, contentLength: number): Promise<Buffer> {
  const limit = Math.min(Number.isFinite(contentLength) ? contentLength : Number.POSITIVE_INFINITY, BODY_EXCERPT_CHARS * 4);
  const chunks = [head];
  let size = head.length;
  if (size >= limit || socket.destroyed) return Promise.resolve(head);
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      socket.off('data', onData).off('end', done).off('close', done).off('error', done);
      resolve(Buffer.concat(chunks));
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= limit) done();
    };
    const timer = setTimeout(done, BODY_WAIT_MS);
    socket.on('data', onData).on('end', done).on('close', done).on('error', done);
  });
}

/**
 * Asks `proxy` for a tunnel to `host:port` and resolves with the connected socket once the proxy answered 2xx. Any
 * bytes the proxy sent after its answer are pushed back into the socket, so the caller reads them first.
 *
 * The caller owns the socket from then on: attach an `'error'` listener at once (or hand it straight to
 * `tls.connect({ socket, servername, ALPNProtocols })` or `http2.connect(url, { createConnection: () => socket })`,
 * which do), and destroy it when done. The proxy sees `host` unresolved, so the gateway name must resolve where the
 * proxy runs. Rejects with a {@link ProxyTunnelError}, or with `signal.reason` when aborted.
 */
export function openProxyTunnel(options: ProxyTunnelOptions): Promise<net.Socket> {
  const { proxy, host, port, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const where = `the proxy at ${describeProxy(proxy)}`;
  const target = `${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}`;
  if (proxy.protocol !== 'http:') {
    return Promise.reject(new ProxyTunnelError('protocol', `${where}: only http:// proxies are supported`));
  }
  if (signal?.aborted) return Promise.reject(signal.reason);
  const authorization = proxyAuthorization(proxy);
  const headers: http.OutgoingHttpHeaders = { host: target };
  if (authorization) headers['proxy-authorization'] = authorization;

  return new Promise<net.Socket>((resolve, reject) => {
    let settled = false;
    const settle = (error: unknown, socket?: net.Socket) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (socket) resolve(socket);
      else {
        request.destroy();
        reject(error);
      }
    };
    const request = http.request({
      host: proxy.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(proxy.port) || 80,
      method: 'CONNECT',
      path: target,
      headers,
      agent: false,
    });
    const onAbort = () => settle(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(
      () => settle(new ProxyTunnelError('timeout', `${where} did not answer CONNECT to ${target} within ${timeoutMs} ms`)),
      timeoutMs,
    );

    request.on('connect', (response: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 300) {
        if (settled) return void socket.destroy();
        if (head.length > 0) socket.unshift(head);
        return settle(undefined, socket);
      }
      socket.on('error', () => {}); // the refusal is reported below; a reset while reading its body changes nothing
      const reason = `${status} ${response.statusMessage ?? ''}`.trim();
      void readBody(socket, head, Number(response.headers['content-length'])).then((body) => {
        socket.destroy();
        const text = excerpt(body);
        const detail = text ? `: ${reason} — ${text}` : `: ${reason}`;
        if (status === 407 || (status === 401 && authorization)) {
          const failure = authorization ? 'auth-refused' : 'auth-required';
          const message = authorization
            ? `${where} refused the credentials of user "${decodeURIComponent(proxy.username)}"`
            : `${where} requires authentication: put user:password in the proxy URL`;
          return settle(new ProxyTunnelError(failure, `${message} (CONNECT to ${target}${detail})`));
        }
        settle(new ProxyTunnelError('refused', `${where} refused CONNECT to ${target}${detail}`));
      });
    });
    request.on('error', (error: NodeJS.ErrnoException) => settle(tunnelError(error, where, target)));
    request.end();
  });
}

/** The {@link ProxyTunnelError} for an error of the CONNECT request itself. */
function tunnelError(error: NodeJS.ErrnoException, where: string, target: string): ProxyTunnelError {
  const code = error.code ?? '';
  if (code === 'ECONNRESET' && /socket hang up/i.test(error.message)) {
    return new ProxyTunnelError('closed', `${where} closed the connection without answering CONNECT to ${target}`, { cause: error });
  }
  if (code.startsWith('HPE_')) {
    return new ProxyTunnelError('protocol', `${where} did not answer CONNECT to ${target} in HTTP: ${error.message}`, { cause: error });
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') {
    return new ProxyTunnelError('unreachable', `cannot reach ${where}: its host name does not resolve (${code})`, { cause: error });
  }
  return new ProxyTunnelError('unreachable', `cannot reach ${where}: ${error.message}`, { cause: error });
}
