/**
 * `outpost logout`: forgets the cached sign-in of a gateway (one provider, or all of them) and revokes its refresh
 * token at the provider when the provider has a revocation endpoint, so a copy of the file taken earlier is useless
 * too. The file goes whatever the provider answers: a failed revocation is a warning, never a reason to keep the file.
 */
import { tokenRevocation } from 'openid-client';
import { CliError, ExitCode } from '../errors.js';
import type { CliIo } from '../io.js';
import { gatewayKey, listLogins, readLogin, removeLogin, type StoredLogin } from './login-store.js';
import { describeOidcError, discoverProvider } from './oidc-client.js';

/** Which logins to forget (the flags of `outpost logout`). */
export interface SignOutOptions {
  gatewayUrl: string;
  provider?: string;
  all?: boolean;
}

/** Revokes `login`'s refresh token; a warning or note on stderr when it cannot. Never throws. */
async function revoke(login: StoredLogin, io: CliIo): Promise<void> {
  if (login.refreshToken === undefined) return;
  const stays = 'the refresh token stays valid at the provider until it expires';
  try {
    const config = await discoverProvider(login.issuer, login.clientId);
    if (typeof config.serverMetadata().revocation_endpoint !== 'string') {
      io.stderr(`note: the provider ${login.provider} has no revocation endpoint: ${stays}\n`);
      return;
    }
    await tokenRevocation(config, login.refreshToken, { token_type_hint: 'refresh_token' });
  } catch (err) {
    const why = err instanceof CliError ? err.message : describeOidcError(err);
    io.stderr(`warning: could not revoke the refresh token at ${login.issuer} (${why}); ${stays}\n`);
  }
}

/**
 * Forgets the chosen logins of the gateway. Not being signed in is not an error (a line says so). Throws CliError
 * (exit 2) for `--provider` with `--all`, or several logins and neither given.
 */
export async function signOut(env: NodeJS.ProcessEnv, io: CliIo, options: SignOutOptions): Promise<void> {
  if (options.all && options.provider !== undefined) throw new CliError('--provider and --all exclude each other', ExitCode.USAGE);
  const gateway = gatewayKey(options.gatewayUrl);
  const logins = listLogins(env, options.gatewayUrl);
  let chosen = logins;
  if (options.provider !== undefined) chosen = logins.filter((l) => l.provider === options.provider);
  else if (!options.all && logins.length > 1) {
    throw new CliError(
      `signed in to ${gateway} with several providers (${logins.map((l) => l.provider).join(', ')}): give --provider NAME or --all`,
      ExitCode.USAGE,
    );
  }
  if (chosen.length === 0) {
    io.stderr(`Not signed in to ${gateway}${options.provider ? ` with provider ${options.provider}` : ''}: nothing to forget.\n`);
    return;
  }
  for (const { provider, file } of chosen) {
    let login: StoredLogin | undefined;
    try {
      login = readLogin(file, { allowShared: true });
    } catch (err) {
      io.stderr(`warning: ${(err as Error).message}; removing it without revoking anything\n`);
    }
    if (login) await revoke(login, io);
    removeLogin(file);
    io.stderr(`Signed out of ${gateway} (provider ${provider}): removed ${file}\n`);
  }
}
