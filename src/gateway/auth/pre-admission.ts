/**
 * Admission of Connect, gRPC and gRPC-web calls from their headers alone, before connect-node reads a byte of the
 * body (docs/security.md, "No work before authentication"): connect-node runs interceptors only after it has read and
 * parsed a unary request, so an unauthenticated peer could otherwise make the gateway buffer up to the message limit
 * per request. A refusal is answered at once in the caller's own protocol — gRPC and gRPC-web trailers-only, Connect
 * unary as a JSON error with the HTTP status of its code, Connect streaming as an end-stream message — and the body is
 * never read: an HTTP/2 stream is reset with NO_ERROR after the answer (the peer stops sending), an HTTP/1.1 body is
 * discarded as it arrives for a bounded time, so the client reads the answer instead of a reset. An admitted call carries its principal on to the interceptor, which then does not
 * authenticate again.
 */
import http2 from 'node:http2';
import type http from 'node:http';
import { Code, ConnectError } from '@connectrpc/connect';
import { codeToHttpStatus, endStreamFlag, endStreamToJson, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { encodeGrpcMessage } from '../grpc/grpc-wire.js';
import { sendableError } from '../http/sendable-errors.js';
import { respondTrailersOnly } from '../grpc/trailers-only.js';
import type { Authenticator } from './authenticator.js';
import { admit, connectRequirement } from './authorization.js';
import { sessionCookieAccepted } from './browser-session.js';
import { credentialsFromNodeRequest } from './credentials.js';
import type { Principal } from './principal.js';

type AnyRequest = http.IncomingMessage | http2.Http2ServerRequest;

/** How long the body of a refused HTTP/1.1 request may go on arriving (discarded) before its connection is closed. */
const LINGER_MS = 2000;
type AnyResponse = http.ServerResponse | http2.Http2ServerResponse;

/** The outcome of one pre-admission. */
type PreAdmissionOutcome =
  /** Not a call of a served service, or one needing no credentials: connect-node or REST handles it as usual. */
  | { kind: 'pass' }
  /** Admitted: the principal goes on with the request. */
  | { kind: 'admitted'; principal: Principal }
  /** Refused and answered; nothing else may touch the request. */
  | { kind: 'refused'; error: ConnectError };

/** Admits or answers one request. */
export type PreAdmission = (req: AnyRequest, res: AnyResponse) => Promise<PreAdmissionOutcome>;

/** Creates the pre-admission for the services the gateway serves (their fully qualified names). */
export function createPreAdmission(authenticator: Authenticator, servedServices: Iterable<string>): PreAdmission {
  const served = new Set(servedServices);
  return async (req, res) => {
    // String(undefined) is `undefined`, which is no call's path.
    const path = String(req.url).split('?')[0]!;
    const match = /^\/([A-Za-z_][\w.]*)\/([A-Za-z_]\w*)$/.exec(path);
    if (!match || !served.has(match[1]!)) return { kind: 'pass' };
    const requirement = connectRequirement(match[1]!, match[2]!);
    if (requirement === 'none') return { kind: 'pass' };
    try {
      const credentials = credentialsFromNodeRequest(req, { browser: sessionCookieAccepted(match[1]!) });
      const principal = await admit(authenticator, credentials, requirement, `${match[1]}/${match[2]}`);
      return { kind: 'admitted', principal: principal! };
    } catch (err) {
      const error = err instanceof ConnectError ? err : new ConnectError('authentication failed', Code.Unauthenticated);
      answerRefusal(req, res, error);
      return { kind: 'refused', error };
    }
  };
}

/** Writes the refusal in the request's protocol and makes sure its body is never read. */
function answerRefusal(req: AnyRequest, res: AnyResponse, refusal: ConnectError): void {
  const error = sendableError(refusal);
  // No content type: `undefined`, which is no protocol's, so the unary JSON error.
  const type = String(req.headers['content-type']).toLowerCase();
  // No `connection: close` on HTTP/1.1: Node would destroy the socket as soon as the answer is written (destroySoon),
  // the client's body still arriving, and the unread bytes become a reset that beats the answer (write EPIPE).
  const headers: Record<string, string> = {};
  const grpc = type.startsWith('application/grpc');
  if (grpc) {
    // gRPC and gRPC-web: trailers-only, the status in the one HEADERS frame (which ends the stream on HTTP/2).
    const grpcWeb = type.startsWith('application/grpc-web');
    respondTrailersOnly(res, {
      ...headers,
      'content-type': grpcWeb ? 'application/grpc-web+proto' : 'application/grpc',
      'grpc-status': String(error.code),
      'grpc-message': encodeGrpcMessage(error.rawMessage),
    });
  } else if (type.startsWith('application/connect+')) {
    const json = Buffer.from(JSON.stringify(endStreamToJson(new Headers(), error, undefined)));
    const envelope = Buffer.alloc(5 + json.length);
    envelope.writeUInt8(endStreamFlag, 0);
    envelope.writeUInt32BE(json.length, 1);
    json.copy(envelope, 5);
    res.writeHead(200, {
      ...headers,
      'content-type': type.startsWith('application/connect+proto') ? 'application/connect+proto' : 'application/connect+json',
    });
    res.end(envelope);
  } else {
    res.writeHead(codeToHttpStatus(error.code), { ...headers, 'content-type': 'application/json' });
    res.end(Buffer.from(errorToJsonBytes(error, {})));
  }
  // HTTP/2: once the answer is complete (a trailers-only one too: the response finishes with its HEADERS frame), ask
  // the peer to stop sending the body (RFC 9113 8.1), reading none of it: a reset with NO_ERROR. Node 20 does as much
  // by itself for a served stream whose body nobody read (which the tests check); this does not lean on that.
  const stream = (res as Partial<http2.Http2ServerResponse>).stream;
  // Stryker disable next-line StringLiteral,ArrowFunction: Node 20 itself resets with NO_ERROR, once the answer finished, a stream whose body nobody read
  res.once('finish', () => stream?.close(http2.constants.NGHTTP2_NO_ERROR));
  // HTTP/1.1: Node discards the rest of the body once the answer is written (never parsed, never buffered: the bytes
  // are dropped as they arrive), so the client finishes its write and reads the answer, and the connection may carry
  // its next request (admitted again; refused ones are counted per connection). A body not finished LINGER_MS after
  // the answer (stalled, or simply huge) has its connection closed. On HTTP/2 the same wait ends at most the request's
  // own stream (`req.socket.destroy()` goes to the stream there), which the reset above has closed already.
  res.once('finish', () => {
    if (req.complete) return;
    const socket = req.socket;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    // The body ended in time: the connection lives on. A connection closed before that needs nothing more: the
    // timer's destroy is then a no-op, and unref'd it holds nothing; the listener goes with the request.
    req.once('end', () => clearTimeout(timer));
  });
}
