/**
 * A request message that does not decode is the client's mistake: INVALID_ARGUMENT in every protocol the client RPCs
 * are served in, never INTERNAL. connect-es decodes binary protobuf with a serialization that throws
 * `ConnectError("parse binary: …", Code.Internal)` (its JSON one already throws INVALID_ARGUMENT), no option changes
 * that, and the library is not patched. Where the error surfaces decides the remedy:
 *
 * - streaming calls (server, client, bidi): the request messages reach the interceptors as a stream that is decoded
 *   as it is read, so {@link createUndecodableRequestInterceptor} rethrows that error as INVALID_ARGUMENT;
 * - unary calls: the request is decoded before any interceptor runs, and the error is answered by the library.
 *   {@link guardUndecodableRequests} wraps each method's handler and rewrites that answer in the protocol's own form —
 *   Connect's JSON error (HTTP 400), gRPC's status trailer, gRPC-web's trailer frame — only when the call never
 *   reached the interceptors, i.e. when the failure came from reading the request. An implementation's own INTERNAL
 *   error is never touched.
 *
 * Both parts are needed: install the interceptor FIRST in the chain (it also records that a call reached the
 * interceptors) and wrap every handler.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from '@connectrpc/connect';
import { createAsyncIterable, encodeEnvelope, type UniversalHandler, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import { codeToHttpStatus, errorFromJsonBytes, errorToJsonBytes } from '@connectrpc/connect/protocol-connect';
import { trailerFlag, trailerParse, trailerSerialize } from '@connectrpc/connect/protocol-grpc-web';

/** The prefix of connect-es's error for binary protobuf it cannot decode (protocol/serialization.ts). */
const PARSE_BINARY = 'parse binary: ';

/** Set on a call's context values once it reached the interceptors (so its request was decoded). */
const reachedInterceptors = createContextKey(false, { description: 'outpost: the call reached the interceptors' });

/** True for connect-es's INTERNAL error about a binary message it could not decode. */
function isUndecodable(code: Code, message: string): boolean {
  return code === Code.Internal && message.startsWith(PARSE_BINARY);
}

/** The client's error for connect-es's `parse binary` one, keeping the decoder's reason. */
function undecodableRequest(message: string, metadata?: HeadersInit): ConnectError {
  return new ConnectError(`cannot decode the request message: ${message.slice(PARSE_BINARY.length)}`, Code.InvalidArgument, metadata);
}

async function* decodable<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    if (err instanceof ConnectError && isUndecodable(err.code, err.rawMessage)) throw undecodableRequest(err.rawMessage, err.metadata);
    throw err;
  }
}

/**
 * The interceptor: marks the call as having reached the interceptors, and turns a streamed request message that does
 * not decode into INVALID_ARGUMENT. Must be the first interceptor.
 */
export function createUndecodableRequestInterceptor(): Interceptor {
  return (next) => async (req) => {
    req.contextValues.set(reachedInterceptors, true);
    if (!req.stream) return next(req);
    return next({ ...req, message: decodable(req.message) });
  };
}

/**
 * Wraps a method's handler so that a unary request that does not decode is answered INVALID_ARGUMENT. Keeps the
 * handler's properties (path, service, method, protocols), as the router needs them.
 */
export function guardUndecodableRequests(handler: UniversalHandler): UniversalHandler {
  if (handler.method.methodKind !== 'unary') return handler;
  const guarded = async (req: Parameters<UniversalHandler>[0]) => {
    const res = await handler(req);
    // A call that reached the interceptors had its request decoded; a response without a body is no error form.
    if (req.contextValues?.get(reachedInterceptors) || !res.body) return res;
    return rewrite(res);
  };
  return Object.assign(guarded, {
    requestPath: handler.requestPath,
    service: handler.service,
    method: handler.method,
    supportedContentType: handler.supportedContentType,
    protocolNames: handler.protocolNames,
    allowedMethods: handler.allowedMethods,
  });
}

/**
 * Rewrites the answer of a unary call that failed before its interceptors. Such an answer is complete when the
 * handler returns (the call is over), so reading its whole body delays nothing.
 */
async function rewrite(res: UniversalServerResponse): Promise<UniversalServerResponse> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of res.body!) chunks.push(chunk);
  const body = Buffer.concat(chunks);
  // The chunks as they were (none for a gRPC error: rpc-node-handler.ts then answers Trailers-Only).
  const out: UniversalServerResponse = { ...res, body: createAsyncIterable(chunks) };
  const header = res.header ?? new Headers();
  const type = header.get('content-type') ?? '';
  if (/^application\/grpc-web/i.test(type)) {
    // gRPC-web: the status is in the last frame, the trailer frame.
    if (body.length < 5 || body[0] !== trailerFlag || body.readUInt32BE(1) !== body.length - 5) return out;
    const trailer = trailerParse(body.subarray(5));
    if (!rewriteGrpcStatus(trailer)) return out;
    return { ...out, body: createAsyncIterable([encodeEnvelope(trailerFlag, trailerSerialize(trailer))]) };
  }
  if (/^application\/grpc/i.test(type)) {
    // gRPC: the status is in the trailer (sent Trailers-Only by rpc-node-handler.ts when there is no message).
    if (res.trailer) rewriteGrpcStatus(res.trailer);
    return out;
  }
  if (res.status !== 200 && /^application\/json/i.test(type) && !header.has('content-encoding')) {
    // Connect unary: a JSON error body (not compressed: errors this small never are), the HTTP status from its code.
    let error: ConnectError;
    try {
      error = errorFromJsonBytes(body, undefined, new ConnectError('not a Connect error', Code.Unknown));
    } catch {
      return out;
    }
    if (!isUndecodable(error.code, error.rawMessage)) return out;
    const json = errorToJsonBytes(undecodableRequest(error.rawMessage), {});
    header.set('content-length', String(json.byteLength));
    return { ...out, status: codeToHttpStatus(Code.InvalidArgument), header, body: createAsyncIterable([json]) };
  }
  return out;
}

/** Turns a `parse binary` INTERNAL status in gRPC `headers` into INVALID_ARGUMENT; true when it did. */
function rewriteGrpcStatus(headers: Headers): boolean {
  const message = decodeGrpcMessage(headers.get('grpc-message') ?? '');
  if (!isUndecodable(Number(headers.get('grpc-status')) as Code, message)) return false;
  const error = undecodableRequest(message);
  headers.set('grpc-status', String(error.code));
  headers.set('grpc-message', encodeURIComponent(error.rawMessage));
  headers.delete('grpc-status-details-bin');
  return true;
}

function decodeGrpcMessage(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
