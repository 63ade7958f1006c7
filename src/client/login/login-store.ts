/**
 * The sign-in cache of `outpost login`: one JSON file per gateway and provider under the user's config directory,
 * holding the provider's tokens. It holds a refresh token — a credential that lasts days — so it is written with mode
 * 0600 in a directory of mode 0700, replaced atomically (a temp file, then a rename: a reader never sees half a file),
 * and a file that others may read is refused rather than used.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { CliError, ExitCode } from '../errors.js';

/** What one sign-in leaves behind (the cache file's content). */
export interface StoredLogin {
  /** The gateway it was made for, as {@link gatewayKey} writes it. */
  gateway: string;
  /** The provider's name at that gateway (`auth.oidc.providers[].name`). */
  provider: string;
  issuer: string;
  /** The public client the CLI signed in with (the provider's `cliClientId`). */
  clientId: string;
  /** The bearer the CLI sends (as kubelogin does): its `aud` is the CLI's client id, which the gateway accepts. */
  idToken: string;
  /** The ID token's `exp`, ISO 8601. */
  expiresAt: string;
  accessToken?: string;
  /** Absent when the provider issued none: the sign-in then ends with the ID token. */
  refreshToken?: string;
  scopes: string[];
}

const FILE_VERSION = 1;

/**
 * The directory holding the cache files: `OUTPOST_CONFIG_DIR/logins`, else `$XDG_CONFIG_HOME/outpost/logins`, else
 * `~/.config/outpost/logins`. Nothing is created here.
 */
function loginDir(env: NodeJS.ProcessEnv): string {
  if (env.OUTPOST_CONFIG_DIR) return join(resolve(env.OUTPOST_CONFIG_DIR), 'logins');
  const base = env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(env.HOME || homedir(), '.config');
  return join(base, 'outpost', 'logins');
}

/**
 * The gateway URL as the cache knows it: scheme, lower-case host, the port unless it is the default, the path without
 * trailing slashes. `https://GW.example.com:443/` and `https://gw.example.com` are one gateway.
 */
export function gatewayKey(gatewayUrl: string): string {
  const url = new URL(gatewayUrl);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

/** File-name prefix of one gateway's logins: readable host and port, then a hash telling apart scheme and path. */
function gatewayPrefix(gatewayUrl: string): string {
  const key = gatewayKey(gatewayUrl);
  const host = new URL(key).host.replace(/[^A-Za-z0-9.-]/g, '_');
  return `${host}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}@`;
}

/** A provider name as the gateway's auth.oidc allows it; it becomes part of a file name. */
const PROVIDER_NAME = /^[a-z0-9](?:[a-z0-9-]{0,30}[a-z0-9])?$/;

/** Throws CliError (exit 2) unless `name` is a provider name the gateway could have (1-32 of a-z, 0-9, "-"). */
export function checkProviderName(name: string): string {
  if (!PROVIDER_NAME.test(name)) {
    throw new CliError(
      `invalid provider name "${name}": 1-32 of a-z, 0-9 and "-", starting and ending with a letter or digit`,
      ExitCode.USAGE,
    );
  }
  return name;
}

/** The cache file of one gateway and provider. Throws CliError (exit 2) for a provider name the gateway cannot have. */
export function loginFile(env: NodeJS.ProcessEnv, gatewayUrl: string, provider: string): string {
  return join(loginDir(env), `${gatewayPrefix(gatewayUrl)}${checkProviderName(provider)}.json`);
}

/** The logins kept for `gatewayUrl`, by provider name (sorted). Reads no file; an absent directory is no login. */
export function listLogins(env: NodeJS.ProcessEnv, gatewayUrl: string): { provider: string; file: string }[] {
  const dir = loginDir(env);
  const prefix = gatewayPrefix(gatewayUrl);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new CliError(
      `cannot read the sign-in cache ${dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.USAGE,
    );
  }
  return names
    .filter((n) => n.startsWith(prefix) && n.endsWith('.json'))
    .map((n) => ({ provider: n.slice(prefix.length, -'.json'.length), file: join(dir, n) }))
    .filter((l) => PROVIDER_NAME.test(l.provider))
    .sort((a, b) => a.provider.localeCompare(b.provider));
}

function isLogin(value: unknown): value is StoredLogin & { version: number } {
  const v = value as Record<string, unknown>;
  const strings = ['gateway', 'provider', 'issuer', 'clientId', 'idToken', 'expiresAt'];
  return typeof v === 'object' && v !== null && v.version === FILE_VERSION && strings.every((k) => typeof v[k] === 'string');
}

/**
 * The login in `file`, or undefined when there is none. Throws CliError (exit 2) when group or others may read the
 * file (unless `allowShared`: logout removes it anyway) or when it is not a cache file of this version.
 */
export function readLogin(file: string, options: { allowShared?: boolean } = {}): StoredLogin | undefined {
  let text: string;
  try {
    const mode = statSync(file).mode & 0o777;
    if ((mode & 0o077) !== 0 && !options.allowShared) {
      throw new CliError(
        `the sign-in cache ${file} may be read by others (mode ${mode.toString(8).padStart(4, '0')}): it holds your refresh ` +
          `token, so it is not used; remove it (outpost logout) and run outpost login again, or chmod 600 it if no one else read it`,
        ExitCode.USAGE,
      );
    }
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof CliError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CliError(
      `cannot read the sign-in cache ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.USAGE,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!isLogin(parsed)) {
    throw new CliError(`the sign-in cache ${file} is not one outpost login wrote: remove it and run outpost login again`, ExitCode.USAGE);
  }
  const { version: _version, ...login } = parsed;
  return { ...login, scopes: Array.isArray(login.scopes) ? login.scopes : [] };
}

/**
 * Writes `login` to its cache file atomically with mode 0600, creating the directory with mode 0700 (and narrowing it
 * to 0700 when it exists). Returns the file. Throws CliError (exit 1) when it cannot; an older file is then untouched.
 */
export function writeLogin(env: NodeJS.ProcessEnv, login: StoredLogin): string {
  const dir = loginDir(env);
  const file = loginFile(env, login.gateway, login.provider);
  const temp = `${file}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const fd = openSync(temp, 'wx', 0o600);
    try {
      fchmodSync(fd, 0o600); // whatever the umask
      writeSync(fd, `${JSON.stringify({ version: FILE_VERSION, ...login }, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    return file;
  } catch (err) {
    rmSync(temp, { force: true });
    throw new CliError(
      `cannot write the sign-in cache ${file} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.FAILED,
    );
  }
}

/** Removes a cache file (absent: nothing to do). */
export function removeLogin(file: string): void {
  rmSync(file, { force: true });
}
