/**
 * The failure vocabulary of operations: every failure ends as an HTTP status code, a reason (the Kubernetes Status
 * reason, or an Outpost reason) and a message (the Kubernetes Status message verbatim when Kubernetes said no).
 */
import { KubeHttpError } from '../kube/kube-client.js';

/** Outpost reasons, for failures the agent decides itself. */
export const OutpostReason = {
  /** The manifest text or a document in it is not a usable Kubernetes object. */
  InvalidManifest: 'InvalidManifest',
  /** The operation's timeout expired before it finished. */
  Timeout: 'Timeout',
  /** The agent does not serve the account (not configured, refused by the gateway, or its cluster unreachable). */
  AccountNotServed: 'AccountNotServed',
  /** The operation itself is malformed (no spec, a missing name…). */
  BadRequest: 'BadRequest',
  /** The result would not fit in one stream message. */
  ResultTooLarge: 'ResultTooLarge',
  /** Anything unexpected inside the agent. */
  InternalError: 'InternalError',
} as const;

/** A failure with what the result must say. Throw it anywhere inside an operation. */
export class OperationError extends Error {
  constructor(
    readonly statusCode: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = 'OperationError';
  }
}

/** A malformed operation or manifest (HTTP 400). */
export function badRequest(message: string, reason: string = OutpostReason.BadRequest): OperationError {
  return new OperationError(400, reason, message);
}

/** What Kubernetes answers for a missing kind or object (HTTP 404, reason NotFound). */
export function notFound(message: string): OperationError {
  return new OperationError(404, 'NotFound', message);
}

/** Kubernetes' reason for a status code, for answers that carried no Status object. */
function reasonForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 405:
      return 'MethodNotAllowed';
    case 409:
      return 'Conflict';
    case 410:
      return 'Gone';
    case 413:
      return 'RequestEntityTooLarge';
    case 415:
      return 'UnsupportedMediaType';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 503:
      return 'ServiceUnavailable';
    case 504:
      return 'Timeout';
    default:
      return status >= 500 ? 'InternalError' : status === 0 ? 'ServiceUnavailable' : 'Unknown';
  }
}

/** The result fields of a failure. */
export interface FailureFields {
  statusCode: number;
  reason: string;
  message: string;
}

/** Converts anything thrown inside an operation into result fields. */
export function failureOf(err: unknown): FailureFields {
  if (err instanceof OperationError) return { statusCode: err.statusCode, reason: err.reason, message: err.message };
  if (err instanceof KubeHttpError) {
    return { statusCode: err.status, reason: err.reason || reasonForStatus(err.status), message: err.statusMessage };
  }
  return { statusCode: 500, reason: OutpostReason.InternalError, message: err instanceof Error ? err.message : String(err) };
}
