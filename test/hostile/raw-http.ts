/**
 * Raw HTTP clients for hostile requests: whatever method, path, headers and bytes a case chooses, over HTTP/1.1 or
 * HTTP/2 (h2c), with the full reply (status, headers, trailers, body) and a deadline. A well-behaved client library
 * would refuse to send most of these requests, which is why the suite does not use one here.
 */
import http from 'node:http';
import http2 from 'node:http2';

/** Everything the server answered. */
export interface RawReply {
  status: number;
  headers: Record<string, string>;
  /** HTTP trailers (gRPC status); empty when none came. */
  trailers: Record<string, string>;
  body: Buffer;
}

/** The server did not answer (or finish answering) in time: a hang. */
export class NoAnswerError extends Error {
  constructor(what: string, timeoutMs: number) {
    super(`no answer to ${what} within ${timeoutMs} ms`);
    this.name = 'NoAnswerError';
  }
}

/**
 * The server reset the stream before answering. Two resets are HTTP/2's own typed refusals (RFC 9113 §7), sent by
 * Node's http2 server before the gateway sees the request: ENHANCE_YOUR_CALM (0xb) for a peer that sends faster than
 * it may (a session's buffered data past `maxSessionMemory`, as when a client writes a 20 MB message at once), and
 * REFUSED_STREAM (0x7) for a header list over Node's limit of about 64 KiB (see {@link isTransportRefusal}).
 */
export class StreamResetError extends Error {
  static readonly REFUSED_STREAM = 0x7;
  static readonly ENHANCE_YOUR_CALM = 0xb;
  /**
   * @param headerListBytes the request's header list (names and values, pseudo-headers included), in bytes
   */
  constructor(
    readonly rstCode: number,
    readonly headerListBytes = 0,
  ) {
    super(`stream closed without an answer (code ${rstCode})`);
    this.name = 'StreamResetError';
  }
}

/**
 * Header lists from this size on are over Node's HTTP/2 limit: its server (nghttp2) refuses their stream with
 * REFUSED_STREAM — it enforces a 65 535-byte SETTINGS_MAX_HEADER_LIST_SIZE that it does not advertise, and raising the
 * setting does not move it — so the gateway never sees the request (its HTTP/1.1 port answers the same with 431).
 * Set a little under the limit, since Node counts a few bytes more per field than names and values.
 */
const NODE_HTTP2_HEADER_LIST_LIMIT_BYTES = 64_000;

/** True for a reset that is HTTP/2's typed refusal of the request (see {@link StreamResetError}). */
export function isTransportRefusal(err: StreamResetError): boolean {
  return (
    err.rstCode === StreamResetError.ENHANCE_YOUR_CALM ||
    (err.rstCode === StreamResetError.REFUSED_STREAM && err.headerListBytes >= NODE_HTTP2_HEADER_LIST_LIMIT_BYTES)
  );
}

/** A request to send. */
export interface RawRequest {
  method: string;
  path: string;
  headers?: Record<string, string>;
  /** Written in order; over HTTP/1.1 with a content-length unless `chunked`. */
  chunks?: Uint8Array[];
  chunked?: boolean;
  timeoutMs?: number;
  /** Ends the exchange early (a server stream that never ends by itself) once the body received so far satisfies it. */
  stopWhen?: (body: Buffer) => boolean;
}

const DEFAULT_TIMEOUT_MS = 30_000;

function flatten(headers: http.IncomingHttpHeaders | http2.IncomingHttpHeaders | NodeJS.Dict<string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/**
 * One request over HTTP/1.1 on a fresh connection. A server may answer (413, 415) and close before the body is
 * written: the answer counts, the write error after it does not. Rejects with {@link NoAnswerError} on a hang and
 * with the socket error when the connection died without any answer.
 */
export function http1Request(baseUrl: string, request: RawRequest): Promise<RawReply> {
  const url = new URL(baseUrl);
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const chunks = request.chunks ?? [];
  const length = chunks.reduce((n, c) => n + c.length, 0);
  const headers: Record<string, string> = { ...request.headers };
  if (!request.chunked && chunks.length > 0) headers['content-length'] = String(length);
  return new Promise((resolve, reject) => {
    let reply: RawReply | undefined;
    let response: http.IncomingMessage | undefined;
    let settled = false;
    const done = (err?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (reply) resolve(reply);
      else reject(err ?? new Error('no reply'));
    };
    const timer = setTimeout(() => {
      req.destroy();
      if (!settled) {
        settled = true;
        reject(new NoAnswerError(`${request.method} ${request.path.slice(0, 80)}`, timeoutMs));
      }
    }, timeoutMs);
    const req = http.request(
      { host: url.hostname, port: url.port, method: request.method, path: request.path, headers, agent: false, setHost: true },
      (res) => {
        response = res;
        const body: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          body.push(c);
          if (request.stopWhen?.(Buffer.concat(body))) {
            reply = { status: res.statusCode ?? 0, headers: flatten(res.headers), trailers: {}, body: Buffer.concat(body) };
            done();
            req.destroy();
          }
        });
        res.on('end', () => {
          reply = {
            status: res.statusCode ?? 0,
            headers: flatten(res.headers),
            trailers: flatten(res.trailers),
            body: Buffer.concat(body),
          };
          done();
        });
        res.on('error', (err) => {
          reply = { status: res.statusCode ?? 0, headers: flatten(res.headers), trailers: {}, body: Buffer.concat(body) };
          done(err);
        });
      },
    );
    req.on('error', (err) => {
      // The server answered and hung up while the body was still going out: keep waiting for the answer's end.
      if (response && !response.complete) return;
      done(err);
    });
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** One request over HTTP/2 (h2c or TLS without verification is not needed here: h2c only) on its own session. */
export function http2Request(baseUrl: string, request: RawRequest): Promise<RawReply> {
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    let settled = false;
    const finish = (err: Error | undefined, reply?: RawReply) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      session.destroy();
      if (reply) resolve(reply);
      else reject(err);
    };
    const timer = setTimeout(() => finish(new NoAnswerError(`${request.method} ${request.path.slice(0, 80)}`, timeoutMs)), timeoutMs);
    session.on('error', (err) => finish(err));
    let stream: http2.ClientHttp2Stream;
    try {
      // endStream explicit: node ends DELETE requests at once by default, and a case may send a DELETE with a body
      stream = session.request(
        { ':method': request.method, ':path': request.path, ...request.headers },
        { endStream: (request.chunks ?? []).length === 0 },
      );
    } catch (err) {
      finish(err as Error);
      return;
    }
    const fields = {
      ':method': request.method,
      ':path': request.path,
      ':scheme': 'http',
      ':authority': new URL(baseUrl).host,
      ...request.headers,
    };
    const headerListBytes = Object.entries(fields).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
    const reply: RawReply = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
    const body: Buffer[] = [];
    stream.on('response', (h) => {
      reply.status = Number(h[':status']);
      reply.headers = flatten(h);
    });
    stream.on('trailers', (t) => (reply.trailers = flatten(t)));
    stream.on('data', (c: Buffer) => {
      body.push(c);
      if (request.stopWhen?.(Buffer.concat(body))) finish(undefined, { ...reply, body: Buffer.concat(body) });
    });
    stream.on('end', () => finish(undefined, { ...reply, body: Buffer.concat(body) }));
    // A reset after a complete answer is the server ending an exchange it is done with; before one it is an error.
    stream.on('close', () =>
      reply.status
        ? finish(undefined, { ...reply, body: Buffer.concat(body) })
        : finish(new StreamResetError(stream.rstCode, headerListBytes)),
    );
    stream.on('error', () => {});
    for (const c of request.chunks ?? []) stream.write(c);
    stream.end();
  });
}
