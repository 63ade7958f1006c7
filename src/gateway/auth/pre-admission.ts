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
    const path = (req.url ?? '').split('?')[0]!;
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
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  const h2 = req.httpVersionMajor === 2;
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
    const json = Buffer.from(JSON.stringify(endStreamToJson(new Headers(), error, undefined)), 'utf8');
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
  if (h2) {
    // Once the answer is complete, ask the peer to stop sending the body (RFC 9113 8.1), reading none of it. A
    // trailers-only answer went out through the stream itself, its writable side already ending: Node sends the
    // RST_STREAM after that HEADERS frame. The others end through the compatibility layer: reset once it finished.
    const stream = (res as http2.Http2ServerResponse).stream;
    const reset = () => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
    };
    if (grpc) reset();
    else res.once('finish', reset);
  } else {
    // Node discards the rest of the body once the answer is written (never parsed, never buffered: the bytes are
    // dropped as they arrive), so the client finishes its write and reads the answer, and the connection may carry its
    // next request (admitted again; refused ones are counted per connection). A body not finished LINGER_MS after the
    // answer (stalled, or simply huge) has its connection closed.
    res.once('finish', () => {
      if (req.complete) return;
      const socket = req.socket;
      const timer = setTimeout(() => socket.destroy(), LINGER_MS);
      timer.unref();
      // Both listeners go with the timer: a kept-alive connection may carry many refused requests.
      const done = () => {
        clearTimeout(timer);
        req.off('end', done);
        socket.off('close', done);
      };
      req.once('end', done);
      socket.once('close', done);
    });
  }
}
