/**
 * The credentials every client command sends to the gateway, from one place with one precedence order: the bearer
 * token (a file, an exec credential plugin, the environment, or the sign-in `outpost login` cached for the gateway)
 * and the TLS settings of an https:// gateway. Commands
 * add the flags with {@link addCredentialOptions} and turn them into a {@link GatewayConnection} with
 * {@link resolveGatewayConnection}; gateway-transport.ts sends the token as `Authorization: Bearer …` on every call.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { runCredentialExec, splitCommand } from './credential-exec.js';
import { CliError, ExitCode } from './errors.js';
import type { GatewayTls } from './gateway-http-client.js';
import { checkToken, readTokenFile } from './kube-token.js';
import { loginTokenFor } from './login/login-token.js';

/** The credential flags as commander parsed them. */
export interface CredentialOptions {
  tokenFile?: string;
  credentialExec?: string;
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
  /** Whose `outpost login` to use when several providers are signed in to the gateway (else OUTPOST_PROVIDER). */
  provider?: string;
}

/** Where and how to reach the gateway: its URL (no trailing slash), the token if any, TLS settings. */
export interface GatewayConnection {
  gatewayUrl: string;
  /** Sent as `Authorization: Bearer <token>`; never printed. */
  token?: string;
  /** Where the token came from (`--token-file /path`, `OUTPOST_TOKEN`…), for messages. */
  tokenOrigin?: string;
  tls: GatewayTls;
}

/** The precedence order, for `--help` and docs/cli.md. */
const CREDENTIALS_HELP = `
Credentials (the first that is set is used; without any, no Authorization header is sent):
  1. --token-file FILE          the token in FILE (read at every run, trimmed)
  2. --credential-exec CMD      a kubectl exec credential plugin: CMD runs without a shell and prints a
                                client.authentication.k8s.io/v1 ExecCredential whose status.token is used
                                (e.g. "outpost credential --token-file FILE"). CMD is split at spaces, no
                                quoting; for arguments with spaces give a JSON array: '["/my tool","--flag"]'
  3. OUTPOST_TOKEN_FILE         like --token-file
  4. OUTPOST_CREDENTIAL_EXEC    like --credential-exec
  5. OUTPOST_TOKEN              the token itself
  6. outpost login              the ID token "outpost login --gateway URL" cached for this gateway, renewed with
                                its refresh token when it expires (within a minute); with several providers
                                signed in, --provider NAME (or OUTPOST_PROVIDER) picks one
  --token-file and --credential-exec exclude each other; a flag beats every environment variable.
TLS (https:// gateways): --ca-file FILE (or OUTPOST_CA_FILE) verifies the gateway's certificate with that PEM
CA bundle instead of the system's; --insecure-skip-tls-verify does not verify it (testing only).
`;

/** Adds the credential and TLS flags and the precedence help to `cmd`. */
export function addCredentialOptions(cmd: Command): Command {
  return cmd
    .option('--token-file <file>', 'file holding the bearer token (env OUTPOST_TOKEN_FILE; else OUTPOST_TOKEN)')
    .option('--credential-exec <command>', 'exec credential plugin printing an ExecCredential (env OUTPOST_CREDENTIAL_EXEC)')
    .option('--ca-file <file>', 'PEM CA bundle that signed the gateway certificate, https only (env OUTPOST_CA_FILE)')
    .option('--insecure-skip-tls-verify', 'do not verify the gateway certificate (https; testing only)')
    .option('--provider <name>', 'whose "outpost login" to use when several providers are signed in (env OUTPOST_PROVIDER)')
    .addHelpText('after', CREDENTIALS_HELP);
}

/**
 * Reads a PEM CA bundle (`origin` names it in messages: `--ca-file`, `OUTPOST_CA_FILE`). Throws CliError (exit 2) for an
 * unreadable file or one without a PEM certificate.
 */
export function readCaFile(path: string, origin = '--ca-file'): { path: string; pem: string } {
  const abs = resolve(path);
  let pem: string;
  try {
    pem = readFileSync(abs, 'utf8');
  } catch (err) {
    throw new CliError(
      `cannot read the ${origin} ${abs} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      ExitCode.USAGE,
    );
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`the ${origin} ${abs} holds no PEM certificate`, ExitCode.USAGE);
  return { path: abs, pem };
}

/** Checks `gatewayUrl` (http or https) and returns it without trailing slashes. Throws CliError (exit 2). */
export function checkGatewayUrl(gatewayUrl: string): string {
  let url: URL;
  try {
    url = new URL(gatewayUrl);
  } catch {
    throw new CliError(`invalid --gateway URL "${gatewayUrl}" (expected http://host:port)`, ExitCode.USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid --gateway URL "${gatewayUrl}" (expected http:// or https://)`, ExitCode.USAGE);
  }
  return gatewayUrl.replace(/\/+$/, '');
}

/** The token by the precedence of {@link CREDENTIALS_HELP}, or undefined when none is set. */
async function findClientToken(
  url: string,
  opts: CredentialOptions,
  env: NodeJS.ProcessEnv,
  now: () => Date,
): Promise<{ token: string; origin: string } | undefined> {
  if (opts.tokenFile !== undefined && opts.credentialExec !== undefined) {
    throw new CliError('--token-file and --credential-exec exclude each other: give one', ExitCode.USAGE);
  }
  if (opts.tokenFile !== undefined) return { token: readTokenFile(opts.tokenFile), origin: `--token-file ${opts.tokenFile}` };
  const exec = async (value: string, origin: string) => ({ token: await runCredentialExec(splitCommand(value, origin), { env }), origin });
  if (opts.credentialExec !== undefined) return exec(opts.credentialExec, '--credential-exec');
  if (env.OUTPOST_TOKEN_FILE)
    return { token: readTokenFile(env.OUTPOST_TOKEN_FILE), origin: `OUTPOST_TOKEN_FILE ${env.OUTPOST_TOKEN_FILE}` };
  if (env.OUTPOST_CREDENTIAL_EXEC) return exec(env.OUTPOST_CREDENTIAL_EXEC, 'OUTPOST_CREDENTIAL_EXEC');
  if (env.OUTPOST_TOKEN !== undefined) return { token: checkToken(env.OUTPOST_TOKEN.trim(), 'OUTPOST_TOKEN'), origin: 'OUTPOST_TOKEN' };
  return loginTokenFor(env, url, opts.provider ?? (env.OUTPOST_PROVIDER || undefined), now);
}

/**
 * The TLS settings for `url` (checked): `--ca-file`, else `OUTPOST_CA_FILE`, for https; `--insecure-skip-tls-verify`.
 * Throws CliError (exit 2) for both flags together, either with an http:// URL, or an unreadable CA file.
 */
export function resolveGatewayTls(url: string, opts: CredentialOptions, env: NodeJS.ProcessEnv): GatewayTls {
  const https = url.startsWith('https:');
  if (opts.caFile !== undefined && opts.insecureSkipTlsVerify) {
    throw new CliError('--ca-file and --insecure-skip-tls-verify exclude each other', ExitCode.USAGE);
  }
  if (!https && (opts.caFile !== undefined || opts.insecureSkipTlsVerify)) {
    throw new CliError('--ca-file and --insecure-skip-tls-verify need an https:// gateway', ExitCode.USAGE);
  }
  const tls: GatewayTls = {};
  if (https && opts.caFile !== undefined) tls.ca = readCaFile(opts.caFile).pem;
  else if (https && !opts.insecureSkipTlsVerify && env.OUTPOST_CA_FILE) tls.ca = readCaFile(env.OUTPOST_CA_FILE, 'OUTPOST_CA_FILE').pem;
  if (opts.insecureSkipTlsVerify) tls.insecureSkipTlsVerify = true;
  return tls;
}

/**
 * The connection a client command uses: the checked URL, the token (running the exec plugin, or renewing the cached
 * sign-in, if that is the source) and the TLS settings. Throws CliError (exit 2, nothing sent) for a bad URL, an
 * unreadable or malformed token, a failing plugin, an unreadable CA file, TLS flags on an http:// URL, or an unusable
 * sign-in cache; exit 1 when a due renewal of the sign-in fails. Call it once per command run: the plugin runs each
 * time. `now` is the clock the sign-in's expiry is judged by (tests).
 */
export async function resolveGatewayConnection(
  gatewayUrl: string,
  opts: CredentialOptions,
  env: NodeJS.ProcessEnv,
  now: () => Date = () => new Date(),
): Promise<GatewayConnection> {
  const url = checkGatewayUrl(gatewayUrl);
  const tls = resolveGatewayTls(url, opts, env);
  const found = await findClientToken(url, opts, env, now);
  return { gatewayUrl: url, token: found?.token, tokenOrigin: found?.origin, tls };
}
