/**
 * Dials the gateway for one connection attempt: a TCP connection, straight or through a forward proxy's tunnel, then
 * TLS with the transport's ALPN protocols when the gateway is not plaintext. Both transports ride on the socket this
 * returns, so a proxy and TLS work the same way for each. A TLS gateway (or a proxy in front of it) that does not
 * offer `h2` to the gRPC transport is reported as such: HTTP/2 cannot pass there (transport-choice.ts).
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { Code, ConnectError } from '@connectrpc/connect';

/** How long a TCP connect, a proxy tunnel or a TLS handshake may take. */
const DIAL_TIMEOUT_MS = 30_000;

/** Where to dial and how. */
export interface DialOptions {
  host: string;
  port: number;
  /** TLS settings (transport.ts `tlsOptions`); plaintext when undefined. */
  tls?: tls.ConnectionOptions;
  /** ALPN protocols to offer over TLS (`['h2']` for gRPC, `['http/1.1']` for WebSocket). */
  alpn: string[];
  /** Opens a tunnel to host:port through a forward proxy (proxy-tunnel.ts); a direct connection when undefined. */
  tunnel?: (host: string, port: number, signal: AbortSignal) => Promise<net.Socket>;
  signal: AbortSignal;
  timeoutMs?: number;
}

/**
 * Thrown when TLS succeeded but the peer does not offer HTTP/2: a gRPC stream cannot pass. A plain Error: a subclass
 * of ConnectError would inherit its `instanceof` check, which matches every ConnectError.
 */
export class NoHttp2Error extends Error {
  constructor(offered: string) {
    super(`the gateway address does not offer HTTP/2 (ALPN answered ${offered || 'nothing'})`);
    this.name = 'NoHttp2Error';
  }
}

/** Dials; rejects with the network's own message (explained by transport.ts) or when `signal` aborts. */
export async function dialGateway(options: DialOptions): Promise<Duplex> {
  const timeout = AbortSignal.timeout(options.timeoutMs ?? DIAL_TIMEOUT_MS);
  const signal = AbortSignal.any([options.signal, timeout]);
  const raw = options.tunnel
    ? await options.tunnel(options.host, options.port, signal)
    : await settle(net.connect({ host: options.host, port: options.port }), 'connect', signal, options);
  if (!options.tls) return raw;
  const servername = options.tls.servername ?? (net.isIP(options.host) ? undefined : options.host);
  const secure = tls.connect({ ...options.tls, socket: raw, host: options.host, servername, ALPNProtocols: options.alpn });
  raw.on('error', () => {}); // the TLS socket reports the connection's failures
  await settle(secure, 'secureConnect', signal, options);
  if (options.alpn.includes('h2') && secure.alpnProtocol !== 'h2') {
    secure.destroy();
    throw new NoHttp2Error(secure.alpnProtocol || '');
  }
  return secure;
}

/** Waits for `event` on a fresh socket; destroys it on error, timeout or abort. */
function settle<T extends net.Socket>(socket: T, event: string, signal: AbortSignal, options: DialOptions): Promise<T> {
  return new Promise((resolve, reject) => {
    const cleanup = () => {
      socket.off(event, onReady);
      socket.off('error', onError);
      signal.removeEventListener('abort', onAbort);
    };
    const onReady = () => {
      cleanup();
      resolve(socket);
    };
    const onError = (err: Error) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const onAbort = () =>
      onError(
        options.signal.aborted
          ? new ConnectError('connection attempt cancelled', Code.Canceled)
          : new Error(`timed out after ${(options.timeoutMs ?? DIAL_TIMEOUT_MS) / 1000} s connecting to ${options.host}:${options.port}`),
      );
    socket.once(event, onReady);
    socket.once('error', onError);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) onAbort();
  });
}

/**
 * What answers at host:port when it is sent the HTTP/2 preface in plaintext: `http1` (an HTTP/1.1 server or proxy),
 * `tls` (a TLS port: its first byte is a TLS record), or `other` (silence, a close, HTTP/2). Used once an h2c attempt
 * failed with a protocol error, to tell an HTTP/1.1-only hop (fall back to WebSocket) from a TLS port (a setting to
 * fix); a separate short connection, so the failed attempt's socket is not needed.
 */
export async function probeGreeting(options: Omit<DialOptions, 'tls' | 'alpn'>): Promise<'http1' | 'tls' | 'other'> {
  let socket: Duplex | undefined;
  try {
    socket = await dialGateway({ ...options, alpn: [], timeoutMs: options.timeoutMs ?? 5000 });
    const opened = socket;
    const first = await new Promise<Buffer | undefined>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), options.timeoutMs ?? 5000);
      opened.once('data', (chunk: Buffer) => {
        clearTimeout(timer);
        resolve(chunk);
      });
      opened.once('error', () => resolve(undefined));
      opened.once('close', () => resolve(undefined));
      opened.write('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
    });
    if (first === undefined || first.length === 0) return 'other';
    if (first.subarray(0, 5).toString('latin1') === 'HTTP/') return 'http1';
    if (first[0] === 0x15 || first[0] === 0x16) return 'tls';
    return 'other';
  } catch {
    return 'other';
  } finally {
    socket?.destroy();
  }
}
