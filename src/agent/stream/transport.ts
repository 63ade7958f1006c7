/**
 * Opens the connection of one attempt towards the gateway from the `clouddriver` settings, over either transport:
 * gRPC over HTTP/2 (`clouddriver.grpc`) or a WebSocket (`clouddriver.websocket`, by default the same address);
 * plaintext when `insecure`, otherwise TLS with optional CA file, client certificate (mTLS), server name override and
 * skip-verify. Each attempt gets its own socket, dropped when the attempt ends, so no dead socket lingers.
 */
import { readFileSync } from 'node:fs';
import type { SecureClientSessionOptions } from 'node:http2';
import { Code, ConnectError } from '@connectrpc/connect';
import { AGENT_WEBSOCKET_PATH } from '../../shared/agent-websocket.js';
import type { AgentConfig } from '../config/schema.js';
import { type DialOptions, dialGateway, NoHttp2Error, probeGreeting } from './gateway-socket.js';
import { grpcStream } from './grpc-stream.js';
import { proxyFor } from './proxy-settings.js';
import { openProxyTunnel, ProxyTunnelError } from './proxy-tunnel.js';
import type { StreamConnect, TransportKind } from './stream-connect.js';
import { http2CannotPass } from './transport-choice.js';
import { webSocketConnect } from './websocket-stream.js';

/** One attempt's connection: the stream call, which transport carries it, where it goes, and how to drop it. */
export interface GatewayConnection {
  transport: TransportKind;
  /** The gateway URL dialled (no credentials in it). */
  url: string;
  connect: StreamConnect;
  close(): void;
}

/** Reads the TLS files once; throws a clear error naming the file. */
function tlsOptions(clouddriver: AgentConfig['clouddriver']): SecureClientSessionOptions {
  const tls = clouddriver.tls;
  const read = (key: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`clouddriver.tls.${key}: cannot read ${file}: ${(err as Error).message}`);
    }
  };
  const options: SecureClientSessionOptions = {};
  if (tls?.cacertFile) options.ca = read('cacertFile', tls.cacertFile);
  if (tls?.clientCertFile) options.cert = read('clientCertFile', tls.clientCertFile);
  if (tls?.clientKeyFile) options.key = read('clientKeyFile', tls.clientKeyFile);
  else if (tls?.clientCertFile) options.key = options.cert; // key bundled with the certificate
  if (tls?.clientKeyPassword) options.passphrase = tls.clientKeyPassword;
  if (tls?.serverName) options.servername = tls.serverName;
  if (tls?.insecureSkipVerify) options.rejectUnauthorized = false;
  return options;
}

/** The URL of the gRPC transport: `clouddriver.grpc` over h2c or TLS. */
function grpcUrl(clouddriver: AgentConfig['clouddriver']): URL {
  return new URL(`${clouddriver.insecure ? 'http' : 'https'}://${clouddriver.grpc}`);
}

/**
 * The URL of the WebSocket transport: `clouddriver.websocket` (a `ws://`/`wss://` URL, its path defaulting to the
 * agent stream's, or `host:port`), else the `grpc` address; `ws` when `insecure`, else `wss`.
 */
export function webSocketUrl(clouddriver: AgentConfig['clouddriver']): URL {
  const configured = clouddriver.websocket;
  const url =
    configured !== undefined && /^wss?:\/\//i.test(configured)
      ? new URL(configured)
      : new URL(`${clouddriver.insecure ? 'ws' : 'wss'}://${configured ?? clouddriver.grpc}`);
  if (url.pathname === '/' || url.pathname === '') url.pathname = AGENT_WEBSOCKET_PATH;
  return url;
}

/** Where and how a URL is dialled. */
function endpointOf(url: URL): { host: string; port: number; secure: boolean } {
  const secure = url.protocol === 'https:' || url.protocol === 'wss:';
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port) || (secure ? 443 : 80), secure };
}

/** Options of {@link openGatewayConnection}. */
export interface OpenOptions {
  signal: AbortSignal;
  /** The environment the proxy variables are read from (proxy-settings.ts). */
  env?: NodeJS.ProcessEnv;
}

/**
 * The tunnel through the forward proxy that `url` goes through (`clouddriver.proxy`, else `HTTPS_PROXY`/`HTTP_PROXY`
 * unless `NO_PROXY` or `clouddriver.noProxy` exclude it); undefined for a direct connection.
 */
function tunnelFor(url: URL, clouddriver: AgentConfig['clouddriver'], env?: NodeJS.ProcessEnv): DialOptions['tunnel'] {
  const proxy = proxyFor(url, clouddriver, env);
  if (proxy === undefined) return undefined;
  return (host, port, signal) => openProxyTunnel({ proxy, host, port, signal });
}

/** Dials the gateway for one attempt over `transport` (TLS and the proxy tunnel included); rejects when that fails. */
export async function openGatewayConnection(
  transport: TransportKind,
  clouddriver: AgentConfig['clouddriver'],
  options: OpenOptions,
): Promise<GatewayConnection> {
  const url = transport === 'grpc' ? grpcUrl(clouddriver) : webSocketUrl(clouddriver);
  const { host, port, secure } = endpointOf(url);
  const tls = secure ? tlsOptions(clouddriver) : undefined;
  const tunnel = tunnelFor(url, clouddriver, options.env);
  const alpn = transport === 'grpc' ? ['h2'] : ['http/1.1'];
  const socket = await dialGateway({ host, port, tls, alpn, tunnel, signal: options.signal }).catch((err: unknown) => {
    // Network failures read like the stream's own (`[unavailable] connect ECONNREFUSED …`); a proxy's refusal is
    // already a sentence of its own.
    if (err instanceof ConnectError || err instanceof ProxyTunnelError) throw err;
    throw new ConnectError((err as Error).message, Code.Unavailable, undefined, undefined, err);
  });
  if (transport === 'grpc') {
    const stream = grpcStream(url.origin, socket);
    return { transport, url: url.origin, connect: stream.connect, close: stream.close };
  }
  let dialled = false;
  const connect = webSocketConnect(url, () => {
    if (dialled) throw new Error('the WebSocket socket was used already');
    dialled = true;
    return socket;
  });
  return { transport, url: url.href, connect, close: () => socket.destroy() };
}

/**
 * After a gRPC attempt failed before its Welcome: does the failure mean HTTP/2 cannot pass on the way (so WebSocket
 * may), or — an h2c attempt answered with garbage — is the gateway port a TLS port (a setting to fix, not a reason
 * to fall back)? Returns the verdict and the message to report (with what the probe found).
 */
export async function diagnoseGrpcFailure(
  err: unknown,
  message: string,
  clouddriver: AgentConfig['clouddriver'],
  options: OpenOptions,
): Promise<{ cannotPass: boolean; message: string }> {
  if (!http2CannotPass(err)) return { cannotPass: false, message };
  if (clouddriver.insecure && !(err instanceof NoHttp2Error)) {
    const url = grpcUrl(clouddriver);
    const { host, port } = endpointOf(url);
    const greeting = await probeGreeting({ host, port, tunnel: tunnelFor(url, clouddriver, options.env), signal: options.signal });
    if (greeting === 'tls') return { cannotPass: false, message: `${message}: the gateway port answered with TLS` };
  }
  return { cannotPass: true, message };
}

/**
 * Adds a hint to a connection error: an HTTP/1.1 answer to an HTTP/2 request (a proxy in the way), a plaintext port
 * answering a TLS client or the reverse, an untrusted gateway certificate, a certificate for another host name.
 */
export function explainConnectError(raw: string, settings: { insecure?: boolean } = {}): string {
  const message = raw.trim().replace(/:$/, ''); // OpenSSL messages end with ":\n"
  if (/wrong version number|packet length too long|ssl3_get_record|unknown protocol/i.test(message)) {
    return `${message} — the gateway port does not answer TLS: set clouddriver.insecure: true for a plaintext (h2c) gateway, or enable TLS on the gateway`;
  }
  if (/altnames|ERR_TLS_CERT_ALTNAME_INVALID|does not match certificate/i.test(message)) {
    return `${message} — the gateway certificate does not name the host dialled: set clouddriver.tls.serverName to a name it carries`;
  }
  if (
    /unable to verify|self[- ]signed certificate|unable to get (local )?issuer|certificate has expired|certificate is not yet valid|UNABLE_TO_VERIFY|CERT_HAS_EXPIRED/i.test(
      message,
    )
  ) {
    return `${message} — the gateway certificate is not trusted: set clouddriver.tls.cacertFile to the CA that signed it (insecureSkipVerify only for tests)`;
  }
  if (
    /HTTP\/1|http2.*protocol|PROTOCOL_ERROR|ERR_HTTP2_ERROR|ERR_HTTP2_SESSION_ERROR|Protocol error|unexpected (content type|HTTP status)|text\/html/i.test(
      message,
    )
  ) {
    return `${message} — the gateway port answered like an HTTP/1.1 server: gRPC needs end-to-end HTTP/2; an HTTP/1.1-only proxy or load balancer between agent and gateway breaks it`;
  }
  if (settings.insecure && /error code CANCEL|answered with TLS/.test(message)) {
    return `${message} — if the gateway port serves TLS, set clouddriver.insecure: false (and clouddriver.tls as needed)`;
  }
  return message;
}
