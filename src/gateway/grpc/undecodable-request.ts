/**
 * A request message that does not decode is the client's mistake: INVALID_ARGUMENT in every protocol the client RPCs
 * are served in, never INTERNAL, with a message every protocol can carry. connect-es decodes binary protobuf with a
 * serialization that throws `ConnectError("parse binary: …", Code.Internal)` (its JSON one already throws
 * INVALID_ARGUMENT, but its message may echo the client's JSON: a key thousands of characters long, or a lone UTF-16
 * surrogate that connect-es cannot percent-encode into `grpc-message`), no option changes that, and the library is not
 * patched. Where the error surfaces decides the remedy:
 *
 * - streaming calls (server, client, bidi): the request messages reach the interceptors as a stream that is decoded
 *   as it is read, so {@link createUndecodableRequestInterceptor} rethrows that error as INVALID_ARGUMENT (and the
 *   interceptor of sendable-errors.ts makes its message sendable);
 * - unary calls: the request is decoded before any interceptor runs, and the error is answered by the library.
 *   {@link guardUndecodableRequests} wraps each method's handler and rewrites that answer in the protocol's own form
 *   (unary-error-answer.ts) — only when the call never reached the interceptors, i.e. when the failure came from
 *   reading the request. An implementation's own INTERNAL error is never touched. When the library could not write
 *   its answer at all (gRPC and gRPC-web: the message held a lone surrogate, which only the JSON decoder's echo of the
 *   client's text can put there), the guard answers INVALID_ARGUMENT itself.
 *
 * Both parts are needed: install the interceptor before any interceptor that may end a call (it also records that a
 * call reached the interceptors) and wrap every handler.
 */
import { Code, ConnectError, createContextKey, type Interceptor } from '@connectrpc/connect';
import type { UniversalHandler } from '@connectrpc/connect/protocol';
import { sendableError } from '../http/sendable-errors.js';
import { rewriteUnaryError, unaryErrorAnswer } from './unary-error-answer.js';

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

/** The error to send for one that ended a call before its interceptors. */
function answerable(error: ConnectError): ConnectError {
  return sendableError(isUndecodable(error.code, error.rawMessage) ? undecodableRequest(error.rawMessage) : error);
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
 * not decode into INVALID_ARGUMENT. Goes before every interceptor that may end a call (only the one of
 * sendable-errors.ts, which never does, may come first).
 */
export function createUndecodableRequestInterceptor(): Interceptor {
  return (next) => async (req) => {
    req.contextValues.set(reachedInterceptors, true);
    if (!req.stream) return next(req);
    return next({ ...req, message: decodable(req.message) });
  };
}

/**
 * Wraps a method's handler so that a unary request that does not decode is answered INVALID_ARGUMENT with a sendable
 * message. Keeps the handler's properties (path, service, method, protocols), as the router needs them.
 */
export function guardUndecodableRequests(handler: UniversalHandler): UniversalHandler {
  if (handler.method.methodKind !== 'unary') return handler;
  const guarded = async (req: Parameters<UniversalHandler>[0]) => {
    let res: Awaited<ReturnType<UniversalHandler>>;
    try {
      res = await handler(req);
    } catch (err) {
      // connect-es's encodeURIComponent of the message threw (a URIError), so the call would never be answered.
      if (!(err instanceof URIError) || req.contextValues?.get(reachedInterceptors)) throw err;
      const unsendable = new ConnectError(
        `cannot decode message ${handler.method.input.typeName} from JSON (the offending value holds a lone UTF-16 surrogate and is not repeated here)`,
        Code.InvalidArgument,
      );
      return unaryErrorAnswer(req.header.get('content-type') ?? '', unsendable);
    }
    // A call that reached the interceptors had its request decoded; a response without a body is no error form.
    if (req.contextValues?.get(reachedInterceptors) || !res.body) return res;
    return rewriteUnaryError(res, answerable);
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
