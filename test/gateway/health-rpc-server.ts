/**
 * A cleartext HTTP/2 server serving grpc.health.v1.Health through the gateway's own node handler with a test's
 * implementation and interceptors: for the error-path tests that need an implementation the gateway does not have.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { createContextValues } from '@connectrpc/connect';
import type { ServiceImpl } from '@connectrpc/connect';
import { Health } from '../../src/gen/grpc/health/v1/health_pb.js';
import { createRpcNodeHandler, type RpcNodeHandlerOptions } from '../../src/gateway/grpc/rpc-node-handler.js';
import { createSilentLogger } from '../../src/shared/logger.js';

/** The running server: its base URL, and how to stop it. */
export interface HealthRpcServer {
  url: string;
  close(): Promise<void>;
}

/** Starts the server on an ephemeral port of 127.0.0.1 with `impl` and the handler options given (interceptors, wrapHandler). */
export async function startHealthRpcServer(
  impl: Partial<ServiceImpl<typeof Health>>,
  options: Pick<RpcNodeHandlerOptions, 'interceptors' | 'wrapHandler'>,
): Promise<HealthRpcServer> {
  const handler = createRpcNodeHandler({
    routes: (router) => router.service(Health, impl),
    fallback: (_req, res) => res.end(),
    contextValues: () => createContextValues(),
    logger: createSilentLogger(),
    ...options,
  });
  const server = http2.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
