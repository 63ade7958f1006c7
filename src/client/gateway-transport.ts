/**
 * The one way client commands reach the gateway: Connect protocol over HTTP/1.1 to its HTTP port (the path a browser
 * takes), and the typed clients of the read APIs (objects, accounts) on top of it.
 */
import { createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { AccountService } from '../gen/outpost/api/v1/account_service_pb.js';
import { ObjectService } from '../gen/outpost/api/v1/object_service_pb.js';
import { CliError, ExitCode } from './errors.js';

/**
 * A transport to `gatewayUrl` (trailing slashes dropped). Throws CliError (exit 2) for a URL that does not parse or
 * is not http(s); the caller reports it like any other client error.
 */
export function createGatewayTransport(gatewayUrl: string, binary = false): { gatewayUrl: string; transport: Transport } {
  let url: URL;
  try {
    url = new URL(gatewayUrl);
  } catch {
    throw new CliError(`invalid --gateway URL "${gatewayUrl}" (expected http://host:port)`, ExitCode.USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid --gateway URL "${gatewayUrl}" (expected http:// or https://)`, ExitCode.USAGE);
  }
  const base = gatewayUrl.replace(/\/+$/, '');
  return { gatewayUrl: base, transport: createConnectTransport({ baseUrl: base, httpVersion: '1.1', useBinaryFormat: binary }) };
}

/** Clients of the read APIs at `gatewayUrl` (see {@link createGatewayTransport} for its errors). */
export function createReadClients(gatewayUrl: string): {
  objects: Client<typeof ObjectService>;
  accounts: Client<typeof AccountService>;
} {
  const { transport } = createGatewayTransport(gatewayUrl);
  return { objects: createClient(ObjectService, transport), accounts: createClient(AccountService, transport) };
}
