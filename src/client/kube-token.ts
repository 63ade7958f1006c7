/**
 * The Outpost token that kubectl sends through the gateway: read from a file or `OUTPOST_TOKEN`, checked to be one
 * header-safe word, and — when it is a JWT — its expiry, so the exec credential plugin can tell kubectl when to ask
 * again. The token is never decoded for trust: the gateway verifies it; this only reads the `exp` claim.
 */
import { readFileSync } from 'node:fs';
import { CliError, ExitCode } from './errors.js';

/** Where a token came from, for messages (never the token itself). */
export interface TokenSource {
  /** The token, trimmed. */
  token: string;
  /** `--token-file /abs/path` or `OUTPOST_TOKEN`. */
  origin: string;
}

/** Characters a bearer token may hold (RFC 6750 b64token, plus what opaque tokens commonly use). */
const TOKEN = /^[A-Za-z0-9\-._~+/=:]+$/;

/** Checks a trimmed token; throws CliError (exit 2) naming `origin` when it is empty or not one header-safe word. */
export function checkToken(token: string, origin: string): string {
  if (token === '') throw new CliError(`${origin} is empty: expected an Outpost token`, ExitCode.USAGE);
  if (!TOKEN.test(token)) {
    throw new CliError(`${origin} does not hold a single token (spaces, line breaks or other characters in it)`, ExitCode.USAGE);
  }
  return token;
}

/** Reads and checks the token in `path` (trimmed). Throws CliError (exit 2) for an unreadable or empty file. */
export function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read the token file ${path} (${code ?? (err as Error).message})`, ExitCode.USAGE);
  }
  return checkToken(text.trim(), `the token file ${path}`);
}

/**
 * The token from `tokenFile` when given, else from `OUTPOST_TOKEN` in `env`, else undefined. Throws CliError (exit 2)
 * for an unreadable, empty or malformed one.
 */
export function findToken(tokenFile: string | undefined, env: NodeJS.ProcessEnv): TokenSource | undefined {
  if (tokenFile !== undefined) return { token: readTokenFile(tokenFile), origin: `--token-file ${tokenFile}` };
  const fromEnv = env.OUTPOST_TOKEN;
  if (fromEnv === undefined) return undefined;
  return { token: checkToken(fromEnv.trim(), 'OUTPOST_TOKEN'), origin: 'OUTPOST_TOKEN' };
}

const JWT = /^[A-Za-z0-9_-]+\.([A-Za-z0-9_-]+)\.[A-Za-z0-9_-]*$/;

/**
 * The `exp` claim of a JWT (three base64url parts whose middle one is a JSON object with a numeric `exp`), as a Date;
 * undefined for any other token.
 */
export function jwtExpiry(token: string): Date | undefined {
  const match = JWT.exec(token);
  if (!match) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(match[1]!, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claims !== 'object' || claims === null) return undefined;
  const exp = (claims as { exp?: unknown }).exp;
  if (typeof exp !== 'number' || !Number.isFinite(exp) || exp <= 0) return undefined;
  const date = new Date(Math.floor(exp) * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** RFC 3339 in UTC without fractional seconds (`2026-01-01T00:00:00Z`), as Kubernetes writes timestamps. */
export function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}
