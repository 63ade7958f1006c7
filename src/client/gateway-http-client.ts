/**
 * The HTTP/1.1 client under the CLI's Connect transport. The gateway answers a refused call (401, 403) from its headers,
 * before it reads the body (src/gateway/auth/pre-admission.ts); connect-node's own HTTP/1.1 client fails a call with the
 * error of a request-body write that races such an answer (`write EPIPE`, reported as Internal / HTTP 500). This client
 * sends each request in one write (headers and the whole body, nothing flushed ahead of it) and lets an answer that
 * arrived win over any later error of the connection, so the gateway's 401 or 403 is what the caller sees. (The gateway
 * drops the rest of a refused body rather than resetting the connection, which a reset would have made unreadable to
 * any client.)
 *
 * It also tells apart a peer that is not an Outpost gateway (a closed connection without an answer, bytes that are
 * not HTTP, an answer that is not Connect's: see {@link notOutpostError}).
 */
import http from 'node:http';
import https from 'node:https';
import { Code, ConnectError } from '@connectrpc/connect';
import type { UniversalClientFn, UniversalClientRequest, UniversalClientResponse } from '@connectrpc/connect/protocol';

/** TLS settings for an https:// gateway. */
export interface GatewayTls {
  /** PEM CA bundle to verify the gateway's certificate with (default: Node's trusted roots). */
  ca?: string;
  /** Accept any certificate (testing only). */
  insecureSkipTlsVerify?: boolean;
}

const NOT_OUTPOST = Symbol('notOutpost');

/**
 * An error saying the peer answered, but not as an Outpost gateway does; `what` says how (for the message: the CLI
 * exits 3). A plain ConnectError (Unavailable) carrying a mark, because connect hands ConnectErrors through unchanged
 * and recognises subclasses by their name only.
 */
function notOutpostError(what: string, cause?: unknown): ConnectError {
  const error = new ConnectError(what, Code.Unavailable, undefined, undefined, cause);
  return Object.assign(error, { [NOT_OUTPOST]: what });
}

/** How the peer did not answer as Outpost does, when `err` came from {@link notOutpostError}; else undefined. */
export function notOutpostReason(err: unknown): string | undefined {
  const what = typeof err === 'object' && err !== null ? (err as { [NOT_OUTPOST]?: unknown })[NOT_OUTPOST] : undefined;
  return typeof what === 'string' ? what : undefined;
}

/** Content types a Connect answer has: unary JSON or binary, and the streaming envelopes. */
const CONNECT_TYPE = /^application\/(json|proto|connect\+(json|proto))(\s*;|$)/i;

/** Node error codes of a connection that was accepted, then ended or garbled without an HTTP answer. */
function describeNoAnswer(err: NodeJS.ErrnoException): string | undefined {
  const code = err.code ?? '';
  if (code.startsWith('HPE_')) return `it answered bytes that are not HTTP (${err.message})`;
  if (code === 'ECONNRESET' || code === 'EPIPE') return `it closed the connection without an HTTP answer (${err.message})`;
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /wrong version number|packet length too long/i.test(err.message)) {
    return `it does not speak TLS on this port (${err.message}): is the URL http:// rather than https://?`;
  }
  return undefined;
}

async function readBody(body: AsyncIterable<Uint8Array> | undefined): Promise<Buffer | undefined> {
  if (body === undefined) return undefined;
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * A Connect `UniversalClientFn` over HTTP/1.1 (http or https with `tls`). The request body is read whole before
 * anything is sent: fine for unary and server-streaming calls (one request message), the only kinds the CLI makes;
 * it must not be used for client or bidirectional streams.
 */
export function createGatewayHttpClient(tls: GatewayTls = {}): UniversalClientFn {
  // A connection per call: a command makes few calls, and a kept-alive socket the gateway closes for idleness just as
  // it is reused resets the next call (ECONNRESET before any answer), which cannot be retried safely for a submission.
  const agents = { http: new http.Agent({ keepAlive: false }), https: new https.Agent({ keepAlive: false }) };
  return async function request(req: UniversalClientRequest): Promise<UniversalClientResponse> {
    const body = await readBody(req.body);
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.header.forEach((value, key) => void (headers[key] = value));
    if (body !== undefined) headers['content-length'] = String(body.length);
    const secure = url.protocol === 'https:';
    const options: https.RequestOptions = { method: req.method, headers, agent: secure ? agents.https : agents.http };
    if (secure) {
      if (tls.ca !== undefined) options.ca = tls.ca;
      if (tls.insecureSkipTlsVerify) options.rejectUnauthorized = false;
    }
    return new Promise<UniversalClientResponse>((resolve, reject) => {
      const outgoing = secure ? https.request(url, options) : http.request(url, options);
      let answered = false;
      // The caller's deadline or cancellation ends the exchange wherever it is; connect reports it from the signal.
      const signal = req.signal;
      const onAbort = () => outgoing.destroy();
      if (signal?.aborted) onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      outgoing.once('close', () => signal?.removeEventListener('abort', onAbort));
      outgoing.on('error', (err: NodeJS.ErrnoException) => {
        // Once an answer arrived, the connection's later errors (the write of a body the server never read) are not
        // the call's: the answer decides it, and a cut-off answer fails its own body stream below.
        if (answered) return;
        if (req.signal?.aborted) return reject(ConnectError.from(req.signal.reason ?? err, Code.Canceled));
        const noAnswer = describeNoAnswer(err);
        reject(noAnswer ? notOutpostError(noAnswer, err) : new ConnectError(err.message, Code.Unavailable, undefined, undefined, err));
      });
      outgoing.on('response', (res) => {
        answered = true;
        // Its errors reach the reader through the body's iterator; once nobody reads (the caller aborted after the
        // answer it wanted), there is nothing left to tell.
        res.on('error', () => {});
        const type = String(res.headers['content-type'] ?? '');
        if (!CONNECT_TYPE.test(type)) {
          res.resume();
          outgoing.destroy();
          reject(notOutpostError(`it answered HTTP ${res.statusCode} with ${type ? `content-type ${type}` : 'no content-type'}`));
          return;
        }
        const header = new Headers();
        for (const [key, value] of Object.entries(res.headers)) {
          if (value !== undefined) header.set(key, Array.isArray(value) ? value.join(', ') : value);
        }
        const trailer = new Headers();
        resolve({ status: res.statusCode ?? 0, header, trailer, body: responseBody(res, outgoing, trailer, signal) });
      });
      // One write: the request line, the headers and the whole body, so no later write can race an early answer.
      outgoing.end(body);
    });
  };
}

/** The answer's body; when it is over the request is let go (its socket may still be writing a refused body). */
async function* responseBody(
  res: http.IncomingMessage,
  outgoing: http.ClientRequest,
  trailer: Headers,
  signal: AbortSignal | undefined,
): AsyncIterable<Uint8Array> {
  try {
    for await (const chunk of res) yield chunk as Buffer;
    for (const [key, value] of Object.entries(res.trailers)) if (value !== undefined) trailer.set(key, value);
  } catch (err) {
    if (signal?.aborted) throw ConnectError.from(signal.reason ?? err, Code.Canceled);
    throw new ConnectError(`the gateway's answer was cut off (${(err as Error).message})`, Code.Unavailable, undefined, undefined, err);
  } finally {
    if (!res.complete || !outgoing.writableFinished) outgoing.destroy();
  }
}
