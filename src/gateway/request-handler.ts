/**
 * The one Node request handler both gateway ports serve (docs/architecture.md, "One handler, two ports"): malformed
 * shapes answered first (protocol-guards.ts), credentials checked from the headers before any body is read
 * (pre-admission.ts), what a peer may hold before it proves itself bounded per connection (connection-guard.ts), then
 * the agent stream's own endpoint for its usual gRPC form (agent-stream-endpoint.ts) and, on HTTP/1.1 upgrades, its
 * WebSocket form (websocket-endpoint.ts), connect-node for every RPC
 * (rpc-node-handler.ts) and the REST app for everything else.
 */
import type http2 from 'node:http2';
import type { ConnectRouter } from '@connectrpc/connect';
import { getRequestListener } from '@hono/node-server';
import type { ConnectRequest, ConnectResponse } from '../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../shared/logger.js';
import type { AgentTransport } from './agents/agent-transport.js';
import { isKubePath, type KubeEndpoint } from './kube/kube-endpoint.js';
import type { Authenticator } from './auth/authenticator.js';
import { authContextValues, createAuthInterceptor, rememberPreAdmitted } from './auth/connect-auth.js';
import { createPreAdmission } from './auth/pre-admission.js';
import type { Principal } from './auth/principal.js';
import type { GatewayConfig } from './config/schema.js';
import { createConnectionGuard, type ConnectionGuard } from './http/connection-guard.js';
import { createErrorInterceptor } from './http/errors.js';
import { createAgentWebSocketEndpoint, type AgentWebSocketEndpoint } from './agents/websocket-endpoint.js';
import { createAgentStreamEndpoint } from './agents/agent-stream-endpoint.js';
import { answerMalformedRpc, STRICT_COMPRESSIONS } from './grpc/protocol-guards.js';
import { createRpcNodeHandler, type RpcNodeHandler } from './grpc/rpc-node-handler.js';
import { createSendableErrorInterceptor } from './http/sendable-errors.js';
import { createUndecodableRequestInterceptor, guardUndecodableRequests } from './grpc/undecodable-request.js';
import { createUnstorableTextGuard } from './grpc/unstorable-text-guard.js';

/** Largest message (after decompression) the gateway reads: bigger ones fail with RESOURCE_EXHAUSTED. */
const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** What {@link createGatewayHandler} serves. */
export interface GatewayHandlerOptions {
  /** Registers the RPC services. */
  routes(router: ConnectRouter): void;
  /** The fully qualified names of the services `routes` registers: their calls are admitted from their headers. */
  services: readonly string[];
  /** The REST app (Hono's fetch): every request that is no RPC. */
  restFetch(request: Request): Response | Promise<Response>;
  authenticator: Authenticator;
  /** Serves one admitted agent stream that reached an agent stream endpoint, which names its transport (agent-session.ts). */
  serveAgentStream(
    requests: AsyncIterable<ConnectRequest>,
    principal: Principal,
    transport: AgentTransport,
  ): AsyncIterable<ConnectResponse>;
  limits: GatewayConfig['limits'];
  /** kubectl through the gateway: `/k8s/{account}/…` requests and upgrades; answered like any unknown path when absent. */
  kube?: KubeEndpoint;
  logger: Logger;
}

/** The handler, the guard the servers must tell about every accepted connection, and the WebSocket upgrades' handler. */
export interface GatewayHandler {
  handler: RpcNodeHandler;
  guard: ConnectionGuard;
  /**
   * Serves HTTP/1.1 `upgrade` requests of the HTTP port: the agent stream over WebSocket (websocket-endpoint.ts) and
   * kubectl's exec, attach and port-forward under `/k8s/` (kube-endpoint.ts).
   */
  upgrade: AgentWebSocketEndpoint;
}

/** Composes the handler; it holds no resource of its own (the caller closes the servers that use it). */
export function createGatewayHandler(options: GatewayHandlerOptions): GatewayHandler {
  const { logger } = options;
  // connect-node's handlers, with gRPC errors before any message answered Trailers-Only (rpc-node-handler.ts), and
  // requests that do not decode answered INVALID_ARGUMENT (undecodable-request.ts).
  const connectHandler = createRpcNodeHandler({
    routes: options.routes,
    // Same runtime objects; the two libraries only type the http2 response's write callback differently.
    fallback: getRequestListener(options.restFetch) as unknown as RpcNodeHandler,
    readMaxBytes: MAX_MESSAGE_BYTES,
    contextValues: authContextValues,
    // The sendable-error interceptor comes first, so it sees what every other one throws; then the undecodable-request
    // interceptor, which also records that a call got past decoding its request.
    interceptors: [
      createSendableErrorInterceptor(),
      createUndecodableRequestInterceptor(),
      createErrorInterceptor(logger.child({ component: 'api' })),
      createAuthInterceptor(options.authenticator),
      createUnstorableTextGuard(),
    ],
    wrapHandler: guardUndecodableRequests,
    acceptCompression: [...STRICT_COMPRESSIONS],
    logger: logger.child({ component: 'api' }),
  });
  // Agent streams in gRPC form skip connect-node (see agent-stream-endpoint.ts); everything else goes through it.
  const agentEndpoint = createAgentStreamEndpoint({
    authenticator: options.authenticator,
    serve: options.serveAgentStream,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    logger: logger.child({ component: 'agent-stream' }),
  });
  // Credentials are checked from the headers before any body is read (pre-admission.ts); what a peer may hold before
  // it proves itself is bounded per connection (connection-guard.ts).
  const preAdmit = createPreAdmission(options.authenticator, options.services);
  const guard = createConnectionGuard(options.limits);
  const kube = options.kube;
  const handler: RpcNodeHandler = (req, res) => {
    guard.requestArrived(req);
    if (kube && isKubePath(req.url)) {
      // Its own admission (credentials from the headers before any body is read) and its own error model (Status).
      kube.serve(req, res as http2.Http2ServerResponse).then(
        (admitted) => (admitted ? guard.proven(req) : guard.refused(req)),
        (err: unknown) => logger.error({ err }, 'Kubernetes API request failed'),
      );
      return;
    }
    if (answerMalformedRpc(req, res as unknown as http2.Http2ServerResponse)) return void guard.refused(req);
    preAdmit(req, res as unknown as http2.Http2ServerResponse).then(
      (outcome) => {
        if (outcome.kind === 'refused') return guard.refused(req);
        if (outcome.kind === 'admitted') {
          guard.proven(req);
          rememberPreAdmitted(req, outcome.principal);
        } else {
          // REST, the dashboard's files, health: proven once answered with anything but a refusal.
          res.once('finish', () => (res.statusCode === 401 || res.statusCode === 403 ? guard.refused(req) : guard.proven(req)));
        }
        if (agentEndpoint(req as http2.Http2ServerRequest, res as http2.Http2ServerResponse)) return;
        connectHandler(req, res);
      },
      (err: unknown) => {
        logger.error({ err }, 'pre-admission failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'internal', message: 'internal error' }));
      },
    );
  };
  // The agent stream over WebSocket, for networks where HTTP/2 cannot pass: the same session, another carriage.
  const agentUpgrade = createAgentWebSocketEndpoint({
    authenticator: options.authenticator,
    serve: options.serveAgentStream,
    maxMessageBytes: MAX_MESSAGE_BYTES,
    guard,
    logger: logger.child({ component: 'agent-stream' }),
  });
  const upgrade: AgentWebSocketEndpoint = (req, socket, head) => {
    if (!kube || !isKubePath(req.url)) return agentUpgrade(req, socket, head);
    guard.requestArrived(req);
    kube.upgrade(req, socket, head).then(
      (admitted) => (admitted ? guard.proven(req) : guard.refused(req)),
      (err: unknown) => logger.error({ err }, 'Kubernetes API upgrade failed'),
    );
  };
  return { handler, guard, upgrade };
}
