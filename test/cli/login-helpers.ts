/**
 * What the sign-in tests share: a scratch config directory (OUTPOST_CONFIG_DIR), a cached sign-in written as
 * `outpost login` would have left it — an ID token the test provider signed for the CLI's client, and a real refresh
 * token of that provider — and an in-process `outpost` with the sign-in commands registered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { registerAccountsCommand } from '../../src/cli/commands/accounts.js';
import { registerCredentialCommand } from '../../src/cli/commands/credential.js';
import { registerKubeconfigCommand } from '../../src/cli/commands/kubeconfig.js';
import { registerLoginCommand } from '../../src/cli/commands/login.js';
import { registerLogoutCommand } from '../../src/cli/commands/logout.js';
import { type StoredLogin, writeLogin } from '../../src/client/login/login-store.js';
import { CLI_CLIENT_ID, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import { type CliRun, runInProcess } from './captured-io.js';

/** A scratch OUTPOST_CONFIG_DIR; `remove()` deletes it. */
export function scratchConfig(): { env: NodeJS.ProcessEnv; dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-login-'));
  return { env: { OUTPOST_CONFIG_DIR: dir }, dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** What {@link cacheSignIn} writes. */
export interface CachedSignInOptions {
  gateway: string;
  /** The provider's name at the gateway (default `corp`). */
  provider?: string;
  login?: string;
  /** Seconds from now until the cached ID token expires (default 3600; negative: expired). */
  expiresIn?: number;
  /** Default: a real one of the provider; `null`: none. */
  refreshToken?: string | null;
  issuer?: string;
}

/** Writes a cached sign-in into `env`'s config directory and returns it. */
export async function cacheSignIn(env: NodeJS.ProcessEnv, provider: TestOidcProvider, options: CachedSignInOptions): Promise<StoredLogin> {
  const login = options.login ?? 'alice';
  const exp = Math.floor(Date.now() / 1000) + (options.expiresIn ?? 3600);
  const idToken = await provider.mint({ sub: login, aud: CLI_CLIENT_ID, iat: exp - 3600, exp });
  const refreshToken = options.refreshToken === undefined ? await provider.issueRefreshToken(login) : options.refreshToken;
  const stored: StoredLogin = {
    gateway: options.gateway,
    provider: options.provider ?? 'corp',
    issuer: options.issuer ?? provider.issuer,
    clientId: CLI_CLIENT_ID,
    idToken,
    expiresAt: new Date(exp * 1000).toISOString(),
    accessToken: 'opaque-access-token',
    scopes: ['openid', 'email', 'groups', 'offline_access'],
    ...(refreshToken === null ? {} : { refreshToken }),
  };
  writeLogin(env, stored);
  return stored;
}

/** Runs `outpost ARGS…` in process with login, logout, credential, kubeconfig and accounts registered. */
export function runSignInCli(args: string[], env: NodeJS.ProcessEnv, now?: () => Date): Promise<CliRun> {
  return runInProcess(
    [registerLoginCommand, registerLogoutCommand, registerCredentialCommand, registerKubeconfigCommand, registerAccountsCommand],
    args,
    { env, ...(now ? { now } : {}) },
  );
}
