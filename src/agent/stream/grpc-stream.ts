/**
 * The agent stream as gRPC over HTTP/2, on a socket dialled for this one attempt (gateway-socket.ts). connect-node
 * does the gRPC; the HTTP/2 session is ours rather than connect-node's session manager because a session that fails
 * after its connect (an HTTP/1.1 server answering the HTTP/2 preface — what an HTTP/1.1-only proxy does) emits its
 * error again once that manager has let go of it, which would be an uncaught exception in the agent. Here the session
 * keeps an error listener until it is gone, and each attempt has exactly one session.
 */
import http2 from 'node:http2';
import type { Duplex } from 'node:stream';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AgentService } from '../../gen/outpost/agent/v1/agent_pb.js';
import type { StreamConnect } from './stream-connect.js';

/** The stream plus the means to drop its connection. */
export interface GrpcStream {
  connect: StreamConnect;
  close(): void;
}

/** Opens one HTTP/2 session over `socket` (already TLS when `baseUrl` is https) and a gRPC client on it. */
export function grpcStream(baseUrl: string, socket: Duplex): GrpcStream {
  const manager = new OneSessionManager(baseUrl, socket);
  const client = createClient(AgentService, createGrpcTransport({ baseUrl, sessionManager: manager }));
  return { connect: (requests, options) => client.connect(requests, options), close: () => manager.close() };
}

/** connect-node's session manager contract (not exported by name). */
type SessionManager = NonNullable<Parameters<typeof createGrpcTransport>[0]['sessionManager']>;

class OneSessionManager implements SessionManager {
  readonly authority: string;
  private readonly session: http2.ClientHttp2Session;
  private readonly connected: Promise<void>;
  private failure: Error | undefined;

  constructor(baseUrl: string, socket: Duplex) {
    this.authority = new URL(baseUrl).origin;
    this.session = http2.connect(this.authority, { createConnection: () => socket });
    this.session.on('error', (err: Error) => {
      this.failure ??= err;
    });
    this.connected = new Promise<void>((resolve, reject) => {
      this.session.once('connect', () => resolve());
      this.session.once('close', () => reject(this.failure ?? new ConnectError('the HTTP/2 connection closed', Code.Unavailable)));
    });
    this.connected.catch(() => {});
  }

  async request(
    method: string,
    path: string,
    headers: http2.OutgoingHttpHeaders,
    options: Omit<http2.ClientSessionRequestOptions, 'signal'>,
  ): Promise<http2.ClientHttp2Stream> {
    await this.connected;
    if (this.session.closed || this.session.destroyed) {
      throw this.failure ?? new ConnectError('the HTTP/2 connection closed', Code.Unavailable);
    }
    return this.session.request({ ...headers, ':method': method, ':path': path }, options);
  }

  notifyResponseByteRead(): void {}

  close(): void {
    if (!this.session.destroyed) this.session.destroy(undefined, http2.constants.NGHTTP2_CANCEL);
  }
}
