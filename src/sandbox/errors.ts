/**
 * The one error type of the sandbox API server. Every failure a client can see is an {@link ApiError}, rendered as a
 * Kubernetes `Status` object with the matching HTTP code, so kubectl and client libraries print real messages.
 */
import type { KindInfo } from './kinds.js';

/** `Status.reason` values the sandbox uses, keyed to their HTTP codes. */
export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Expired'
  | 'RequestEntityTooLarge'
  | 'UnsupportedMediaType'
  | 'Invalid'
  | 'TooManyRequests'
  | 'InternalError'
  | 'ServiceUnavailable'
  | 'Timeout';

/** Optional `Status.details`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: { reason?: string; message: string; field?: string }[];
}

/** A failure with an HTTP code, a Kubernetes reason and a human message. Thrown anywhere; rendered by the server. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The `Status` body for this error. */
  toStatus(): Record<string, unknown> {
    return statusObject(this.code, this.reason, this.message, this.details);
  }
}

/** Builds a failure `Status` object. */
export function statusObject(code: number, reason: StatusReason, message: string, details?: StatusDetails): Record<string, unknown> {
  const status: Record<string, unknown> = {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    code,
  };
  if (details) status.details = details;
  return status;
}

/** `plural.group` as Kubernetes writes it in messages (`deployments.apps`, `pods`). */
function qualifiedResource(info: Pick<KindInfo, 'plural' | 'group'>): string {
  return info.group ? `${info.plural}.${info.group}` : info.plural;
}

export const errors = {
  badRequest: (message: string) => new ApiError(400, 'BadRequest', message),
  unauthorized: () => new ApiError(401, 'Unauthorized', 'Unauthorized'),
  forbidden: (message: string, details?: StatusDetails) => new ApiError(403, 'Forbidden', message, details),
  notFound: (info: Pick<KindInfo, 'plural' | 'group'>, name: string) =>
    new ApiError(404, 'NotFound', `${qualifiedResource(info)} "${name}" not found`, {
      name,
      group: info.group,
      kind: info.plural,
    }),
  resourceNotFound: () => new ApiError(404, 'NotFound', 'the server could not find the requested resource'),
  methodNotAllowed: (message = 'the server does not allow this method on the requested resource') =>
    new ApiError(405, 'MethodNotAllowed', message),
  alreadyExists: (info: Pick<KindInfo, 'plural' | 'group'>, name: string) =>
    new ApiError(409, 'AlreadyExists', `${qualifiedResource(info)} "${name}" already exists`, {
      name,
      group: info.group,
      kind: info.plural,
    }),
  conflict: (info: Pick<KindInfo, 'plural' | 'group'>, name: string, why: string) =>
    new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualifiedResource(info)} "${name}": ${why}`, {
      name,
      group: info.group,
      kind: info.plural,
    }),
  gone: (message: string) => new ApiError(410, 'Expired', message),
  tooLarge: (limit: number) => new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`),
  unsupportedMediaType: (contentType: string) =>
    new ApiError(
      415,
      'UnsupportedMediaType',
      `the body of the request was in an unknown format - accepted media types include: application/json, application/yaml`,
      {
        causes: [{ reason: 'UnsupportedMediaType', message: `unsupported media type ${JSON.stringify(contentType)}` }],
      },
    ),
  invalid: (info: Pick<KindInfo, 'plural' | 'group' | 'kind'>, name: string, causes: { field: string; message: string }[]) =>
    new ApiError(422, 'Invalid', `${info.kind} "${name}" is invalid: ${causes.map((c) => `${c.field}: ${c.message}`).join(', ')}`, {
      name,
      group: info.group,
      kind: info.kind,
      causes: causes.map((c) => ({ reason: 'FieldValueInvalid', message: c.message, field: c.field })),
    }),
  internal: (message: string) => new ApiError(500, 'InternalError', `Internal error occurred: ${message}`),
  timeout: (message: string) => new ApiError(504, 'Timeout', message),
};
