/**
 * Exit codes and error lines of the client commands, the way a shell user expects them:
 * 0 success; 1 the operation failed or timed out; 2 usage or bad input; 3 the gateway could not be reached.
 */
import { Code, ConnectError } from '@connectrpc/connect';
import { notOutpostReason } from './gateway-http-client.js';

/** Process exit codes of the client commands. */
export const ExitCode = {
  OK: 0,
  /** The operation ran and failed, or timed out (also: unknown account, id reused for another request). */
  FAILED: 1,
  /** Bad command line or input (unreadable file, invalid manifest rejected by the gateway, oversized input). */
  USAGE: 2,
  /** No gateway answered at the given URL, not as Outpost does, or not with a certificate that verifies. */
  UNREACHABLE: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** An error the command reports with a given exit code (the message is printed as `error: <message>`). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: ExitCode,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** HTTP status Connect uses for each code (what curl would have seen from the gateway). */
const HTTP_STATUS: Partial<Record<Code, number>> = {
  [Code.Canceled]: 499,
  [Code.Unknown]: 500,
  [Code.InvalidArgument]: 400,
  [Code.DeadlineExceeded]: 504,
  [Code.NotFound]: 404,
  [Code.AlreadyExists]: 409,
  [Code.PermissionDenied]: 403,
  [Code.ResourceExhausted]: 429,
  [Code.FailedPrecondition]: 400,
  [Code.Aborted]: 409,
  [Code.OutOfRange]: 400,
  [Code.Unimplemented]: 501,
  [Code.Internal]: 500,
  [Code.Unavailable]: 503,
  [Code.DataLoss]: 500,
  [Code.Unauthenticated]: 401,
};

/** Node socket error codes that mean "nothing answered at that address". */
const UNREACHABLE_CAUSES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
]);

function causeCode(err: unknown): string | undefined {
  let cur: unknown = err;
  for (let depth = 0; depth < 5 && cur && typeof cur === 'object'; depth++) {
    const code = (cur as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    cur = (cur as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Node/OpenSSL codes of a gateway certificate that does not verify. */
const CERTIFICATE_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Connect's code name in PascalCase (`InvalidArgument`), as a Kubernetes-style reason. */
function codeName(code: Code): string {
  const name = Code[code] ?? 'Unknown';
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/**
 * Turns any error from a gateway call into the line to print and the exit code. `gatewayUrl` is named in the
 * unreachable message. Never throws.
 */
export function describeClientError(err: unknown, gatewayUrl: string): { exitCode: ExitCode; message: string } {
  if (err instanceof CliError) return { exitCode: err.exitCode, message: err.message };
  const notOutpost = notOutpostReason(err);
  if (notOutpost !== undefined) {
    return {
      exitCode: ExitCode.UNREACHABLE,
      message: `${gatewayUrl} did not answer as an Outpost gateway does: ${notOutpost}; is --gateway (or OUTPOST_GATEWAY) the gateway's HTTP URL?`,
    };
  }
  const ce = ConnectError.from(err);
  const cause = causeCode(ce.cause);
  if (cause !== undefined && CERTIFICATE_CODES.has(cause)) {
    return {
      exitCode: ExitCode.UNREACHABLE,
      message:
        `the certificate of the gateway at ${gatewayUrl} does not verify (${cause}: ${ce.rawMessage}); pass --ca-file FILE ` +
        '(or OUTPOST_CA_FILE) with the CA that signed it',
    };
  }
  if (ce.code === Code.Unavailable && (cause === undefined || UNREACHABLE_CAUSES.has(cause)) && !ce.metadata.has('content-type')) {
    const why = cause ? `${cause}: ${ce.rawMessage}` : ce.rawMessage;
    return {
      exitCode: ExitCode.UNREACHABLE,
      message: `cannot reach the gateway at ${gatewayUrl} (${why}); is it running? (--gateway URL or OUTPOST_GATEWAY)`,
    };
  }
  if (ce.code === Code.Unimplemented && /404|not found/i.test(ce.rawMessage)) {
    return {
      exitCode: ExitCode.UNREACHABLE,
      message: `${gatewayUrl} does not serve the Outpost OperationService (${ce.rawMessage}); is --gateway the gateway's HTTP URL?`,
    };
  }
  const status = HTTP_STATUS[ce.code];
  let line = `${codeName(ce.code)}: ${ce.rawMessage}${status ? ` (HTTP ${status})` : ''}`;
  if (ce.code === Code.Unauthenticated && ce.rawMessage.startsWith('authentication required')) {
    // The gateway wants credentials and none were sent: say how to get some.
    line += `; no credentials were sent: run outpost login --gateway ${gatewayUrl.replace(/\/+$/, '')} to sign in, or give a token (--help lists the ways)`;
  }
  switch (ce.code) {
    case Code.InvalidArgument:
    case Code.ResourceExhausted:
    case Code.OutOfRange:
      return { exitCode: ExitCode.USAGE, message: line };
    default:
      return { exitCode: ExitCode.FAILED, message: line };
  }
}
