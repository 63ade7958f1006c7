/**
 * A minimal Kubernetes REST client on top of client-node's `KubeConfig` (which supplies TLS material, tokens and
 * proxies). It exists because the agent needs raw, pausable response streams for watches (backpressure) and owns
 * its restart loop; client-node's Watch/informer can do neither.
 */
import http from 'node:http';
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import type { KubeConfig } from '@kubernetes/client-node';
import { ClusterPathError, createClusterUrls, type ClusterTarget } from './cluster-url.js';
import { kubeVerb } from './request-verb.js';

/** A Kubernetes API call answered with a non-2xx status (or a transport failure, `status` 0). */
export class KubeHttpError extends Error {
  readonly status: number;
  readonly reason: string;
  /** The `Status.message` of the answer verbatim (or the raw body, or the transport error); `message` adds context. */
  readonly statusMessage: string;
  constructor(status: number, message: string, reason = '', statusMessage = message) {
    super(message);
    this.name = 'KubeHttpError';
    this.status = status;
    this.reason = reason;
    this.statusMessage = statusMessage;
  }
}

/** One arbitrary API call (see {@link KubeClient.request}). */
export interface KubeRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Query;
  /** Sent as JSON (a string is sent as is). */
  body?: unknown;
  /** Content type of the body; default `application/json`. */
  contentType?: string;
  /** Accept header; default `application/json`. */
  accept?: string;
  signal?: AbortSignal;
}

/** A 2xx answer to {@link KubeClient.request}. */
export interface KubeResponse {
  status: number;
  /** The body as text. */
  text: string;
}

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

/** What the agent needs from a Kubernetes API server. */
export interface KubeClient {
  /** API server URL (`https://host:port`). */
  readonly server: string;
  /** GET a JSON document. Throws {@link KubeHttpError}. */
  getJson<T>(path: string, query?: Query, signal?: AbortSignal): Promise<T>;
  /** POST a JSON document and return the JSON answer. Throws {@link KubeHttpError}. */
  postJson<T>(path: string, body: unknown, signal?: AbortSignal): Promise<T>;
  /**
   * Opens a streaming GET (a watch). Resolves with the 200 response once headers arrive; the caller consumes (and
   * may pause) it, and must destroy it or abort the signal when done. Non-200 answers throw {@link KubeHttpError}.
   */
  openStream(path: string, query: Query, signal: AbortSignal, idleTimeoutMs: number): Promise<IncomingMessage>;
  /**
   * Any verb, any content type; resolves with 2xx answers (status and text), throws {@link KubeHttpError} otherwise.
   * The operations executor uses it for writes, patches, subresources and plain-text logs.
   */
  request(request: KubeRequest): Promise<KubeResponse>;
  /**
   * What a raw request to `pathAndQuery` (below the server URL, its path prefix kept) needs: the URL (for messages),
   * the request options — host, port, the exact path, TLS material and credentials (in `options.headers`) — and the
   * module to call. For the Kubernetes API proxy, which streams bodies itself. An upgrade gets a connection of its
   * own, never a pooled one. Rejects with {@link KubeHttpError} 400 for a path the shared rules refuse
   * (src/shared/kube-path.ts): nothing is sent then.
   */
  rawRequest(method: string, pathAndQuery: string, upgrade: boolean): Promise<RawRequestTarget>;
  /** Releases pooled sockets. */
  close(): void;
}

/** See {@link KubeClient.rawRequest}. Call `request(options)`: `options.path` is what was checked. */
interface RawRequestTarget {
  url: URL;
  options: https.RequestOptions & { headers: Record<string, string>; path: string };
  request: typeof http.request;
}

/**
 * Told about every API call a client makes (the agent's metrics): its verb ({@link kubeVerb}) and the HTTP status of
 * the answer, or `error` when none came (connection failure, timeout, abort). Must not throw.
 */
export interface KubeRequestRecorder {
  kubeRequest(verb: string, code: string): void;
}

/** Options of {@link createKubeClient}. */
export interface KubeClientOptions {
  recorder?: KubeRequestRecorder;
}

const REQUEST_TIMEOUT_MS = 30_000;

/** A path the shared rules refuse, as the 400 a call answers (nothing was sent). */
function refusedPath(err: unknown): unknown {
  if (!(err instanceof ClusterPathError)) return err;
  return new KubeHttpError(400, `refused before sending: ${err.message}`, 'BadRequest', err.message);
}

async function readBody(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function errorFromResponse(status: number, text: string, url: URL): KubeHttpError {
  let message = text.slice(0, 300);
  let reason = '';
  try {
    const status_ = JSON.parse(text) as { message?: string; reason?: string };
    if (typeof status_.message === 'string') message = status_.message;
    if (typeof status_.reason === 'string') reason = status_.reason;
  } catch {
    // not a Status object: keep the text
  }
  const verbatim = message || http.STATUS_CODES[status] || '';
  return new KubeHttpError(status, `${status} from ${url.pathname}: ${verbatim}`, reason, verbatim);
}

/**
 * A keep-alive twin of the plain http(s) agent client-node built (same TLS material), so every call of an account
 * reuses pooled connections instead of paying a TCP (and TLS) handshake. Proxy agents are kept as they are.
 */
function keepAliveAgent(built: http.Agent): http.Agent {
  const ctor = built.constructor;
  if (ctor !== http.Agent && ctor !== https.Agent) return built;
  const options = (built as http.Agent & { options: http.AgentOptions }).options;
  built.destroy();
  const keepAlive: http.AgentOptions = { ...options, keepAlive: true, keepAliveMsecs: 30_000, scheduling: 'lifo' };
  return ctor === https.Agent ? new https.Agent(keepAlive) : new http.Agent(keepAlive);
}

/** Creates a client for the current context of `kc`; every call is reported to `options.recorder`. */
export function createKubeClient(kc: KubeConfig, options: KubeClientOptions = {}): KubeClient {
  const recorder = options.recorder;
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('kubeconfig has no current cluster');
  const server = cluster.server;
  const transport = server.startsWith('https:') ? https : http;
  // Every URL is the server URL (its path prefix kept) plus a checked path, appended as text (cluster-url.ts).
  const urls = createClusterUrls(server);
  const target = (path: string, query?: Query): ClusterTarget => {
    try {
      return urls.api(path, query);
    } catch (err) {
      throw refusedPath(err);
    }
  };
  let agent: http.Agent | undefined;

  async function requestOptions(method: string): Promise<https.RequestOptions> {
    const opts: https.RequestOptions = { method, headers: {} };
    await kc.applyToHTTPSOptions(opts);
    // Reuse one keep-alive connection pool: applyToHTTPSOptions builds a new agent (without keep-alive) on every call.
    agent ??= keepAliveAgent(opts.agent as http.Agent);
    opts.agent = agent;
    if (opts.auth) {
      (opts.headers as Record<string, string>).authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      delete opts.auth;
    }
    return opts;
  }

  /** Sends one request; the answer (status) or its absence is recorded under `verb`. */
  async function send(
    verb: string,
    to: ClusterTarget,
    opts: https.RequestOptions,
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    try {
      const res = await sendOnce(to, opts, body, signal);
      recorder?.kubeRequest(verb, String(res.statusCode ?? 0));
      return res;
    } catch (err) {
      recorder?.kubeRequest(verb, 'error');
      throw err;
    }
  }

  function sendOnce(
    to: ClusterTarget,
    opts: https.RequestOptions,
    body: string | undefined,
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    const { url } = to;
    return new Promise((resolve, reject) => {
      const req = transport.request({ ...opts, ...to.options, signal }, resolve);
      req.on('error', (err) =>
        reject(
          err instanceof KubeHttpError
            ? err
            : new KubeHttpError(0, `${url.host}: ${err.message}`, err.name === 'AbortError' ? 'Aborted' : ''),
        ),
      );
      if (body !== undefined) req.end(body);
      else req.end();
    });
  }

  async function raw(request: KubeRequest): Promise<KubeResponse> {
    const to = target(request.path, request.query);
    const { url } = to;
    const opts = await requestOptions(request.method);
    opts.headers = { ...(opts.headers as Record<string, string>), accept: request.accept ?? 'application/json' };
    let payload: string | undefined;
    if (request.body !== undefined) {
      payload = typeof request.body === 'string' ? request.body : JSON.stringify(request.body);
      opts.headers['content-type'] = request.contentType ?? 'application/json';
      opts.headers['content-length'] = String(Buffer.byteLength(payload));
    }
    const timeout = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
    const signal = request.signal;
    const verb = kubeVerb(request.method, request.path, request.query, request.contentType);
    const res = await send(verb, to, opts, payload, signal ? AbortSignal.any([signal, timeout]) : timeout);
    const text = await readBody(res);
    const status = res.statusCode ?? 0;
    if (status < 200 || status >= 300) throw errorFromResponse(status, text, url);
    return { status, text };
  }

  async function call<T>(method: 'GET' | 'POST', path: string, query: Query | undefined, body: unknown, signal?: AbortSignal): Promise<T> {
    const { url } = target(path, query);
    const { status, text } = await raw({ method, path, query, body, signal });
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new KubeHttpError(status, `invalid JSON from ${url.pathname}`);
    }
  }

  return {
    server,
    getJson: (path, query, signal) => call('GET', path, query, undefined, signal),
    postJson: (path, body, signal) => call('POST', path, undefined, body, signal),
    request: raw,
    async openStream(path, query, signal, idleTimeoutMs) {
      const to = target(path, query);
      const { url } = to;
      const opts = await requestOptions('GET');
      opts.headers = { ...(opts.headers as Record<string, string>), accept: 'application/json' };
      const res = await send(kubeVerb('GET', path, query), to, opts, undefined, signal);
      const status = res.statusCode ?? 0;
      if (status !== 200) throw errorFromResponse(status, await readBody(res), url);
      res.setTimeout(idleTimeoutMs, () => res.destroy(new KubeHttpError(0, `watch idle for ${idleTimeoutMs} ms`)));
      return res;
    },
    async rawRequest(method, pathAndQuery, upgrade) {
      let to: ClusterTarget;
      try {
        to = urls.raw(pathAndQuery);
      } catch (err) {
        throw refusedPath(err);
      }
      const opts = await requestOptions(method);
      if (upgrade) {
        // A fresh agent with the same TLS material: an upgraded socket leaves the pool anyway.
        const options = (opts.agent as http.Agent & { options: http.AgentOptions }).options;
        opts.agent = transport === https ? new https.Agent({ ...options, keepAlive: false }) : new http.Agent({ keepAlive: false });
      }
      return {
        url: to.url,
        options: { ...opts, ...to.options } as RawRequestTarget['options'],
        request: transport.request as typeof http.request,
      };
    },
    close() {
      agent?.destroy();
    },
  };
}
