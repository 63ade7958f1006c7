/**
 * Hostile agent streams at the wire level, over a raw HTTP/2 client: random bytes in and out of frames; Hellos mutated
 * byte by byte or carrying hostile values in well-formed protobuf; broken framing (truncated frames, length prefixes
 * past the 4 MiB limit, bad flags, compression lies, gzip bombs, a real oversized message); and headers no agent sends
 * (content types, encodings, timeouts, methods, HTTP/1.1, malformed credentials).
 */
import { create, toBinary, toJsonString } from '@bufbuild/protobuf';
import { gzipSync } from 'node:zlib';
import { ConnectRequestSchema, type ConnectRequest } from '../../../src/gen/outpost/agent/v1/agent_pb.js';
import { encodeMessage } from '../../../src/gateway/grpc/grpc-wire.js';
import type { Rng } from '../../../testkit/rng.js';
import { concat, mutateBytes, randomBytes } from '../byte-mutations.js';
import { guarded, headerSafe, type HostileCase, type HostileCategory } from '../hostile-case.js';
import { hostileString } from '../hostile-strings.js';
import type { HostileTarget } from '../hostile-target.js';
import { http1Request, http2Request } from '../raw-http.js';
import { AGENT_PATH, frameOf, judgeAgentStream, uniqueTag, validHello } from '../agent-messages.js';

const GRPC_HEADERS = { 'content-type': 'application/grpc', te: 'trailers' };

/** One raw exchange on the agent stream path over HTTP/2, judged; `payloads` are what the frames carry. */
function exchange(
  category: HostileCategory,
  name: string,
  build: () => {
    chunks: Uint8Array[];
    payloads: (Uint8Array | string)[];
    headers?: Record<string, string>;
    method?: string;
    http1?: boolean;
  },
): HostileCase {
  return {
    category,
    name,
    run: (target: HostileTarget) =>
      guarded(name, async () => {
        const { chunks, payloads, headers = GRPC_HEADERS, method = 'POST', http1 = false } = build();
        const send = http1 ? http1Request : http2Request;
        const reply = await send(http1 ? target.httpUrl : target.grpcUrl, { method, path: AGENT_PATH, headers, chunks, timeoutMs: 30_000 });
        return judgeAgentStream(reply, payloads, name);
      }),
  };
}

function randomBytesCase(rng: Rng): HostileCase {
  const shape = rng.int(0, 2);
  if (shape === 0) {
    const bytes = randomBytes(rng, 300);
    return exchange('agent stream: random bytes', `unframed random bytes (${bytes.length})`, () => ({ chunks: [bytes], payloads: [] }));
  }
  const payloads = Array.from({ length: shape === 1 ? 1 : rng.int(2, 5) }, () => randomBytes(rng, 200));
  return exchange('agent stream: random bytes', `${payloads.length} frame(s) of random protobuf`, () => ({
    chunks: payloads.map((p) => frameOf(p)),
    payloads,
  }));
}

/** A hostile value in one field of an otherwise valid Hello (still well-formed protobuf). */
function hostileHello(rng: Rng, tag: string): { message: ConnectRequest; how: string } {
  const message = validHello(rng, tag);
  const hello = message.message.value as Extract<ConnectRequest['message'], { case: 'hello' }>['value'];
  const account = rng.pick(hello.accounts);
  const text = hostileString(rng);
  const choice = rng.int(0, 13);
  const fields: [string, () => void][] = [
    ['agent_id', () => (hello.agentId = text)],
    ['zone', () => (hello.zone = text)],
    ['version', () => (hello.version = text)],
    ['replicas', () => (hello.replicas = rng.pick([-1, 0, 2147483647, -2147483648]))],
    ['account name', () => (account.name = text)],
    ['api_host', () => (account.apiHost = text)],
    ['ca_fingerprint', () => (account.caFingerprint = text)],
    ['kubernetes_version', () => (account.kubernetesVersion = text)],
    ['namespace', () => account.namespaces.push(text)],
    [
      'kind',
      () =>
        account.kinds.push({
          $typeName: 'outpost.agent.v1.KindInfo',
          apiVersion: text,
          kind: hostileString(rng),
          resource: hostileString(rng),
          namespaced: rng.chance(0.5),
        }),
    ],
    [
      'skipped kind reason',
      () =>
        account.skippedKinds.push({ $typeName: 'outpost.agent.v1.SkippedKind', apiVersion: 'v1', kind: text, reason: hostileString(rng) }),
    ],
    ['property', () => (account.properties[text] = hostileString(rng))],
    ['account error', () => (account.error = text)],
    ['resume session', () => ((hello.resumeSessionId = text), (hello.resumeSessionToken = hostileString(rng)))],
  ];
  const [field, apply] = fields[choice]!;
  apply();
  if (rng.chance(0.1)) {
    hello.accounts.push(...Array.from({ length: rng.pick([1, 1001]) }, () => structuredClone(account)));
    return { message, how: `${field} hostile and accounts repeated` };
  }
  return { message, how: `${field} = ${JSON.stringify(text.slice(0, 30))}` };
}

function mutatedHelloCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  if (rng.chance(0.4)) {
    const { message, how } = hostileHello(rng, tag);
    const payload = toBinary(ConnectRequestSchema, message);
    return exchange('agent stream: mutated hello', `hello with ${how}`, () => ({ chunks: [frameOf(payload)], payloads: [payload] }));
  }
  const base = toBinary(ConnectRequestSchema, validHello(rng, tag));
  const { bytes, how } = mutateBytes(rng, base);
  const withHeartbeat = rng.chance(0.3);
  const heartbeat = toBinary(
    ConnectRequestSchema,
    create(ConnectRequestSchema, { message: { case: 'heartbeat', value: { agentId: 'x' } } }),
  );
  return exchange('agent stream: mutated hello', `hello ${how}${withHeartbeat ? ' + heartbeat' : ''}`, () => ({
    chunks: withHeartbeat ? [frameOf(bytes), frameOf(heartbeat)] : [frameOf(bytes)],
    payloads: [bytes],
  }));
}

function framingCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  const hello = toBinary(ConnectRequestSchema, validHello(rng, tag));
  const frame = encodeMessage(hello);
  const prefix = (flags: number, length: number) => {
    const p = Buffer.alloc(5);
    p[0] = flags;
    p.writeUInt32BE(length >>> 0, 1);
    return p;
  };
  const gz = { ...GRPC_HEADERS, 'grpc-encoding': 'gzip' };
  const c = 'agent stream: framing' as const;
  switch (rng.int(0, 10)) {
    case 0: {
      const at = rng.int(1, frame.length - 1);
      return exchange(c, `hello frame cut at ${at}/${frame.length}`, () => ({ chunks: [frame.subarray(0, at)], payloads: [] }));
    }
    case 1: {
      const length = rng.pick([4 * 1024 * 1024 + 1, 0x7fffffff, 0xffffffff, rng.int(4 * 1024 * 1024 + 1, 0xfffffff0)]);
      return exchange(c, `length prefix ${length}`, () => ({ chunks: [prefix(0, length), randomBytes(rng, 64)], payloads: [] }));
    }
    case 2: {
      const flags = rng.pick([0x02, 0x80, 0xff, 0x03, rng.int(2, 255)]);
      return exchange(c, `frame flags 0x${flags.toString(16)}`, () => ({
        chunks: [concat(prefix(flags, hello.length), hello)],
        payloads: [],
      }));
    }
    case 3:
      return exchange(c, 'compressed flag without grpc-encoding', () => ({
        chunks: [concat(prefix(1, hello.length), hello)],
        payloads: [],
      }));
    case 4: {
      const junk = randomBytes(rng, 100);
      return exchange(c, 'gzip flag on bytes that are not gzip', () => ({
        chunks: [concat(prefix(1, junk.length), junk)],
        payloads: [],
        headers: gz,
      }));
    }
    case 5: {
      const inflated = rng.pick([4 * 1024 * 1024 + 1, 8 * 1024 * 1024, 16 * 1024 * 1024]);
      const bomb = gzipSync(Buffer.alloc(inflated));
      return exchange(c, `gzip bomb inflating to ${inflated}`, () => ({
        chunks: [concat(prefix(1, bomb.length), bomb)],
        payloads: [],
        headers: gz,
      }));
    }
    case 6: {
      const mutated = mutateBytes(rng, hello);
      const packed = gzipSync(mutated.bytes);
      return exchange(c, `gzip-compressed hello ${mutated.how}`, () => ({
        chunks: [concat(prefix(1, packed.length), packed)],
        payloads: [packed],
        headers: gz,
      }));
    }
    case 7: {
      const size = rng.int(1, 7);
      const pieces: Uint8Array[] = [];
      for (let at = 0; at < frame.length; at += size) pieces.push(frame.subarray(at, at + size));
      return exchange(c, `hello frame in ${pieces.length} pieces of ${size} bytes`, () => ({ chunks: pieces, payloads: [hello] }));
    }
    case 8:
      return exchange(c, 'empty frame, then the hello', () => ({ chunks: [prefix(0, 0), frame], payloads: [hello] }));
    case 9:
      return exchange(c, 'hello, then a frame claiming more bytes than follow', () => ({
        chunks: [frame, prefix(0, 1000), randomBytes(rng, 50)],
        payloads: [hello],
      }));
    default: {
      if (rng.chance(0.8)) return exchange(c, 'no frame at all', () => ({ chunks: [], payloads: [] }));
      // allocated when the case runs: a long run must not hold every large payload from the start
      const length = 4 * 1024 * 1024 + rng.int(1, 1000);
      return exchange(c, `a real ${length}-byte message`, () => ({
        chunks: [prefix(0, length), Buffer.alloc(length, 0x41)],
        payloads: [],
      }));
    }
  }
}

function headersCase(rng: Rng): HostileCase {
  const tag = uniqueTag(rng);
  const message = validHello(rng, tag);
  const hello = toBinary(ConnectRequestSchema, message);
  const json = toJsonString(ConnectRequestSchema, message);
  const c = 'agent stream: headers' as const;
  const hostileValue = () => headerSafe(hostileString(rng)).slice(0, 200);
  switch (rng.int(0, 8)) {
    case 0: {
      const type = rng.pick([
        'application/json',
        'text/plain',
        'application/xml',
        'multipart/form-data',
        'application/grpc+xml',
        'application/protobuf',
        hostileValue(),
      ]);
      return exchange(c, `content-type ${JSON.stringify(type)}`, () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { ...GRPC_HEADERS, 'content-type': type },
      }));
    }
    case 1: {
      const jsonBody = rng.chance(0.5);
      const body = jsonBody ? new TextEncoder().encode(rng.chance(0.5) ? json : json.slice(0, rng.int(0, json.length))) : hello;
      return exchange(c, `gRPC-JSON with ${jsonBody ? 'a JSON' : 'a binary'} hello`, () => ({
        chunks: [encodeMessage(body)],
        payloads: [jsonBody ? new TextDecoder().decode(body) : hello],
        headers: { ...GRPC_HEADERS, 'content-type': 'application/grpc+json' },
      }));
    }
    case 2: {
      const type = rng.pick([
        'application/grpc-web',
        'application/grpc-web+proto',
        'application/connect+proto',
        'application/connect+json',
      ]);
      const payload = /json/.test(type) ? new TextEncoder().encode(json) : hello;
      return exchange(c, `${type} hello`, () => ({
        chunks: [encodeMessage(payload)],
        payloads: [/json/.test(type) ? json : hello],
        headers: { 'content-type': type },
      }));
    }
    case 3: {
      const encoding = rng.pick(['snappy', 'deflate', 'br', 'GZIP', '', 'identity, gzip', hostileValue()]);
      return exchange(c, `grpc-encoding ${JSON.stringify(encoding)}`, () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { ...GRPC_HEADERS, 'grpc-encoding': encoding },
      }));
    }
    case 4: {
      const timeout = rng.pick(['1n', '1u', '1m', '0S', '-1S', '999999999H', '1.5S', 'S', '100', hostileValue()]);
      return exchange(c, `grpc-timeout ${JSON.stringify(timeout)}`, () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { ...GRPC_HEADERS, 'grpc-timeout': timeout },
      }));
    }
    case 5: {
      const method = rng.pick(['GET', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
      return exchange(c, `${method} on the stream path`, () => ({
        chunks: method === 'GET' ? [] : [frameOf(hello)],
        payloads: [hello],
        method,
      }));
    }
    case 6:
      return exchange(c, 'gRPC over HTTP/1.1', () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { 'content-type': 'application/grpc' },
        http1: true,
      }));
    case 7: {
      const authorization = rng.pick([
        'Bearer',
        'Bearer ',
        `Bearer ${hostileValue()}`,
        'Basic dXNlcjpwYXNz',
        hostileValue(),
        `Bearer ${'x'.repeat(rng.int(5000, 60_000))}`,
      ]);
      return exchange(c, `authorization ${JSON.stringify(authorization.slice(0, 30))}`, () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { ...GRPC_HEADERS, authorization },
      }));
    }
    default: {
      const name = rng.pick([
        'grpc-accept-encoding',
        'connect-protocol-version',
        'x-forwarded-for',
        'grpc-message',
        'grpc-status',
        'user-agent',
        'x-outpost-reconnect',
      ]);
      const value = hostileValue();
      return exchange(c, `header ${name}: ${JSON.stringify(value.slice(0, 30))}`, () => ({
        chunks: [frameOf(hello)],
        payloads: [hello],
        headers: { ...GRPC_HEADERS, [name]: value },
      }));
    }
  }
}

/** Case factories of the wire-level agent stream categories. */
export const AGENT_STREAM_WIRE_CASES = {
  'agent stream: random bytes': randomBytesCase,
  'agent stream: mutated hello': mutatedHelloCase,
  'agent stream: framing': framingCase,
  'agent stream: headers': headersCase,
} satisfies Partial<Record<HostileCategory, (rng: Rng) => HostileCase>>;
