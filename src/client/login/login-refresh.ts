/**
 * Renewing a login whose ID token expired or is about to: the refresh-token grant at the provider, under the cache
 * file's lock (login-lock.ts), and the cache rewritten with what the provider answered. Loaded only when a renewal is
 * due, so commands with a fresh token never load openid-client.
 */
import { refreshTokenGrant } from 'openid-client';
import { CliError, ExitCode } from '../errors.js';
import { withLoginLock } from './login-lock.js';
import { readLogin, type StoredLogin, writeLogin } from './login-store.js';
import { describeOidcError, discoverProvider, loginFromTokens } from './oidc-client.js';
import { loginCommand, needsRenewal } from './login-token.js';

/**
 * The login of `file` with an ID token that is not due for renewal at `now`, renewed with its refresh token if it
 * was (the cache then rewritten). Another process may have renewed it meanwhile: the file is read again under the
 * lock, and its token used when fresh. Throws CliError (exit 1) saying to run `outpost login` again when the login
 * is gone, has no refresh token, or the provider refuses or cannot be reached.
 */
export async function renewLogin(env: NodeJS.ProcessEnv, file: string, now: () => Date): Promise<StoredLogin> {
  return withLoginLock(file, async () => {
    const login = readLogin(file);
    if (!login)
      throw new CliError(`the sign-in cache ${file} was removed meanwhile (outpost logout?): run outpost login again`, ExitCode.FAILED);
    if (!needsRenewal(login, now())) return login;
    const again = `run ${loginCommand(login.gateway, login.provider)} again`;
    if (login.refreshToken === undefined) {
      throw new CliError(
        `the sign-in with ${login.provider} at ${login.gateway} expires at ${login.expiresAt} and the provider gave no ` +
          `refresh token to renew it: ${again}`,
        ExitCode.FAILED,
      );
    }
    const { idToken: _i, expiresAt: _e, accessToken: _a, ...base } = login;
    let renewed: StoredLogin;
    try {
      const tokens = await refreshTokenGrant(await discoverProvider(login.issuer, login.clientId), login.refreshToken);
      renewed = loginFromTokens(tokens, base);
    } catch (err) {
      const why = err instanceof CliError ? err.message : describeOidcError(err);
      throw new CliError(
        `the sign-in with ${login.provider} at ${login.gateway} expires at ${login.expiresAt} and could not be renewed (${why}): ${again}`,
        ExitCode.FAILED,
      );
    }
    writeLogin(env, renewed);
    return renewed;
  });
}
