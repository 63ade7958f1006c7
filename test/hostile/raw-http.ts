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
 * The server reset the stream before answering. With ENHANCE_YOUR_CALM (0xb) this is HTTP/2's own typed refusal of a
 * peer that sends faster than it may (Node's http2 server sends it when a session's buffered data passes
 * `maxSessionMemory`, as a client writing a 20 MB message at once does); RFC 9113 §7 defines it for exactly that.
 */
export class StreamResetError extends Error {
  static readonly ENHANCE_YOUR_CALM = 0xb;
  constructor(readonly rstCode: number) {
    super(`stream closed without an answer (code ${rstCode})`);
    this.name = 'StreamResetError';
  }
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
      reply.status ? finish(undefined, { ...reply, body: Buffer.concat(body) }) : finish(new StreamResetError(stream.rstCode)),
    );
    stream.on('error', () => {});
    for (const c of request.chunks ?? []) stream.write(c);
    stream.end();
  });
}
