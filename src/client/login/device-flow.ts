/**
 * Sign-in with the OAuth 2.0 device authorization grant (RFC 8628), the way for a terminal without a browser (an SSH
 * session, a container): the provider hands out a user code, the person opens the verification page on any device,
 * enters the code and signs in there, and the CLI polls the token endpoint until that is done, the code expired, or
 * the person denied it.
 */
import { type Configuration, initiateDeviceAuthorization, pollDeviceAuthorizationGrant, type TokenEndpointResponse } from 'openid-client';
import { CliError, ExitCode } from '../errors.js';
import type { CliIo } from '../io.js';
import { describeOidcError } from './oidc-client.js';

/** What the device flow needs besides the client configuration. */
export interface DeviceFlowOptions {
  scopes: string[];
  /** The provider's display name, for the instructions. */
  displayName: string;
  /** Stop polling after this long even when the code is still valid (default: the code's own lifetime). */
  timeoutMs?: number;
  /** The command to run again, for messages. */
  again: string;
}

function minutes(seconds: number): string {
  return seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? '' : 's'}` : `${seconds} s`;
}

/**
 * Runs the device flow and resolves with the token endpoint's answer. Prints the verification URI and the user code
 * (and the complete URI when the provider gives one) on stderr. Throws CliError (exit 1) when the code expires or
 * `timeoutMs` passes first, when the person denies the sign-in, or when the provider answers an error.
 */
export async function signInWithDevice(config: Configuration, io: CliIo, options: DeviceFlowOptions): Promise<TokenEndpointResponse> {
  let device: Awaited<ReturnType<typeof initiateDeviceAuthorization>>;
  try {
    device = await initiateDeviceAuthorization(config, { scope: options.scopes.join(' ') });
  } catch (err) {
    throw new CliError(`the provider refused to start a device sign-in (${describeOidcError(err)})`, ExitCode.FAILED);
  }
  const lifetimeMs = device.expires_in * 1000;
  const waitMs = Math.min(lifetimeMs, options.timeoutMs ?? lifetimeMs);
  io.stderr(
    `To sign in with ${options.displayName}, open ${device.verification_uri} in a browser and enter the code ${device.user_code}\n` +
      (device.verification_uri_complete ? `  (or open ${device.verification_uri_complete}, which carries the code)\n` : '') +
      `Waiting for the sign-in to complete (the code expires in ${minutes(device.expires_in)})...\n`,
  );
  const signal = AbortSignal.timeout(waitMs);
  try {
    return await pollDeviceAuthorizationGrant(config, device, undefined, { signal });
  } catch (err) {
    const code = (err as { error?: unknown }).error;
    if (code === 'expired_token' || (signal.aborted && waitMs === lifetimeMs)) {
      throw new CliError(`the code ${device.user_code} expired before the sign-in was completed: ${options.again}`, ExitCode.FAILED);
    }
    if (signal.aborted) {
      throw new CliError(
        `the sign-in was not completed within ${Math.round(waitMs / 1000)} s (--timeout): ${options.again}`,
        ExitCode.FAILED,
      );
    }
    if (code === 'access_denied') {
      throw new CliError(
        `the sign-in was denied at the provider (${describeOidcError(err)}): ${options.again} to try again`,
        ExitCode.FAILED,
      );
    }
    throw new CliError(`the device sign-in failed (${describeOidcError(err)}): ${options.again}`, ExitCode.FAILED);
  }
}
