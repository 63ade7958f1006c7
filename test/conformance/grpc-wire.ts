/**
 * A raw gRPC call over `node:http2`, written from the gRPC HTTP/2 specification (PROTOCOL-HTTP2) and nothing else:
 * the conformance suite must see the wire as an agent in any language would, so it cannot use connect-es (which hides
 * how a call ended). It frames messages by hand (1 flag byte + 4-byte big-endian length), reads the response HEADERS,
 * DATA and trailers itself, and reports how the call ended: a Trailers-Only response (one HEADERS frame carrying
 * END_STREAM and `grpc-status`), headers + messages + trailers, or a reset — with the decoded `grpc-message` and every
 * other trailer (`x-outpost-reconnect`).
 */
import http2 from 'node:http2';
import { gunzipSync, gzipSync } from 'node:zlib';

/** The agent stream's method path. */
export const CONNECT_PATH = '/outpost.agent.v1.AgentService/Connect';

/** How one raw call is opened. */
export interface RawCallOptions {
  /** `:path`; default the agent Connect method. */
  path?: string;
  /** Extra request headers (authorization, grpc-encoding, grpc-timeout…); a value of `undefined` leaves one out. */
  headers?: Record<string, string | undefined>;
  /** `content-type`; default `application/grpc+proto`. */
  contentType?: string;
}

/** How a call ended, as seen on the wire. */
export interface CallOutcome {
  /** True when the response was one HEADERS frame with END_STREAM (and `grpc-status`): the Trailers-Only form. */
  trailersOnly: boolean;
  /**
   * How the response was shaped: `trailers-only` (one HEADERS frame with END_STREAM), `trailers` (headers, messages,
   * then a trailing HEADERS frame), `status-in-headers` (the status came in a first HEADERS frame without END_STREAM and
   * the stream ended later with an empty DATA frame: not a form the gRPC specification allows), `reset` (RST_STREAM or
   * a broken connection before any status).
   */
  form: 'trailers-only' | 'trailers' | 'status-in-headers' | 'reset';
  /** `:status` of the response headers (0 when none arrived). */
  httpStatus: number;
  /** The response's first HEADERS block (for Trailers-Only it holds the status too). */
  headers: Record<string, string>;
  /** The trailing HEADERS block (empty for Trailers-Only). */
  trailers: Record<string, string>;
  /** `grpc-status` from wherever it arrived; undefined when none did (a reset, a broken connection). */
  grpcStatus: number | undefined;
  /** `grpc-message`, percent-decoded. */
  grpcMessage: string;
  /** Response messages received before the end. */
  messages: number;
  /** RST_STREAM code when the stream was reset (0 = NO_ERROR). */
  rstCode: number;
  /** A transport error, if one happened. */
  error?: string;
}

/** One open raw call. */
export interface RawCall {
  /** Writes one message in the length-prefixed framing; `compressed` sets flag bit 0 (and gzips unless `raw`). */
  writeMessage(body: Uint8Array, opts?: { compressed?: boolean; raw?: boolean }): void;
  /** Writes bytes as they are (broken prefixes, partial messages). */
  writeRaw(bytes: Uint8Array): void;
  /** Half-closes the request side (END_STREAM on the last DATA frame). */
  end(): void;
  /** Resets the stream (CANCEL) and closes the connection, as a killed agent would. */
  abort(): void;
  /** Waits for the next response message; undefined once the call ended and nothing is left. */
  read(timeoutMs?: number): Promise<Uint8Array | undefined>;
  /** Messages already received and not yet read. */
  readonly pending: number;
  /** Resolves once the call ended (trailers, Trailers-Only, reset or a broken connection). */
  readonly ended: Promise<CallOutcome>;
  /** True once {@link ended} resolved. */
  readonly finished: boolean;
}

/** Encodes one gRPC message: flag byte, 4-byte length, body. */
export function frameMessage(body: Uint8Array, compressedFlag = false): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  out[0] = compressedFlag ? 1 : 0;
  new DataView(out.buffer).setUint32(1, body.length);
  out.set(body, 5);
  return out;
}

/** Percent-decodes a `grpc-message` (PROTOCOL-HTTP2: percent-encoded UTF-8); returns the raw value if it is broken. */
export function decodeGrpcMessage(value: string | undefined): string {
  if (!value) return '';
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function plainHeaders(h: http2.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return out;
}

/**
 * Opens one call on its own HTTP/2 connection (`http://` = h2c). The connection is closed when the call ends. The
 * request headers are exactly what gRPC asks for, plus `options.headers`.
 */
export function openRawCall(baseUrl: string, options: RawCallOptions = {}): RawCall {
  const session = http2.connect(baseUrl);
  const headers: http2.OutgoingHttpHeaders = {
    ':method': 'POST',
    ':path': options.path ?? CONNECT_PATH,
    'content-type': options.contentType ?? 'application/grpc+proto',
    te: 'trailers',
    'user-agent': 'outpost-conformance/1',
  };
  for (const [k, v] of Object.entries(options.headers ?? {})) if (v !== undefined) headers[k.toLowerCase()] = v;
  const req = session.request(headers, { endStream: false });

  const outcome: CallOutcome = {
    trailersOnly: false,
    form: 'reset',
    httpStatus: 0,
    headers: {},
    trailers: {},
    grpcStatus: undefined,
    grpcMessage: '',
    messages: 0,
    rstCode: 0,
  };
  const queue: Uint8Array[] = [];
  let buffered: Buffer = Buffer.alloc(0);
  let responseEncoding = 'identity';
  let waiter: (() => void) | undefined;
  let finished = false;
  let resolveEnded!: (o: CallOutcome) => void;
  const ended = new Promise<CallOutcome>((r) => (resolveEnded = r));
  const wake = () => {
    const w = waiter;
    waiter = undefined;
    w?.();
  };
  const takeStatus = (h: Record<string, string>) => {
    if (h['grpc-status'] !== undefined) {
      outcome.grpcStatus = Number(h['grpc-status']);
      outcome.grpcMessage = decodeGrpcMessage(h['grpc-message']);
    }
  };
  const finish = () => {
    if (finished) return;
    finished = true;
    outcome.rstCode = req.rstCode ?? 0;
    if (outcome.trailersOnly) outcome.form = 'trailers-only';
    else if (outcome.trailers['grpc-status'] !== undefined) outcome.form = 'trailers';
    else if (outcome.headers['grpc-status'] !== undefined) {
      outcome.form = 'status-in-headers';
      takeStatus(outcome.headers);
    } else outcome.form = 'reset';
    if (!req.closed) req.close(http2.constants.NGHTTP2_NO_ERROR);
    session.close();
    session.destroy();
    resolveEnded(outcome);
    wake();
  };

  req.on('response', (h, flags) => {
    outcome.headers = plainHeaders(h);
    outcome.httpStatus = Number(h[':status'] ?? 0);
    responseEncoding = outcome.headers['grpc-encoding'] ?? 'identity';
    // The HEADERS frame's own flags: END_STREAM set means this block is the whole response (Trailers-Only).
    if ((flags & http2.constants.NGHTTP2_FLAG_END_STREAM) !== 0) {
      outcome.trailersOnly = true;
      takeStatus(outcome.headers);
    }
  });
  req.on('trailers', (h) => {
    outcome.trailers = plainHeaders(h);
    takeStatus(outcome.trailers);
  });
  req.on('data', (chunk: Buffer) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    while (buffered.length >= 5) {
      const len = buffered.readUInt32BE(1);
      if (buffered.length < 5 + len) break;
      const compressed = (buffered[0]! & 1) === 1;
      let body: Uint8Array = buffered.subarray(5, 5 + len);
      if (compressed && responseEncoding === 'gzip') body = gunzipSync(body);
      queue.push(new Uint8Array(body));
      outcome.messages++;
      buffered = buffered.subarray(5 + len);
    }
    wake();
  });
  req.on('error', (err) => {
    outcome.error = err.message;
  });
  session.on('error', (err) => {
    outcome.error ??= err.message;
    finish();
  });
  // The response side ending is the end of the call, whether or not the request side is still open.
  req.on('end', finish);
  req.on('close', finish);
  session.on('close', finish);

  return {
    writeMessage(body, opts = {}) {
      if (req.writable) req.write(frameMessage(opts.compressed && !opts.raw ? gzipSync(body) : body, opts.compressed));
    },
    writeRaw(bytes) {
      if (req.writable) req.write(bytes);
    },
    end() {
      if (req.writable) req.end();
    },
    abort() {
      if (!req.closed) req.close(http2.constants.NGHTTP2_CANCEL);
      session.destroy();
    },
    async read(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const m = queue.shift();
        if (m) return m;
        if (finished) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no response message within ${timeoutMs} ms`);
        await new Promise<void>((r) => {
          waiter = r;
          setTimeout(r, left).unref();
        });
      }
    },
    get pending() {
      return queue.length;
    },
    ended,
    get finished() {
      return finished;
    },
  };
}
