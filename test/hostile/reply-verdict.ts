/**
 * The oracle of the hostile-input suite for anything that came back over HTTP: is the reply a typed error, an
 * acceptance, or a failure? Per protocol — Connect unary and streaming, gRPC, gRPC-web, and the REST routes — and
 * with the same rules everywhere: UNKNOWN is never typed; INTERNAL is typed only when a protocol rule assigns it to
 * the client's mistake (the list below, each with its reason); REST errors are 4xx with a JSON `{error, message}`
 * body; a 5xx is a failure; and no error message may carry SQL or driver text.
 */
import { Code } from '@connectrpc/connect';
import { accepted, failure, typed, type CaseResult } from './hostile-case.js';
import type { RawReply } from './raw-http.js';

/** How the request was sent, which decides how the reply is read. */
export type ReplyProtocol = 'connect' | 'connect-stream' | 'grpc' | 'grpc-web' | 'rest';

/**
 * INTERNAL answers that are the prescribed answer to a client's mistake, not a server fault. One case: a message
 * flagged compressed on a call without a `grpc-encoding`, for which the gRPC protocol (PROTOCOL-HTTP2.md, grpc-go)
 * prescribes INTERNAL. (A request that does not decode is INVALID_ARGUMENT everywhere, connect-es's "parse binary"
 * INTERNAL included: src/gateway/grpc/undecodable-request.ts; see docs/hostile-input.md.)
 */
const JUSTIFIED_INTERNAL: readonly { pattern: RegExp; label: string }[] = [
  {
    pattern: /^received compressed envelope, but do not know how to decompress$/,
    label: 'INTERNAL: compressed flag without grpc-encoding (gRPC spec)',
  },
  {
    pattern: /^protocol error: received a compressed message without grpc-encoding$/,
    label: 'INTERNAL: compressed flag without grpc-encoding (gRPC spec)',
  },
];

/**
 * REST answers outside the rule (4xx with a JSON `{error, message}` body) that are Clouddriver's prescribed answers on
 * its artifact routes (docs/spinnaker.md, "Artifacts"; the contract's §4.3 and §4.6), each matched by the request
 * path, the status and the body: names or versions of an account that is not Helm are a 501 (kork's
 * NotImplementedException); fetching a binding-only artifact (`custom/object`, `kubernetes/*`) is Clouddriver's
 * UnsupportedOperationException, a 500 with its message.
 */
const JUSTIFIED_REST: readonly { path: RegExp; status: number; body: RegExp; label: string }[] = [
  {
    path: /^\/artifacts\/account\/[^/]+\/(names|versions)(\?|$)/,
    status: 501,
    body: /"message":"artifact account [^"]+ cannot list artifact names or versions/,
    label: 'HTTP 501: names or versions of an account that is not Helm (Clouddriver)',
  },
  {
    path: /^\/artifacts\/fetch\/?(\?|$)/,
    status: 500,
    body: /"message":"(Custom references are passed on to cloud platforms|Kubernetes artifacts are bound into manifests)/,
    label: 'HTTP 500: fetching a binding-only artifact (Clouddriver)',
  },
];

/** Text that would mean a database or runtime detail reached the client. */
const LEAK =
  /syntax error at or near|relation "|violates .* constraint|duplicate key value|postgres|pglite|drizzle|at Object\.|TypeError|ReferenceError|Cannot read properties/i;

/** Connect's code names (the JSON error `code`). */
const CODE_BY_NAME = new Map<string, Code>(
  Object.entries(Code)
    .filter(([, v]) => typeof v === 'number')
    .map(([k, v]) => [k.replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase(), v as Code]),
);

/** Judges an error code and message from any RPC protocol. */
function judgeCode(code: Code, message: string, via: string): CaseResult {
  if (LEAK.test(message)) return failure(`${via}: ${Code[code]} leaks internals: ${message.slice(0, 200)}`);
  if (code === Code.Unknown) return failure(`${via}: UNKNOWN: ${message.slice(0, 200)}`);
  if (code === Code.Internal) {
    const justified = JUSTIFIED_INTERNAL.find((j) => j.pattern.test(message));
    if (!justified) return failure(`${via}: INTERNAL: ${message.slice(0, 200)}`);
    return typed(`${via}: ${message.slice(0, 120)}`, justified.label);
  }
  return typed(`${via}: ${Code[code]}: ${message.slice(0, 120)}`, Code[code]);
}

/** Judges a reply. `head` marks a HEAD request (an error has headers but no body). */
export function judgeReply(protocol: ReplyProtocol, reply: RawReply, via: string, head = false): CaseResult {
  switch (protocol) {
    case 'rest':
      return judgeRest(reply, via, head);
    case 'connect':
      return judgeConnectUnary(reply, via);
    case 'connect-stream':
      return judgeConnectStream(reply, via);
    case 'grpc':
      return judgeGrpc(reply, via);
    case 'grpc-web':
      return judgeGrpcWeb(reply, via);
  }
}

/**
 * A REST reply: 2xx/3xx accepted; 4xx typed when its body is JSON `{error, message}` (HEAD: a JSON content type);
 * the answers of {@link JUSTIFIED_REST} typed for their `path`; anything else fails.
 */
export function judgeRest(reply: RawReply, via: string, head = false, path?: string): CaseResult {
  if (reply.status >= 200 && reply.status < 400) return accepted(`${via}: ${reply.status}`);
  const text = reply.body.toString('utf8');
  const justified =
    path === undefined ? undefined : JUSTIFIED_REST.find((j) => j.status === reply.status && j.path.test(path) && j.body.test(text));
  if (justified) return typed(`${via}: ${reply.status}`, justified.label);
  if (reply.status >= 500 || reply.status < 200)
    return failure(`${via}: HTTP ${reply.status} ${reply.body.toString('utf8').slice(0, 200)}`);
  if (head) {
    return /application\/json/.test(reply.headers['content-type'] ?? '')
      ? typed(`${via}: ${reply.status}`, `HTTP ${reply.status}`)
      : failure(`${via}: HEAD ${reply.status} without a JSON content type`);
  }
  const body = parseJson(reply.body);
  if (!isRecord(body) || typeof body.error !== 'string' || typeof body.message !== 'string') {
    return failure(`${via}: HTTP ${reply.status} without a JSON {error, message} body: ${reply.body.toString('utf8').slice(0, 200)}`);
  }
  if (LEAK.test(body.message)) return failure(`${via}: HTTP ${reply.status} leaks internals: ${body.message.slice(0, 200)}`);
  return typed(`${via}: ${reply.status} ${body.error}`, `HTTP ${reply.status}`);
}

/**
 * Replies that no protocol handler wrote: the REST fallback's JSON 404 (an unknown method path), or a bodiless 415 /
 * 405 — what the Connect protocol prescribes for a content type or HTTP method no protocol serves.
 */
function judgeNegotiation(reply: RawReply, via: string): CaseResult | undefined {
  if (reply.body.length === 0 && (reply.status === 415 || reply.status === 405))
    return typed(`${via}: HTTP ${reply.status}`, `HTTP ${reply.status}`);
  const body = parseJson(reply.body);
  if (isRecord(body) && typeof body.error === 'string') return judgeRest(reply, via);
  return undefined;
}

function judgeConnectUnary(reply: RawReply, via: string): CaseResult {
  if (reply.status === 200) return accepted(`${via}: 200`);
  const body = parseJson(reply.body);
  if (isRecord(body) && typeof body.code === 'string') {
    const code = CODE_BY_NAME.get(body.code);
    if (code === undefined) return failure(`${via}: unknown Connect code ${JSON.stringify(body.code)}`);
    return judgeCode(code, typeof body.message === 'string' ? body.message : '', via);
  }
  return (
    judgeNegotiation(reply, via) ??
    failure(`${via}: HTTP ${reply.status} is no Connect error: ${reply.body.toString('utf8').slice(0, 200)}`)
  );
}

function judgeConnectStream(reply: RawReply, via: string): CaseResult {
  if (reply.status !== 200) return judgeConnectUnary(reply, via);
  for (const frame of frames(reply.body)) {
    if ((frame.flags & 0x02) === 0) return accepted(`${via}: a stream message`);
    const end = parseJson(frame.data);
    const error = isRecord(end) && isRecord(end.error) ? end.error : undefined;
    if (!error) return accepted(`${via}: stream ended OK`);
    const code = CODE_BY_NAME.get(String(error.code));
    if (code === undefined) return failure(`${via}: unknown Connect code ${JSON.stringify(error.code)}`);
    return judgeCode(code, typeof error.message === 'string' ? error.message : '', via);
  }
  return failure(`${via}: a Connect stream without a message or an end`);
}

function judgeGrpc(reply: RawReply, via: string): CaseResult {
  if (reply.status !== 200) return judgeNegotiation(reply, via) ?? failure(`${via}: HTTP ${reply.status} on a gRPC call`);
  const status = reply.trailers['grpc-status'] ?? reply.headers['grpc-status'];
  if (status === undefined) {
    return frames(reply.body).length > 0 ? accepted(`${via}: a stream message`) : failure(`${via}: gRPC reply without grpc-status`);
  }
  const message = decodeGrpcMessage(reply.trailers['grpc-message'] ?? reply.headers['grpc-message'] ?? '');
  return grpcStatus(Number(status), message, via);
}

function judgeGrpcWeb(reply: RawReply, via: string): CaseResult {
  if (reply.status !== 200) return judgeNegotiation(reply, via) ?? failure(`${via}: HTTP ${reply.status} on a gRPC-web call`);
  if (reply.headers['grpc-status'] !== undefined)
    return grpcStatus(Number(reply.headers['grpc-status']), decodeGrpcMessage(reply.headers['grpc-message'] ?? ''), via);
  for (const frame of frames(reply.body)) {
    if ((frame.flags & 0x80) === 0) return accepted(`${via}: a stream message`);
    const fields = Object.fromEntries(
      Buffer.from(frame.data)
        .toString('utf8')
        .split('\r\n')
        .filter(Boolean)
        .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
    );
    return grpcStatus(Number(fields['grpc-status']), decodeGrpcMessage(fields['grpc-message'] ?? ''), via);
  }
  return failure(`${via}: gRPC-web reply without a status`);
}

function grpcStatus(status: number, message: string, via: string): CaseResult {
  if (!Number.isInteger(status) || status < 0 || status > 16) return failure(`${via}: invalid grpc-status ${status}`);
  if (status === 0) return accepted(`${via}: OK`);
  return judgeCode(status as Code, message, via);
}

/** Length-prefixed frames (gRPC, gRPC-web, Connect streaming) of a body; a trailing partial frame is dropped. */
export function frames(body: Uint8Array): { flags: number; data: Uint8Array }[] {
  const out: { flags: number; data: Uint8Array }[] = [];
  let at = 0;
  while (at + 5 <= body.length) {
    const length = Buffer.from(body.buffer, body.byteOffset + at + 1, 4).readUInt32BE(0);
    if (at + 5 + length > body.length) break;
    out.push({ flags: body[at]!, data: body.subarray(at + 5, at + 5 + length) });
    at += 5 + length;
  }
  return out;
}

/** True once `body` holds at least one whole frame: the point where a server stream has shown it serves. */
export function hasWholeFrame(body: Uint8Array): boolean {
  return frames(body).length > 0;
}

function decodeGrpcMessage(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
