/**
 * The one place where gateway failures become client-visible errors: ConnectError codes for RPCs, HTTP status + JSON
 * for REST. Unknown failures are logged with their cause and reported as a bare "internal error" — SQL text, stack
 * traces and driver messages never reach a client.
 */
import { Code, ConnectError, type Interceptor } from '@connectrpc/connect';
import type { Logger } from '../../shared/logger.js';
import { sendableMessage } from './sendable-errors.js';

/** Maps any thrown value to a ConnectError safe to send. Logs the cause of anything that is not already one. */
export function toConnectError(err: unknown, logger: Logger, what: string): ConnectError {
  if (err instanceof ConnectError) {
    if (err.code === Code.Internal || err.code === Code.Unknown) logger.error({ err }, `${what} failed`);
    return err;
  }
  if (isAbort(err)) return new ConnectError('request cancelled', Code.Canceled);
  logger.error({ err }, `${what} failed`);
  return new ConnectError('internal error', Code.Internal);
}

/** Connect interceptor applying {@link toConnectError} to unary calls (streams map their own errors). */
export function createErrorInterceptor(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (err) {
      throw toConnectError(err, logger, req.method.name);
    }
  };
}

/** Shorthand for a client error with a clear message. */
export function invalidArgument(message: string): ConnectError {
  return new ConnectError(message, Code.InvalidArgument);
}

/** An error on a REST route: status plus a short machine-readable `error` and a human `message`. */
export class HttpError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 500 | 501 | 502 | 503 | 504,
    readonly error: string,
    message: string,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

/**
 * The REST error body and status for any thrown value (logs unexpected ones). The message is sendable, as in every
 * other protocol (well-formed, at most 1000 characters: http/sendable-errors.ts).
 */
export function toHttpError(err: unknown, logger: Logger): { status: HttpError['status']; body: { error: string; message: string } } {
  if (err instanceof HttpError) return { status: err.status, body: { error: err.error, message: sendableMessage(err.message) } };
  if (err instanceof ConnectError && HTTP_OF_CODE[err.code]) {
    const [status, error] = HTTP_OF_CODE[err.code]!;
    return { status, body: { error, message: sendableMessage(err.rawMessage) } };
  }
  logger.error({ err }, 'REST request failed');
  return { status: 500, body: { error: 'internal', message: 'internal error' } };
}

/** REST status and `error` of the ConnectError codes a route may throw on purpose; others are internal errors. */
const HTTP_OF_CODE: Partial<Record<Code, [HttpError['status'], string]>> = {
  [Code.InvalidArgument]: [400, 'bad_request'],
  [Code.Unauthenticated]: [401, 'unauthenticated'],
  [Code.PermissionDenied]: [403, 'permission_denied'],
  [Code.NotFound]: [404, 'not_found'],
  [Code.AlreadyExists]: [409, 'conflict'],
  [Code.FailedPrecondition]: [409, 'failed_precondition'],
  [Code.ResourceExhausted]: [413, 'payload_too_large'],
  [Code.Unavailable]: [503, 'unavailable'],
};

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
}
