/**
 * The agent stream over a WebSocket (src/shared/agent-websocket.ts has the wire; docs/agent-protocol.md, "WebSocket
 * transport"): for networks where HTTP/2 cannot pass — an HTTP/1.1-only proxy, load balancer or ingress. It serves the
 * same session as the gRPC endpoint (agent-session.ts through `serve`): only the carriage differs. The upgrade request
 * is authenticated and authorised from its headers (and the TLS client certificate) before the upgrade is accepted, so
 * an unauthenticated peer never gets a WebSocket; a refusal is an HTTP answer with the Connect error JSON.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { ConnectResponseSchema, type ConnectRequest, type ConnectResponse } from '../../gen/outpost/agent/v1/agent_pb.js';
import { AGENT_WEBSOCKET_PATH, AGENT_WEBSOCKET_PROTOCOL, encodeEndStream, NORMAL_CLOSURE } from '../../shared/agent-websocket.js';
import type { Logger } from '../../shared/logger.js';
import type { AgentTransport } from './agent-transport.js';
import type { Authenticator } from '../auth/authenticator.js';
import { admit } from '../auth/authorization.js';
import { credentialsFromNodeRequest } from '../auth/credentials.js';
import type { Principal } from '../auth/principal.js';
import type { ConnectionGuard } from '../http/connection-guard.js';
import { toConnectError } from '../http/errors.js';
import { sendableMessage } from '../http/sendable-errors.js';
import { decodeAgentRequest } from './agent-stream-endpoint.js';
import { StreamRequests, type StreamFlow } from './stream-requests.js';

/** Bytes queued on a WebSocket before the session waits for them to reach the socket. */
const SEND_HIGH_WATER = 256 * 1024;

/** What the endpoint needs. */
export interface AgentWebSocketEndpointOptions {
  authenticator: Authenticator;
  /** Serves one admitted stream: the session (agent-session.ts). */
  serve(requests: AsyncIterable<ConnectRequest>, principal: Principal, transport: AgentTransport): AsyncIterable<ConnectResponse>;
  /** Largest message read; a larger frame closes the WebSocket (1009) and ends the stream. */
  maxMessageBytes: number;
  /** Told about the upgrade request like about any other request (connection-guard.ts). */
  guard?: Pick<ConnectionGuard, 'requestArrived' | 'proven' | 'refused'>;
  logger: Logger;
}

/** Handles an HTTP `upgrade` event (any path: other paths are answered 404). */
export type AgentWebSocketEndpoint = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Creates the endpoint; it holds no resource beyond the WebSockets it serves (which end with their sessions). */
export function createAgentWebSocketEndpoint(options: AgentWebSocketEndpointOptions): AgentWebSocketEndpoint {
  const { logger } = options;
  const server = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: options.maxMessageBytes,
    handleProtocols: (protocols) => (protocols.has(AGENT_WEBSOCKET_PROTOCOL) ? AGENT_WEBSOCKET_PROTOCOL : false),
  });
  return (req, socket, head) => {
    socket.on('error', () => {}); // a peer that resets mid-handshake must not crash anything
    const path = (req.url ?? '').split('?')[0];
    if (path !== AGENT_WEBSOCKET_PATH) {
      return refuse(socket, new ConnectError(`no WebSocket endpoint at ${path.slice(0, 200)}`, Code.NotFound));
    }
    options.guard?.requestArrived(req);
    const offered = String(req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim());
    if (!offered.includes(AGENT_WEBSOCKET_PROTOCOL)) {
      options.guard?.refused(req);
      return refuse(
        socket,
        new ConnectError(`the agent stream needs the WebSocket subprotocol "${AGENT_WEBSOCKET_PROTOCOL}"`, Code.InvalidArgument),
      );
    }
    admit(options.authenticator, credentialsFromNodeRequest(req), 'agent', AGENT_WEBSOCKET_PATH.slice(1)).then(
      (principal) => {
        options.guard?.proven(req);
        if (socket.destroyed) return;
        server.handleUpgrade(req, socket, head, (ws) => void serveSocket(ws, principal!, options));
      },
      (err: unknown) => {
        options.guard?.refused(req);
        refuse(socket, toConnectError(err, logger, 'agent WebSocket authentication'));
      },
    );
  };
}

/** Answers a refused upgrade with the Connect error JSON and closes the connection. */
function refuse(socket: Duplex, error: ConnectError): void {
  if (socket.destroyed) return;
  const status = codeToHttpStatus(error.code);
  const body = Buffer.from(errorToJsonBytes(new ConnectError(sendableMessage(error.rawMessage), error.code), undefined));
  socket.end(
    `HTTP/1.1 ${status} ${status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : status === 404 ? 'Not Found' : 'Error'}\r\n` +
      `content-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString('utf8')}`,
  );
}

async function serveSocket(ws: WebSocket, principal: Principal, options: AgentWebSocketEndpointOptions): Promise<void> {
  const requests = new WebSocketRequestFeed(ws).requests;
  let failure: ConnectError | undefined;
  try {
    for await (const message of options.serve(requests, principal, 'websocket')) {
      if (ws.readyState !== WebSocket.OPEN) break;
      const data = toBinary(ConnectResponseSchema, message);
      if (ws.bufferedAmount < SEND_HIGH_WATER) ws.send(data);
      else await new Promise<void>((resolve) => ws.send(data, () => resolve()));
    }
  } catch (err) {
    failure = toConnectError(err, options.logger, 'agent stream');
  }
  if (ws.readyState !== WebSocket.OPEN) return;
  const error = failure && new ConnectError(sendableMessage(failure.rawMessage), failure.code, failure.metadata);
  ws.send(encodeEndStream(error));
  ws.close(NORMAL_CLOSURE);
}

/** Feeds a WebSocket's binary frames into the session's request queue. A class: one lives per idle stream. */
class WebSocketRequestFeed implements StreamFlow {
  readonly requests: StreamRequests = new StreamRequests(this);
  private readonly onMessage = (data: RawData, isBinary: boolean) => this.received(data, isBinary);
  private readonly onClose = (code: number, reason: Buffer) => this.closed(code, reason);
  private readonly onError = (err: Error) =>
    this.requests.fail(
      (err as NodeJS.ErrnoException).code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH'
        ? new ConnectError('a message was larger than the largest the gateway reads', Code.ResourceExhausted)
        : new ConnectError(`WebSocket error: ${err.message}`, Code.InvalidArgument),
    );

  constructor(private readonly ws: WebSocket) {
    ws.on('message', this.onMessage);
    ws.on('close', this.onClose);
    ws.on('error', this.onError);
  }

  pause(): void {
    this.ws.pause();
  }

  resume(): void {
    this.ws.resume();
  }

  detach(): void {
    this.ws.off('message', this.onMessage);
    this.ws.off('close', this.onClose);
    // the error listener stays: a late socket error must not be unhandled
    this.ws.on('error', () => {});
    this.ws.off('error', this.onError);
  }

  private received(data: RawData, isBinary: boolean): void {
    if (!isBinary) {
      this.requests.fail(new ConnectError('protocol error: the agent stream carries binary frames only', Code.InvalidArgument));
      this.ws.close(1003, 'binary frames only');
      return;
    }
    try {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      this.requests.push(decodeAgentRequest(bytes));
    } catch (err) {
      this.requests.fail(err as ConnectError);
    }
  }

  private closed(code: number, reason: Buffer): void {
    if (code === NORMAL_CLOSURE) return this.requests.end();
    const why = reason.length > 0 ? `: ${reason.toString('utf8').slice(0, 120)}` : '';
    this.requests.fail(new ConnectError(`the agent closed the WebSocket (code ${code}${why})`, Code.Canceled));
  }
}
