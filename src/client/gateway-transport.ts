/**
 * The one way client commands reach the gateway: Connect protocol over HTTP/1.1 to its HTTP port (the path a browser
 * takes) through the CLI's own HTTP client (gateway-http-client.ts: the gateway's early refusals arrive as they are
 * sent), with the connection's bearer token on every call, and the typed clients of the read APIs on top of it.
 */
import { createClient, type Client, type Interceptor, type Transport } from '@connectrpc/connect';
import { validateReadWriteMaxBytes } from '@connectrpc/connect/protocol';
import { createTransport } from '@connectrpc/connect/protocol-connect';
import { compressionBrotli, compressionGzip } from '@connectrpc/connect-node';
import { AccountService } from '../gen/outpost/api/v1/account_service_pb.js';
import { ObjectService } from '../gen/outpost/api/v1/object_service_pb.js';
import { checkGatewayUrl } from './client-credentials.js';
import { createGatewayHttpClient, type GatewayTls } from './gateway-http-client.js';

/** Where the transport goes: a {@link import('./client-credentials.js').GatewayConnection}, or just a URL (no token). */
export interface GatewayTarget {
  gatewayUrl: string;
  /** Sent as `Authorization: Bearer <token>` on every call. */
  token?: string;
  tls?: GatewayTls;
}

/**
 * A transport to `target.gatewayUrl` (trailing slashes dropped) that sends the token on every call. Throws CliError
 * (exit 2) for a URL that does not parse or is not http(s); the caller reports it like any other client error.
 */
export function createGatewayTransport(target: GatewayTarget, binary = false): { gatewayUrl: string; transport: Transport } {
  const gatewayUrl = checkGatewayUrl(target.gatewayUrl);
  const { token } = target;
  const interceptors: Interceptor[] = [];
  if (token !== undefined) {
    interceptors.push((next) => (req) => {
      req.header.set('authorization', `Bearer ${token}`);
      return next(req);
    });
  }
  const transport = createTransport({
    baseUrl: gatewayUrl,
    httpClient: createGatewayHttpClient(target.tls),
    useBinaryFormat: binary,
    interceptors,
    acceptCompression: [compressionGzip, compressionBrotli],
    sendCompression: null,
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
  return { gatewayUrl, transport };
}

/** Clients of the read APIs (see {@link createGatewayTransport} for its errors). */
export function createReadClients(target: GatewayTarget): {
  objects: Client<typeof ObjectService>;
  accounts: Client<typeof AccountService>;
} {
  const { transport } = createGatewayTransport(target);
  return { objects: createClient(ObjectService, transport), accounts: createClient(AccountService, transport) };
}
