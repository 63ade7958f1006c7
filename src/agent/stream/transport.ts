/**
 * Builds the gRPC (HTTP/2) client towards the gateway from the `clouddriver` settings: plaintext h2c when
 * `insecure`, otherwise TLS with optional CA file, client certificate (mTLS), server name override and skip-verify.
 * Each connection attempt gets its own HTTP/2 session, aborted when the attempt ends, so no dead socket lingers.
 */
import { readFileSync } from 'node:fs';
import type { SecureClientSessionOptions } from 'node:http2';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { AgentService } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { AgentConfig } from '../config/schema.js';

/** A client plus the means to drop its connection. */
export interface GatewayConnection {
  client: Client<typeof AgentService>;
  baseUrl: string;
  close(): void;
}

/** Reads the TLS files once; throws a clear error naming the file. */
export function tlsOptions(clouddriver: AgentConfig['clouddriver']): SecureClientSessionOptions {
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

/** Opens a new client for one connection attempt. */
export function connectGateway(clouddriver: AgentConfig['clouddriver']): GatewayConnection {
  const baseUrl = `${clouddriver.insecure ? 'http' : 'https'}://${clouddriver.grpc}`;
  const nodeOptions = clouddriver.insecure ? {} : tlsOptions(clouddriver);
  const sessionManager = new Http2SessionManager(baseUrl, { pingIntervalMs: 15_000, pingTimeoutMs: 15_000 }, nodeOptions);
  const transport = createGrpcTransport({ baseUrl, sessionManager });
  return {
    client: createClient(AgentService, transport),
    baseUrl,
    close: () => sessionManager.abort(),
  };
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
  if (settings.insecure && /error code CANCEL/.test(message)) {
    return `${message} — if the gateway port serves TLS, set clouddriver.insecure: false (and clouddriver.tls as needed)`;
  }
  return message;
}
