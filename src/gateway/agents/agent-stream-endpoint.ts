/**
 * The agent stream (`outpost.agent.v1.AgentService/Connect`) served straight on the HTTP/2 stream with the gRPC wire
 * format, instead of through connect-node. Why: an idle agent stream is what the gateway holds most of (thousands
 * per replica), and connect-node's per-call machinery (a chain of async-generator transforms around each stream)
 * costs about 60 KB of memory per idle stream, three times what Node's HTTP/2 stream itself costs — measured side by
 * side by the connection-scale benchmark. Only the agent stream takes this path, and only in its common form (gRPC,
 * binary protobuf, over HTTP/2); any other request for it (Connect protocol, gRPC-JSON, gRPC-Web) falls through to
 * connect-node, which serves the same session code. Same authentication, authorization, size limit and error codes.
 */
import type http2 from 'node:http2';
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  ConnectRequestSchema,
  ConnectResponseSchema,
  type ConnectRequest,
  type ConnectResponse,
} from '../../gen/outpost/agent/v1/agent_pb.js';
import type { Logger } from '../../shared/logger.js';
import type { AgentTransport } from './agent-transport.js';
import type { Authenticator } from '../auth/authenticator.js';
import { admit } from '../auth/authorization.js';
import { credentialsFromNodeRequest } from '../auth/credentials.js';
import type { Principal } from '../auth/principal.js';
import { toConnectError } from '../http/errors.js';
import {
  createMessageDecoder,
  encodeMessage,
  messagePayload,
  parseGrpcTimeout,
  statusTrailers,
  SUPPORTED_ENCODINGS,
  type MessageDecoder,
} from '../grpc/grpc-wire.js';
import { respondTrailersOnly } from '../grpc/trailers-only.js';
import { StreamRequests, type StreamFlow } from './stream-requests.js';

/** The longest delay a Node timer takes; a longer one fires after 1 ms. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The path of the agent stream method. */
const AGENT_CONNECT_PATH = '/outpost.agent.v1.AgentService/Connect';

/** What the endpoint needs. */
export interface AgentStreamEndpointOptions {
  authenticator: Authenticator;
  /** Serves one admitted stream: the session (agent-session.ts). */
  serve(requests: AsyncIterable<ConnectRequest>, principal: Principal, transport: AgentTransport): AsyncIterable<ConnectResponse>;
  /** Largest message read, after decompression; larger ones end the stream RESOURCE_EXHAUSTED. */
  maxMessageBytes: number;
  logger: Logger;
}

/** Handles a request when it is an agent stream in gRPC form; returns false (touching nothing) otherwise. */
export type AgentStreamEndpoint = (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => boolean;

/** Creates the endpoint. */
export function createAgentStreamEndpoint(options: AgentStreamEndpointOptions): AgentStreamEndpoint {
  return (req, res) => {
    if (req.httpVersionMajor !== 2 || req.method !== 'POST' || req.url !== AGENT_CONNECT_PATH) return false;
    if (!/^application\/grpc(\+proto)?\s*(;|$)/i.test(req.headers['content-type'] ?? '')) return false;
    void serveStream(req, res, options);
    return true;
  };
}

async function serveStream(
  req: http2.Http2ServerRequest,
  res: http2.Http2ServerResponse,
  options: AgentStreamEndpointOptions,
): Promise<void> {
  const call = createCall(res);
  const encoding = String(req.headers['grpc-encoding'] ?? 'identity');
  if (!(SUPPORTED_ENCODINGS as readonly string[]).includes(encoding)) {
    return call.finish(
      new ConnectError(`unsupported grpc-encoding "${encoding}" (supported: ${SUPPORTED_ENCODINGS.join(', ')})`, Code.Unimplemented),
    );
  }
  const timeoutMs = parseGrpcTimeout(req.headers['grpc-timeout'] as string | undefined);
  if (Number.isNaN(timeoutMs))
    return call.finish(new ConnectError(`invalid grpc-timeout "${String(req.headers['grpc-timeout'])}"`, Code.InvalidArgument));
  let principal: Principal;
  try {
    principal = (await admit(options.authenticator, credentialsFromNodeRequest(req), 'agent', AGENT_CONNECT_PATH.slice(1)))!;
  } catch (err) {
    return call.finish(toConnectError(err, options.logger, 'agent stream authentication'));
  }
  const requests = createRequestReader(req, encoding, options.maxMessageBytes);
  // A deadline past Node's longest timer (2^31-1 ms, about 24.8 days) would fire at once: the stream's maximum age
  // (agents.maxStreamAgeSeconds) ends it long before.
  const timer =
    timeoutMs === undefined || timeoutMs > MAX_TIMER_MS
      ? undefined
      : setTimeout(() => requests.fail(new ConnectError('deadline exceeded', Code.DeadlineExceeded)), timeoutMs);
  let failure: ConnectError | undefined;
  try {
    for await (const message of options.serve(requests, principal, 'grpc')) {
      if (!(await call.send(message))) break;
    }
  } catch (err) {
    failure = toConnectError(err, options.logger, 'agent stream');
  } finally {
    clearTimeout(timer);
  }
  call.finish(failure);
}

/** The response side of one call: headers sent with the first message, status trailers at the end. */
interface Call {
  /** Writes a message (headers first); waits while the stream is full; false once the stream is gone. */
  send(message: ConnectResponse): Promise<boolean>;
  /** Ends the call with the status of `error` (OK without one): trailers, or a trailers-only response. */
  finish(error?: ConnectError): void;
}

function createCall(res: http2.Http2ServerResponse): Call {
  const gone = () => res.destroyed || res.writableEnded || res.stream.closed;
  return {
    async send(message) {
      if (gone()) return false;
      if (!res.headersSent)
        res.writeHead(200, { 'content-type': 'application/grpc+proto', 'grpc-accept-encoding': SUPPORTED_ENCODINGS.join(',') });
      if (res.write(encodeMessage(toBinary(ConnectResponseSchema, message)))) return true;
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
      return !gone();
    },
    finish(error) {
      if (gone()) return;
      const trailers = statusTrailers(error);
      if (res.headersSent) {
        res.addTrailers(trailers);
        res.end();
      } else {
        // Trailers-only: the status goes in the one HEADERS frame, which ends the stream.
        respondTrailersOnly(res, { 'content-type': 'application/grpc+proto', ...trailers });
      }
    },
  };
}

/** The request side over HTTP/2: decodes length-prefixed messages into the session's request queue. */
function createRequestReader(req: http2.Http2ServerRequest, encoding: string, maxBytes: number): StreamRequests {
  return new Http2RequestFeed(req, encoding, maxBytes).requests;
}

/** A class, not closures: one of these lives per idle agent stream (see the module comment). */
class Http2RequestFeed implements StreamFlow {
  readonly requests: StreamRequests = new StreamRequests(this);
  private readonly decoder: MessageDecoder;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.finished();
  private readonly onCancel = () => this.requests.fail(new ConnectError('the agent cancelled the stream', Code.Canceled));
  private readonly onClose = () => this.onCancel();

  constructor(
    private readonly req: http2.Http2ServerRequest,
    private readonly encoding: string,
    private readonly maxBytes: number,
  ) {
    this.decoder = createMessageDecoder(maxBytes);
    req.on('data', this.onData);
    req.on('end', this.onEnd);
    req.on('aborted', this.onCancel);
    req.on('error', this.onCancel);
    req.on('close', this.onClose);
  }

  pause(): void {
    this.req.pause();
  }

  resume(): void {
    this.req.resume();
  }

  detach(): void {
    this.req.off('data', this.onData);
    this.req.off('end', this.onEnd);
    this.req.off('aborted', this.onCancel);
    this.req.off('error', this.onCancel);
    this.req.off('close', this.onClose);
  }

  private received(chunk: Buffer): void {
    if (this.requests.finished) return;
    try {
      for (const message of this.decoder.push(chunk)) {
        const payload = messagePayload(message, this.encoding, this.maxBytes);
        this.requests.push(decodeAgentRequest(payload));
      }
    } catch (err) {
      this.requests.fail(err instanceof ConnectError ? err : new ConnectError('malformed message', Code.InvalidArgument));
    }
  }

  private finished(): void {
    if (this.decoder.partial) {
      this.requests.fail(new ConnectError('protocol error: the stream ended inside a message', Code.InvalidArgument));
      return;
    }
    this.requests.end();
  }
}

/** Decodes one agent request; INVALID_ARGUMENT when the bytes are not a ConnectRequest. */
export function decodeAgentRequest(payload: Uint8Array): ConnectRequest {
  try {
    return fromBinary(ConnectRequestSchema, payload);
  } catch (err) {
    throw new ConnectError(`cannot decode the message: ${(err as Error).message}`, Code.InvalidArgument);
  }
}
