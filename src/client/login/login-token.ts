/**
 * The bearer `outpost login` left for a gateway: the cached ID token of the provider the user picked (or of the only
 * one signed in), renewed with its refresh token when it has expired or expires within a minute. The last source of
 * the client commands' credentials (client-credentials.ts) and what `outpost credential --gateway` serves kubectl.
 */
import { CliError, ExitCode } from '../errors.js';
import { gatewayKey, listLogins, readLogin, type StoredLogin } from './login-store.js';

/** A token is renewed when it expires within this margin: a call made with it must still be accepted on arrival. */
const RENEW_MARGIN_MS = 60_000;

/** True when `login`'s ID token has expired at `now` or expires within {@link RENEW_MARGIN_MS}. */
export function needsRenewal(login: StoredLogin, now: Date): boolean {
  return Date.parse(login.expiresAt) - RENEW_MARGIN_MS <= now.getTime();
}

/** `outpost login --gateway URL [--provider P]`: the command to tell the user to run. */
export function loginCommand(gatewayUrl: string, provider?: string): string {
  return `outpost login --gateway ${gatewayKey(gatewayUrl)}${provider ? ` --provider ${provider}` : ''}`;
}

/** The token, where it came from, and the login it belongs to. */
export interface LoginToken {
  token: string;
  /** `outpost login (provider corp)`, for messages. */
  origin: string;
  login: StoredLogin;
}

/**
 * The cache file to use for `gatewayUrl`: the one of `provider` when named, else the only one. Undefined when the
 * gateway has no login (and no provider is named). Throws CliError (exit 2) for a named provider without a login, or
 * for several logins and none named.
 */
export function pickLogin(
  env: NodeJS.ProcessEnv,
  gatewayUrl: string,
  provider: string | undefined,
): { provider: string; file: string } | undefined {
  const logins = listLogins(env, gatewayUrl);
  if (provider !== undefined) {
    const found = logins.find((l) => l.provider === provider);
    if (found) return found;
    const others = logins.length > 0 ? ` (signed in with: ${logins.map((l) => l.provider).join(', ')})` : '';
    throw new CliError(
      `not signed in to ${gatewayKey(gatewayUrl)} with provider ${provider}${others}: run ${loginCommand(gatewayUrl, provider)}`,
      ExitCode.USAGE,
    );
  }
  if (logins.length > 1) {
    throw new CliError(
      `signed in to ${gatewayKey(gatewayUrl)} with several providers (${logins.map((l) => l.provider).join(', ')}): ` +
        'pick one with --provider NAME or OUTPOST_PROVIDER',
      ExitCode.USAGE,
    );
  }
  return logins[0];
}

/**
 * The login's ID token for `gatewayUrl`, renewed first when due at `now()` (a token not expired yet is still served
 * when its renewal fails); undefined when the gateway has no login and `provider` is not named. Throws CliError:
 * exit 2 as {@link pickLogin} and for an unusable cache file, exit 1 when an expired token cannot be renewed (the
 * message says to run `outpost login` again).
 */
export async function loginTokenFor(
  env: NodeJS.ProcessEnv,
  gatewayUrl: string,
  provider: string | undefined,
  now: () => Date = () => new Date(),
): Promise<LoginToken | undefined> {
  const picked = pickLogin(env, gatewayUrl, provider);
  if (!picked) return undefined;
  let login = readLogin(picked.file);
  if (!login) return undefined; // removed between the listing and the read: signed out
  if (needsRenewal(login, now())) {
    // Loaded on demand: openid-client is needed only for a renewal.
    const { renewLogin } = await import('./login-refresh.js');
    try {
      login = await renewLogin(env, picked.file, now);
    } catch (err) {
      // A token with seconds left still serves this call; the next one, past its expiry, reports the failure.
      if (!(err instanceof CliError) || Date.parse(login.expiresAt) <= now().getTime()) throw err;
    }
  }
  return { token: login.idToken, origin: `outpost login (provider ${login.provider})`, login };
}
