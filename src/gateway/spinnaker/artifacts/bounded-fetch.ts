/**
 * The one way the gateway fetches an artifact over HTTP(S) (docs/spinnaker.md, "Artifacts"), bounded in every
 * direction: the host of every hop is resolved once, checked against the account's target policy and connected to
 * at that checked address (target-policy.ts; no second resolution to rebind); at most `maxRedirects` redirects,
 * each one checked again, and the account's credentials go only to the origin they were configured for; a connect
 * timeout and a deadline for the whole fetch; the body held to `maxBytes` (artifact-spool.ts), refused at once when
 * its declared length is over. Errors name the URL without credentials and never carry the account's secrets.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { badArtifact, displayUrl, scrubMessage, upstreamFailed } from './artifact-errors.js';
import { type ArtifactBody, spoolBounded } from './artifact-spool.js';
import { type CheckedTarget, checkTarget, TargetRefused, type TargetPolicy } from './target-policy.js';

/** The bounds every fetch of the gateway respects (spinnaker.artifacts). */
export interface FetchLimits {
  maxBytes: number;
  connectTimeoutMs: number;
  timeoutMs: number;
  maxRedirects: number;
}

/** One fetch. */
export interface FetchRequest {
  url: string;
  /** Request headers; `authorization` is sent only to the origin of `url`, never to a redirect elsewhere. */
  headers?: Record<string, string>;
  policy: TargetPolicy;
  /** Values to scrub from every message (the account's password and token, and the headers built from them). */
  secrets?: readonly string[];
  /** What is fetched, for messages (`chart hello 1.2.0`); the URL when absent. */
  what?: string;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Fetches `req.url` within `limits` and returns the complete body (2xx only). Rejects with a 400 for a URL that is
 * not http(s), carries credentials, or leads (directly or by a redirect) to an address the policy refuses; a 502 for
 * an upstream error status, too many redirects, a body over the limit, a timeout or a network failure.
 */
export async function fetchBounded(req: FetchRequest, limits: FetchLimits): Promise<ArtifactBody> {
  const secrets = req.secrets ?? [];
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), limits.timeoutMs);
  timer.unref();
  const first = parseUrl(req.url);
  let url = first;
  let headers = { ...req.headers };
  try {
    for (let hop = 0; ; hop++) {
      const what = req.what ?? displayUrl(url);
      let target: CheckedTarget;
      try {
        target = await checkTarget(url.hostname, req.policy);
      } catch (err) {
        const via = hop > 0 ? ` (redirected from ${displayUrl(first)})` : '';
        if (err instanceof TargetRefused) throw badArtifact(`refused to fetch ${displayUrl(url)}${via}: ${err.message}`);
        throw upstreamFailed(`cannot resolve ${url.hostname}${via}: ${scrubMessage((err as Error).message, secrets)}`);
      }
      const res = await send(url, target, headers, limits.connectTimeoutMs, deadline.signal).catch((err: Error) => {
        throw failure(err, url, deadline.signal, limits, secrets);
      });
      if (REDIRECTS.has(res.statusCode ?? 0) && res.headers.location) {
        res.resume();
        if (hop >= limits.maxRedirects) {
          throw upstreamFailed(`${displayUrl(first)} redirected more than ${limits.maxRedirects} times (spinnaker.artifacts.maxRedirects)`);
        }
        const next = parseUrl(res.headers.location, url);
        if (next.origin !== first.origin) headers = withoutAuthorization(headers);
        url = next;
        continue;
      }
      const status = res.statusCode ?? 0;
      if (status < 200 || status > 299) {
        res.resume();
        throw upstreamFailed(`GET ${displayUrl(url)} answered ${status} ${scrubMessage(res.statusMessage ?? '', secrets)}`.trim());
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        res.destroy();
        throw upstreamFailed(`${what} is ${declared} bytes, larger than ${limits.maxBytes} (spinnaker.artifacts.maxBytes)`);
      }
      return await spoolBounded(res, limits.maxBytes, what).catch((err: Error) => {
        throw failure(err, url, deadline.signal, limits, secrets);
      });
    }
  } finally {
    clearTimeout(timer);
  }
}

function parseUrl(text: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw badArtifact(`not a valid URL: ${JSON.stringify(scrubMessage(text).slice(0, 200))}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw badArtifact(`only http and https URLs can be fetched, not ${displayUrl(url)}`);
  if (url.username || url.password) {
    throw badArtifact(`${displayUrl(url)} carries credentials in the URL; configure them on the artifact account instead`);
  }
  return url;
}

function withoutAuthorization(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k.toLowerCase() !== 'authorization'));
}

function failure(err: Error, url: URL, deadline: AbortSignal, limits: FetchLimits, secrets: readonly string[]): Error {
  if ('status' in err) return err; // already an answer (the spool's size error)
  if (deadline.aborted)
    return upstreamFailed(
      `GET ${displayUrl(url)} did not complete within ${limits.timeoutMs / 1000} s (spinnaker.artifacts.timeoutSeconds)`,
    );
  return upstreamFailed(`GET ${displayUrl(url)} failed: ${scrubMessage(err.message, secrets)}`);
}

/** One request to the checked address; resolves with the response head (the body is the caller's). */
function send(
  url: URL,
  target: CheckedTarget,
  headers: Record<string, string>,
  connectTimeoutMs: number,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  // The name stays the request's host (Host header, TLS server name and certificate check); only the address is pinned.
  const lookup: LookupFunction = (_host, options, callback) => {
    if (options.all)
      (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const options: RequestOptions = {
    method: 'GET',
    hostname: target.hostname,
    port: url.port || undefined,
    path: `${url.pathname}${url.search}`,
    headers: { 'user-agent': 'outpost-gateway', ...headers },
    lookup,
    agent: false,
    signal,
  };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(options, resolve);
    const connectTimer = setTimeout(() => req.destroy(new Error(`no connection within ${connectTimeoutMs / 1000} s`)), connectTimeoutMs);
    req.once('socket', (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once('connect', () => clearTimeout(connectTimer));
    });
    req.once('error', (err) => {
      clearTimeout(connectTimer);
      reject(err);
    });
    req.once('response', () => clearTimeout(connectTimer));
    req.end();
  });
}
