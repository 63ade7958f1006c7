/**
 * Sends one cell of the authorization matrix over the network and reduces the answer to the table's outcome string:
 * REST over HTTP/1.1 (`fetch`), unary and server-streaming RPCs as Connect JSON over HTTP/1.1, bidi RPCs over gRPC
 * (h2c), and agent streams over gRPC or the Connect protocol on HTTP/2. Nothing here throws for a refusal: a refusal
 * is an outcome.
 */
import {
  create,
  fromJson,
  type DescMethod,
  type DescMethodStreaming,
  type DescMethodUnary,
  type DescService,
  type JsonValue,
} from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { AgentService, ConnectRequestSchema, Verdict, type ConnectRequest } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import http from 'node:http';
import net from 'node:net';
import { hello } from '../../testkit/test-agent-stream.js';
import type { Probe } from './matrix-types.js';
import type { FixtureStream } from './matrix-types.js';

/** What the probes need from the running gateway and its fixtures. */
export interface ProbeContext {
  httpUrl: string;
  grpcUrl: string;
  /** Every service the gateway serves, by type name. */
  services: ReadonlyMap<string, DescService>;
  /** Session id and token of each fixture stream. */
  sessions: Record<FixtureStream, { id: string; token: string }>;
  /** Sends an operation result on a fixture stream. */
  sendResult(stream: FixtureStream, result: OperationResultInit): void;
  /** The `Authorization` header reading operations (role read). */
  readerAuthorization: string;
}

/** A result as a fixture stream sends it. */
type OperationResultInit = { id: string; account: string; success: boolean; message: string };

/** Bounds a call's hang (not a timing assertion: a loaded machine may take seconds to answer). */
const TIMEOUT_MS = 30_000;
/**
 * How long a stalled request waits for an answer before its body ends: a refusal from the headers alone comes within
 * it (also on a loaded machine); a request that is let through waits all of it.
 */
const STALL_MS = 10_000;
/** How long a relayed result may take to be recorded; a result that is ignored waits all of it. */
const RECORD_MS = 10_000;

/** Sends `probe` with `authorization` (a full header value, or undefined for none) and returns the outcome. */
export async function sendProbe(ctx: ProbeContext, probe: Probe, authorization: string | undefined): Promise<string> {
  const headers: Record<string, string> = authorization ? { authorization } : {};
  if (probe.kind === 'rest') return restOutcome(ctx, probe, headers);
  if (probe.kind === 'rpc') return rpcOutcome(ctx, probe, headers);
  if (probe.kind === 'result') return resultOutcome(ctx, probe, headers);
  if (probe.kind === 'stalled') return stalledOutcome(ctx, probe, headers);
  return agentOutcome(ctx, probe, headers);
}

async function restOutcome(ctx: ProbeContext, probe: Extract<Probe, { kind: 'rest' }>, headers: Record<string, string>): Promise<string> {
  const body = probe.body === undefined ? undefined : substitute(JSON.stringify(probe.body), ctx);
  const all = { ...headers, ...probe.headers, ...(body ? { 'content-type': 'application/json' } : {}) };
  const { status, text } = probe.raw
    ? await rawRequest(ctx.httpUrl, probe.method, probe.path, all, body)
    : await fetch(new URL(probe.path, ctx.httpUrl), {
        method: probe.method,
        headers: all,
        body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }).then(async (res) => ({ status: res.status, text: await res.text() }));
  if (status < 400) return probe.secret === undefined ? String(status) : `${status} ${redaction(text, probe.secret)}`;
  let error = '?';
  try {
    // JSON `{error, message}`, or a Kubernetes Status (`/k8s`), named by its reason.
    const parsed = JSON.parse(text) as { error?: unknown; kind?: unknown; reason?: unknown };
    error = String((parsed.kind === 'Status' ? parsed.reason : parsed.error) ?? '?');
  } catch {
    error = 'non-json';
  }
  return `${status} ${error}`;
}

/** An HTTP/1.1 request whose target is `path` byte for byte. */
function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: string | undefined,
): Promise<{ status: number; text: string }> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: url.hostname, port: url.port, method, path, headers, agent: false, timeout: TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

/** Replaces `$session:<stream>` / `$token:<stream>` with the fixture stream's values. */
function substitute(text: string, ctx: ProbeContext): string {
  return text.replace(/\$(session|token):(agentAResume|agentAStandby|agentA|agentB)/g, (_m, what: string, stream: FixtureStream) =>
    what === 'session' ? ctx.sessions[stream].id : ctx.sessions[stream].token,
  );
}

/** `redacted` when the answer shows the redaction marker and not the secret value (nor its base64), `LEAKED` otherwise. */
function redaction(text: string, secret: string): string {
  if (text.includes(secret) || text.includes(Buffer.from(secret).toString('base64'))) return 'LEAKED';
  return text.includes('<redacted>') ? 'redacted' : 'LEAKED (no redaction marker)';
}

function codeName(err: unknown): string {
  return Code[ConnectError.from(err).code] ?? 'Unknown';
}

async function rpcOutcome(ctx: ProbeContext, probe: Extract<Probe, { kind: 'rpc' }>, headers: Record<string, string>): Promise<string> {
  const service = ctx.services.get(probe.service);
  const method: DescMethod | undefined = service?.methods.find((m) => m.name === probe.method);
  if (!service || !method) return `no such method ${probe.service}/${probe.method}`;
  const transport: Transport =
    probe.transport === 'grpc'
      ? createGrpcTransport({ baseUrl: ctx.grpcUrl })
      : createConnectTransport({ baseUrl: ctx.httpUrl, httpVersion: '1.1' });
  const message = fromJson(method.input, probe.message as JsonValue);
  const abort = new AbortController();
  const options = { headers, signal: abort.signal, timeoutMs: TIMEOUT_MS };
  try {
    let answer: unknown;
    if (method.methodKind === 'unary') {
      answer = (await transport.unary(method as DescMethodUnary, options.signal, options.timeoutMs, headers, message)).message;
    } else {
      const input = method.methodKind === 'server_streaming' ? once(message) : untilAborted(message, abort.signal);
      const res = await transport.stream(method as DescMethodStreaming, options.signal, options.timeoutMs, headers, input);
      for await (const m of res.message) {
        answer = m;
        break;
      }
    }
    if (probe.secret === undefined) return 'OK';
    return `OK ${redaction(
      JSON.stringify(answer, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
      probe.secret,
    )}`;
  } catch (err) {
    return codeName(err);
  } finally {
    abort.abort();
  }
}

async function* once<T>(message: T): AsyncIterable<T> {
  yield message;
}

/** Yields one message, then keeps the request side open until aborted (a bidi call answering per request). */
async function* untilAborted<T>(message: T, signal: AbortSignal): AsyncIterable<T> {
  yield message;
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
}

async function agentOutcome(ctx: ProbeContext, probe: Extract<Probe, { kind: 'agent' }>, headers: Record<string, string>): Promise<string> {
  const transport: Transport =
    probe.transport === 'grpc'
      ? createGrpcTransport({ baseUrl: ctx.grpcUrl })
      : createConnectTransport({ baseUrl: ctx.grpcUrl, httpVersion: '2' });
  const client = createClient(AgentService, transport);
  const abort = new AbortController();
  const resume = probe.resume
    ? { resumeSessionId: ctx.sessions[probe.resume.session].id, resumeSessionToken: ctx.sessions[probe.resume.token].token }
    : {};
  const first = create(ConnectRequestSchema, {
    message: hello(
      probe.agentId,
      probe.accounts.map((name) => ({ name })),
      resume,
    ),
  } as never);
  try {
    for await (const res of client.connect(untilAborted(first, abort.signal), { headers, signal: abort.signal, timeoutMs: TIMEOUT_MS })) {
      if (res.message.case === 'heartbeat') continue;
      if (res.message.case !== 'welcome') return `unexpected ${res.message.case}`;
      if (!probe.verdicts) return 'OK';
      return `OK ${Verdict[res.message.value.accounts[0]?.verdict ?? Verdict.UNSPECIFIED]}`;
    }
    return 'ended without a welcome';
  } catch (err) {
    return codeName(err);
  } finally {
    abort.abort();
  }
}

async function resultOutcome(
  ctx: ProbeContext,
  probe: Extract<Probe, { kind: 'result' }>,
  headers: Record<string, string>,
): Promise<string> {
  const operations = createClient(OperationService, createConnectTransport({ baseUrl: ctx.httpUrl, httpVersion: '1.1' }));
  const account = (await operations.getOperation({ id: probe.operationId }, { headers: { authorization: ctx.readerAuthorization } }))
    .operation!.account;
  // A valid answer to the fixture's patch of ConfigMap x (the result rules: exactly the target object).
  const result = {
    id: probe.operationId,
    account,
    success: true,
    statusCode: 200,
    message: probe.marker,
    objects: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' } }],
  };
  if ('fixture' in probe.from) {
    ctx.sendResult(probe.from.fixture, result);
  } else {
    const client = createClient(AgentService, createGrpcTransport({ baseUrl: ctx.grpcUrl }));
    const abort = new AbortController();
    const pending: ConnectRequest[] = [
      create(ConnectRequestSchema, { message: hello(probe.from.agentId, [{ name: probe.from.account }]) } as never),
    ];
    let wake: (() => void) | undefined;
    const requests = (async function* () {
      while (!abort.signal.aborted) {
        const next = pending.shift();
        if (next) yield next;
        else await new Promise<void>((resolve) => (wake = resolve));
      }
    })();
    try {
      for await (const res of client.connect(requests, { headers, signal: abort.signal, timeoutMs: TIMEOUT_MS })) {
        if (res.message.case !== 'welcome') continue;
        pending.push(create(ConnectRequestSchema, { message: { case: 'operationResult', value: result } }));
        wake?.();
        break;
      }
    } catch (err) {
      return codeName(err);
    }
    await new Promise((r) => setTimeout(r, 200));
    abort.abort();
    wake?.();
  }
  const deadline = Date.now() + RECORD_MS;
  for (;;) {
    const op = (await operations.getOperation({ id: probe.operationId }, { headers: { authorization: ctx.readerAuthorization } }))
      .operation!;
    if (op.result?.message === probe.marker) return 'recorded';
    if (Date.now() > deadline) return 'ignored';
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Sends half of a chunked Connect JSON body and waits (at most {@link STALL_MS}) for an answer; without one, sends
 * the rest and reads the answer then. The connection asks to close after the response, so its end marks the answer.
 */
async function stalledOutcome(
  ctx: ProbeContext,
  probe: Extract<Probe, { kind: 'stalled' }>,
  headers: Record<string, string>,
): Promise<string> {
  const body = Buffer.from(JSON.stringify(probe.message));
  const half = Math.max(1, body.length >> 1);
  const chunk = (b: Buffer) => `${b.length.toString(16)}\r\n${b.toString('latin1')}\r\n`;
  const url = new URL(ctx.httpUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => {});
  let text = '';
  let bodyEnded = false;
  let answeredBeforeEnd: boolean | undefined;
  const answered = new Promise<void>((resolve) => {
    socket.on('data', (d: Buffer) => {
      answeredBeforeEnd ??= !bodyEnded;
      text += d.toString('latin1');
    });
    socket.on('close', () => resolve());
  });
  const extra = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  socket.write(
    `POST /${probe.service}/${probe.method} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nconnection: close\r\ntransfer-encoding: chunked\r\n${extra}\r\n`,
  );
  socket.write(chunk(body.subarray(0, half)));
  const timeout = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());
  await Promise.race([answered, timeout(STALL_MS), new Promise<void>((resolve) => socket.once('data', () => resolve()))]);
  if (answeredBeforeEnd === undefined) {
    bodyEnded = true;
    socket.write(`${chunk(body.subarray(half))}0\r\n\r\n`);
  }
  await Promise.race([answered, timeout(TIMEOUT_MS)]);
  socket.destroy();
  const status = /^HTTP\/1\.1 (\d+)/.exec(text)?.[1];
  if (!status) return 'no answer';
  let code = 'OK';
  if (status !== '200') {
    const json = /\{[\s\S]*\}/.exec(text.slice(text.indexOf('\r\n\r\n')))?.[0] ?? '{}';
    const name = String((JSON.parse(json) as { code?: unknown }).code ?? 'unknown');
    code = name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());
  }
  return `${code} ${answeredBeforeEnd ? 'before' : 'after'} the body ended`;
}
