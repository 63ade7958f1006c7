/**
 * The sign-in providers a gateway offers (`GET /auth/providers`, no credentials) and the choice among them: the only
 * one by default, else the one `--provider` names. The request goes with the TLS settings every client command uses
 * (--ca-file, --insecure-skip-tls-verify), and its failures are told apart: nothing answering (exit 3), a certificate
 * that does not verify (exit 3), a gateway without sign-in (404), an answer that is not a provider list.
 */
import http from 'node:http';
import https from 'node:https';
import { CliError, ExitCode } from '../errors.js';
import type { GatewayTls } from '../gateway-http-client.js';

/** One provider as the gateway lists it (src/gateway/sign-in/provider-routes.ts). */
export interface GatewayProvider {
  name: string;
  displayName: string;
  issuer: string;
  /** The public client the CLI signs in with. */
  cliClientId: string;
  scopes: string[];
}

function get(url: string, tls: GatewayTls, bearer?: string): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const secure = url.startsWith('https:');
    const headers: Record<string, string> = { accept: 'application/json' };
    if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
    const options: https.RequestOptions = { method: 'GET', headers, timeout: 30_000 };
    if (secure && tls.ca !== undefined) options.ca = tls.ca;
    if (secure && tls.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    const req = (secure ? https : http).request(url, options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => void (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('no answer within 30 s'), { code: 'ETIMEDOUT' })));
    req.on('error', reject);
    req.end();
  });
}

function isProvider(p: unknown): p is GatewayProvider {
  const v = p as Record<string, unknown>;
  return (
    typeof v === 'object' &&
    v !== null &&
    ['name', 'displayName', 'issuer', 'cliClientId'].every((k) => typeof v[k] === 'string') &&
    Array.isArray(v.scopes) &&
    v.scopes.every((s) => typeof s === 'string')
  );
}

/**
 * The providers of the gateway at `gatewayUrl` (checked, no trailing slash). Throws CliError: exit 3 when nothing
 * answers, the certificate does not verify, or the answer is not a provider list; exit 1 when the gateway has no
 * sign-in providers (404) or answers another error.
 */
export async function fetchGatewayProviders(gatewayUrl: string, tls: GatewayTls): Promise<GatewayProvider[]> {
  const url = `${gatewayUrl}/auth/providers`;
  let answer: Awaited<ReturnType<typeof get>>;
  try {
    answer = await get(url, tls);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const why = `${code ? `${code}: ` : ''}${(err as Error).message}`;
    if (/CERT|SELF_SIGNED|UNABLE_TO/.test(code)) {
      throw new CliError(
        `the certificate of the gateway at ${gatewayUrl} does not verify (${why}); ` +
          'pass --ca-file FILE (or OUTPOST_CA_FILE) with the CA that signed it',
        ExitCode.UNREACHABLE,
      );
    }
    throw new CliError(
      `cannot reach the gateway at ${gatewayUrl} (${why}); is it running? (--gateway URL or OUTPOST_GATEWAY)`,
      ExitCode.UNREACHABLE,
    );
  }
  if (answer.status === 404) {
    throw new CliError(
      `this gateway has no sign-in providers (GET ${url} answered 404): its auth.oidc is not configured; ` +
        'use a token instead (outpost get --help lists the ways)',
      ExitCode.FAILED,
    );
  }
  let parsed: unknown;
  try {
    parsed = answer.type.includes('json') ? JSON.parse(answer.body) : undefined;
  } catch {
    parsed = undefined;
  }
  if (answer.status !== 200) {
    const message = (parsed as { message?: unknown } | undefined)?.message;
    throw new CliError(`GET ${url} answered HTTP ${answer.status}${typeof message === 'string' ? `: ${message}` : ''}`, ExitCode.FAILED);
  }
  const providers = (parsed as { providers?: unknown } | undefined)?.providers;
  if (!Array.isArray(providers) || !providers.every(isProvider)) {
    throw new CliError(
      `${gatewayUrl} did not answer GET /auth/providers as an Outpost gateway does (${answer.type || 'no content-type'}); ` +
        "is --gateway the gateway's HTTP URL?",
      ExitCode.UNREACHABLE,
    );
  }
  if (providers.length === 0) throw new CliError(`this gateway has no sign-in providers (GET ${url} lists none)`, ExitCode.FAILED);
  return providers;
}

/** Who the gateway takes a token's holder for (`GET /auth/session`): its identity, groups and effective roles. */
export interface GatewayIdentity {
  identity: string;
  groups: string[];
  roles: string[];
}

/**
 * What the gateway makes of `bearer` (`GET /auth/session` with it), or a sentence saying why it cannot tell: the
 * sign-in itself succeeded either way, so nothing here throws.
 */
export async function fetchGatewayIdentity(gatewayUrl: string, tls: GatewayTls, bearer: string): Promise<GatewayIdentity | string> {
  try {
    const answer = await get(`${gatewayUrl}/auth/session`, tls, bearer);
    const body = JSON.parse(answer.body) as Partial<GatewayIdentity> & { signedIn?: boolean; message?: string };
    if (answer.status === 200 && body.signedIn === true && typeof body.identity === 'string') {
      return { identity: body.identity, groups: body.groups ?? [], roles: body.roles ?? [] };
    }
    return `the gateway did not accept the new token (HTTP ${answer.status}${body.message ? `: ${body.message}` : ''})`;
  } catch (err) {
    return `the gateway could not say who it takes you for (${(err as Error).message})`;
  }
}

/**
 * The provider to sign in with: the one named `name`, else the only one. Throws CliError (exit 2) listing the
 * providers for an unknown name, or for several and none named.
 */
export function chooseProvider(providers: GatewayProvider[], name: string | undefined, gatewayUrl: string): GatewayProvider {
  const listing = providers.map((p) => (p.displayName === p.name ? p.name : `${p.name} (${p.displayName})`)).join(', ');
  if (name !== undefined) {
    const found = providers.find((p) => p.name === name);
    if (!found) throw new CliError(`the gateway at ${gatewayUrl} has no sign-in provider "${name}"; it has: ${listing}`, ExitCode.USAGE);
    return found;
  }
  if (providers.length > 1) {
    throw new CliError(
      `the gateway at ${gatewayUrl} has several sign-in providers: pick one with --provider NAME (${listing})`,
      ExitCode.USAGE,
    );
  }
  return providers[0]!;
}
