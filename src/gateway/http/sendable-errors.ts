/**
 * Every error message the gateway sends can be sent, in every protocol (docs/architecture.md, rule 7: bad input gets
 * a clear, typed error): it is well-formed UTF-16 — a lone surrogate becomes U+FFFD, so it has a UTF-8 encoding and
 * connect-es can percent-encode it into `grpc-message` (its `encodeURIComponent` throws otherwise, and the call is
 * never answered) — and at most {@link MAX_ERROR_MESSAGE} characters, so it fits in an HTTP/2 trailer (one echoing a
 * 70 000-character input overflowed it: the reply ended without a grpc-status). docs/agent-protocol.md documents the
 * cut ("… (N more characters)").
 *
 * Applied where the gateway writes errors, never by changing the library: the interceptor below for the RPC services
 * (every protocol), `statusTrailers` for the agent stream endpoint, pre-admission's refusals, the unary answers of
 * requests that fail before the interceptors (undecodable-request.ts) and REST error bodies (errors.ts).
 */
import { ConnectError, type Interceptor } from '@connectrpc/connect';
import { hasLoneSurrogate, wellFormed } from '../../shared/unstorable-text.js';

/** Longest error message sent, in UTF-16 code units; longer ones are cut here and say how much was left out. */
const MAX_ERROR_MESSAGE = 1000;

/** True when `text` can be sent as it is. */
function isSendableMessage(text: string): boolean {
  return text.length <= MAX_ERROR_MESSAGE && !hasLoneSurrogate(text);
}

/**
 * `text` as it can be sent: cut after {@link MAX_ERROR_MESSAGE} characters with "… (N more characters)" appended, and
 * well-formed. Returns `text` itself when it already is.
 */
export function sendableMessage(text: string): string {
  if (isSendableMessage(text)) return text;
  const cut =
    text.length > MAX_ERROR_MESSAGE ? `${text.slice(0, MAX_ERROR_MESSAGE)}… (${text.length - MAX_ERROR_MESSAGE} more characters)` : text;
  return wellFormed(cut);
}

/**
 * The error as it can be sent: `error` itself when its message already can be, otherwise a copy with the same code,
 * metadata, details and cause and a {@link sendableMessage}. The caller sends the returned error instead of `error`.
 */
export function sendableError(error: ConnectError): ConnectError {
  if (isSendableMessage(error.rawMessage)) return error;
  const copy = new ConnectError(sendableMessage(error.rawMessage), error.code, error.metadata, undefined, error.cause);
  copy.details = error.details;
  return copy;
}

async function* sendableStream<T>(messages: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* messages;
  } catch (err) {
    throw err instanceof ConnectError ? sendableError(err) : err;
  }
}

/**
 * The interceptor making every ConnectError a call ends with sendable: thrown by the implementation or an inner
 * interceptor, for unary calls and while a response stream is read. Install it FIRST in the chain, so it sees what
 * every other interceptor throws. A value that is no ConnectError is passed on untouched (the library sends it as
 * "internal error").
 */
export function createSendableErrorInterceptor(): Interceptor {
  return (next) => async (req) => {
    let res: Awaited<ReturnType<typeof next>>;
    try {
      res = await next(req);
    } catch (err) {
      throw err instanceof ConnectError ? sendableError(err) : err;
    }
    return res.stream ? { ...res, message: sendableStream(res.message) } : res;
  };
}
