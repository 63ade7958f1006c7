/**
 * `outpost login`, start to end: the gateway's sign-in providers, the one to use, the provider's discovery document,
 * the device flow when the provider offers it (else, or when asked, the loopback redirect), the tokens cached for the
 * gateway and provider, and who signed in told on stderr.
 */
import { CliError, ExitCode } from '../errors.js';
import type { GatewayTls } from '../gateway-http-client.js';
import type { CliIo } from '../io.js';
import { signInWithDevice } from './device-flow.js';
import { chooseProvider, fetchGatewayIdentity, fetchGatewayProviders } from './gateway-providers.js';
import { describePerson, readIdToken } from './id-token.js';
import { gatewayKey, type StoredLogin, writeLogin } from './login-store.js';
import { loginCommand } from './login-token.js';
import { signInWithLoopback } from './loopback-flow.js';
import { discoverProvider, loginFromTokens } from './oidc-client.js';

/** How to sign in (the flags of `outpost login`). */
export interface SignInOptions {
  /** Checked, without trailing slashes. */
  gatewayUrl: string;
  tls: GatewayTls;
  provider?: string;
  /** Default: `device` when the provider has a device authorization endpoint, else `loopback`. */
  flow?: 'device' | 'loopback';
  openBrowser: boolean;
  timeoutMs?: number;
}

/**
 * Signs in and caches the tokens; resolves with the login and its cache file. Throws CliError with the exit code of
 * each failure: no or unknown provider, several and none chosen (2); the gateway or the provider unreachable or
 * refusing, the sign-in expired, denied or timed out (1 or 3).
 */
export async function signIn(env: NodeJS.ProcessEnv, io: CliIo, options: SignInOptions): Promise<{ login: StoredLogin; file: string }> {
  const providers = await fetchGatewayProviders(options.gatewayUrl, options.tls);
  const provider = chooseProvider(providers, options.provider, options.gatewayUrl);
  const config = await discoverProvider(provider.issuer, provider.cliClientId);
  const hasDevice = typeof config.serverMetadata().device_authorization_endpoint === 'string';
  const flow = options.flow ?? (hasDevice ? 'device' : 'loopback');
  if (flow === 'device' && !hasDevice) {
    throw new CliError(
      `the provider ${provider.name} (${provider.issuer}) offers no device sign-in (its discovery document has no ` +
        'device_authorization_endpoint): use --flow loopback',
      ExitCode.USAGE,
    );
  }
  const again = `run ${loginCommand(options.gatewayUrl, options.provider)}`;
  const common = { scopes: provider.scopes, displayName: provider.displayName, timeoutMs: options.timeoutMs, again };
  const tokens =
    flow === 'device'
      ? await signInWithDevice(config, io, common)
      : await signInWithLoopback(config, io, { ...common, openBrowser: options.openBrowser });
  const login = loginFromTokens(tokens, {
    gateway: gatewayKey(options.gatewayUrl),
    provider: provider.name,
    issuer: provider.issuer,
    clientId: provider.cliClientId,
    scopes: provider.scopes,
  });
  const file = writeLogin(env, login);
  const facts = readIdToken(login.idToken, `the provider ${provider.name}`);
  io.stderr(`Signed in to ${login.gateway} with ${provider.displayName} as ${describePerson(facts)}\n`);
  const seen = await fetchGatewayIdentity(options.gatewayUrl, options.tls, login.idToken);
  if (typeof seen === 'string') io.stderr(`warning: ${seen}\n`);
  else {
    const groups = seen.groups.length > 0 ? `, groups ${seen.groups.join(', ')}` : '';
    io.stderr(
      seen.roles.length > 0
        ? `The gateway knows you as ${seen.identity} with the roles ${seen.roles.join(', ')}${groups}\n`
        : `The gateway knows you as ${seen.identity}${groups}, with no role: ask its administrators for a rule of kind oidc (authorization.rules)\n`,
    );
  }
  io.stderr(
    login.refreshToken === undefined
      ? `The ID token expires at ${login.expiresAt} and the provider gave no refresh token: run outpost login again then.\n`
      : `The ID token expires at ${login.expiresAt}; outpost renews it with the refresh token when it is due (cached in ${file}).\n`,
  );
  return { login, file };
}
