/**
 * The credentials of an artifact account: Basic (a user name and a password file) or a token file, read from files
 * that operators rotate in place (re-read when they change, auth/file-source.ts). The values go into the request's
 * `Authorization` header and into the list of strings every message is scrubbed of — never into an answer, a log
 * line or the credentials listing.
 */
import { createFileSource, type FileSource } from '../../auth/file-source.js';
import { upstreamFailed } from './artifact-errors.js';

/** The credential fields every authenticated account type shares (config/artifacts-schema.ts). */
export interface AccountCredentialsConfig {
  username?: string;
  passwordFile?: string;
  tokenFile?: string;
}

/** What to send, and what to scrub. */
interface AuthMaterial {
  /** `{ authorization: … }`, or empty without credentials. */
  headers: Record<string, string>;
  /** The password or token, and the header value built from it. */
  secrets: string[];
  /** For git (which takes headers through its config): the header value, or undefined. */
  authorization?: string;
}

/** An account's credentials, read on each use. */
export interface AccountAuth {
  /** True when the account sends credentials (Clouddriver's `usesAuth`). */
  readonly usesAuth: boolean;
  /** The current credentials; a 502 naming the account when its file cannot be read. */
  material(): Promise<AuthMaterial>;
}

/**
 * Reads the files now (a missing file fails start-up with a clear message naming the account); `tokenScheme` is the
 * word before a token (`Bearer`, or `token` for GitHub as Clouddriver sends it).
 */
export function createAccountAuth(account: string, config: AccountCredentialsConfig, tokenScheme = 'Bearer'): AccountAuth {
  const password: FileSource | undefined = config.passwordFile
    ? createFileSource(config.passwordFile, `artifact account ${account}: passwordFile`)
    : undefined;
  const token: FileSource | undefined = config.tokenFile
    ? createFileSource(config.tokenFile, `artifact account ${account}: tokenFile`)
    : undefined;
  const username = config.username;
  const usesAuth = Boolean(token || username);
  const read = async (source: FileSource) => {
    const value = await source.readIfReadable();
    if (value === undefined) throw upstreamFailed(`artifact account ${account}: its credentials file cannot be read`);
    return value.toString('utf8').trim();
  };
  return {
    usesAuth,
    async material(): Promise<AuthMaterial> {
      if (token) {
        const value = await read(token);
        const header = `${tokenScheme} ${value}`;
        return { headers: { authorization: header }, secrets: [value, header], authorization: header };
      }
      if (username !== undefined) {
        const pass = password ? await read(password) : '';
        const encoded = Buffer.from(`${username}:${pass}`).toString('base64');
        const header = `Basic ${encoded}`;
        return { headers: { authorization: header }, secrets: [pass, encoded, header], authorization: header };
      }
      return { headers: {}, secrets: [] };
    },
  };
}
