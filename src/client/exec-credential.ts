/**
 * The client.authentication.k8s.io/v1 ExecCredential an exec credential plugin prints for kubectl, and the check of
 * the request kubectl passes in `KUBERNETES_EXEC_INFO`.
 */
import { CliError, ExitCode } from './errors.js';
import { jwtExpiry, rfc3339 } from './kube-token.js';

/** The only exec credential API version this plugin speaks (kubeconfig `users[].user.exec.apiVersion`). */
export const EXEC_CREDENTIAL_API_VERSION = 'client.authentication.k8s.io/v1';

/** What kubectl reads from the plugin's stdout. */
export interface ExecCredential {
  apiVersion: typeof EXEC_CREDENTIAL_API_VERSION;
  kind: 'ExecCredential';
  status: { token: string; expirationTimestamp?: string };
}

/**
 * The credential for `token`; a JWT's `exp` becomes `status.expirationTimestamp`, so kubectl runs the plugin again
 * once it has passed.
 */
export function buildExecCredential(token: string): ExecCredential {
  const expiry = jwtExpiry(token);
  return {
    apiVersion: EXEC_CREDENTIAL_API_VERSION,
    kind: 'ExecCredential',
    status: expiry ? { token, expirationTimestamp: rfc3339(expiry) } : { token },
  };
}

/**
 * Checks `KUBERNETES_EXEC_INFO` (absent when run by hand: fine). Throws CliError (exit 2) when it is not JSON or asks
 * for another apiVersion than {@link EXEC_CREDENTIAL_API_VERSION}.
 */
export function checkExecInfo(execInfo: string | undefined): void {
  if (execInfo === undefined || execInfo.trim() === '') return;
  let info: unknown;
  try {
    info = JSON.parse(execInfo);
  } catch (err) {
    throw new CliError(`KUBERNETES_EXEC_INFO is not JSON (${(err as Error).message})`, ExitCode.USAGE);
  }
  const apiVersion = typeof info === 'object' && info !== null ? (info as { apiVersion?: unknown }).apiVersion : undefined;
  if (apiVersion !== EXEC_CREDENTIAL_API_VERSION) {
    throw new CliError(
      `kubectl asked for an ExecCredential of apiVersion ${JSON.stringify(apiVersion ?? null)}; this plugin speaks only ` +
        `${EXEC_CREDENTIAL_API_VERSION}: set users[].user.exec.apiVersion to it in the kubeconfig (outpost kubeconfig --exec writes it)`,
      ExitCode.USAGE,
    );
  }
}
