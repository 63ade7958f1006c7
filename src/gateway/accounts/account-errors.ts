/**
 * The one error type of account management, mapped in one place to each surface: ConnectError codes for the
 * AccountService RPCs and HTTP status + JSON bodies (with the offending names) for the REST routes.
 */
import { Code, ConnectError } from '@connectrpc/connect';

/** What went wrong, independent of the surface. */
export type AccountErrorKind = 'invalid' | 'conflict' | 'not_found' | 'precondition';

/** A refused account management request; nothing was changed. `names` lists the accounts at fault. */
export class AccountAdminError extends Error {
  constructor(
    readonly kind: AccountErrorKind,
    message: string,
    readonly names: string[] = [],
  ) {
    super(message);
    this.name = 'AccountAdminError';
  }
}

const CODES: Record<AccountErrorKind, Code> = {
  invalid: Code.InvalidArgument,
  conflict: Code.AlreadyExists,
  not_found: Code.NotFound,
  precondition: Code.FailedPrecondition,
};

/** The RPC form of an account error; anything else passes through unchanged (the error interceptor maps it). */
export function toAccountConnectError(err: unknown): unknown {
  return err instanceof AccountAdminError ? new ConnectError(err.message, CODES[err.kind]) : err;
}

/** The REST form: status and JSON body. `duplicates` (409) or `unknown` (404) list the names at fault. */
export function toAccountHttpBody(err: AccountAdminError): { status: 400 | 404 | 409; body: Record<string, unknown> } {
  switch (err.kind) {
    case 'invalid':
      return { status: 400, body: { error: 'bad_request', message: err.message, ...(err.names.length > 0 && { names: err.names }) } };
    case 'conflict':
      return { status: 409, body: { error: 'conflict', message: err.message, duplicates: err.names } };
    case 'not_found':
      return { status: 404, body: { error: 'not_found', message: err.message, unknown: err.names } };
    case 'precondition':
      return { status: 409, body: { error: 'failed_precondition', message: err.message, names: err.names } };
  }
}
