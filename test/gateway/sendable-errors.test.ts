/**
 * Every error message the gateway sends can be sent, in every protocol (sendable-errors.ts): a lone UTF-16 surrogate
 * becomes U+FFFD (connect-es's `encodeURIComponent` of `grpc-message` threw on it and the call was never answered) and
 * a message longer than 1000 characters is cut there with "… (N more characters)" (one echoing a huge input
 * overflowed the HTTP/2 trailer). Both for errors raised by implementations and interceptors (unary and streaming) and
 * for those connect-es raises while it decodes a unary request, before any interceptor. And this is done where the
 * gateway writes errors: ConnectError itself is left as the library made it.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { statusTrailers } from '../../src/gateway/grpc/grpc-wire.js';
import { createSendableErrorInterceptor } from '../../src/gateway/http/sendable-errors.js';
import { hasLoneSurrogate } from '../../src/shared/unstorable-text.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { type HealthRpcServer, startHealthRpcServer } from './health-rpc-server.js';

type Protocol = 'connect' | 'connect-stream' | 'grpc' | 'grpc-web';

/** The content type of a JSON request in each protocol. */
const JSON_TYPE: Record<Protocol, string> = {
  connect: 'application/json',
  'connect-stream': 'application/connect+json',
  grpc: 'application/grpc+json',
  'grpc-web': 'application/grpc-web+json',
};

const envelope = (data: Uint8Array, flags = 0) => {
  const out = Buffer.alloc(5 + data.length);
  out[0] = flags;
  out.writeUInt32BE(data.length, 1);
  out.set(data, 5);
  return out;
};

/** One HTTP/2 call of `path` with a JSON request `body` in `protocol`; resolves with its status code and message. */
function call(url: string, protocol: Protocol, path: string, body: string): Promise<{ code: string; message: string }> {
  const session = http2.connect(url);
  session.on('error', () => {});
  const json = Buffer.from(body, 'utf8');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${protocol} ${path}: no answer within 10 s`)), 10_000);
    const grpcLike = protocol === 'grpc' || protocol === 'grpc-web';
    const req = session.request({
      ':method': 'POST',
      ':path': path,
      'content-type': JSON_TYPE[protocol],
      ...(grpcLike ? { te: 'trailers' } : {}),
    });
    let fields: Record<string, unknown> = {};
    let data = Buffer.alloc(0);
    req.on('response', (h) => (fields = { ...fields, ...h }));
    req.on('trailers', (t) => (fields = { ...fields, ...t }));
    req.on('data', (d: Buffer) => (data = Buffer.concat([data, d])));
    req.on('error', () => {});
    req.on('close', () => {
      clearTimeout(timer);
      session.destroy();
      try {
        resolve(statusOf(protocol, fields, data));
      } catch (err) {
        reject(err);
      }
    });
    req.end(protocol === 'connect' ? json : envelope(json));
  });
}

const codeName = (code: Code) => Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

/** The payload of the last frame of an enveloped body, which must carry `flag` (the end-stream or trailer frame). */
function lastFrame(body: Buffer, flag: number, what: string): Buffer {
  let at = 0;
  let last: [number, Buffer] | undefined;
  while (at + 5 <= body.length) {
    const length = body.readUInt32BE(at + 1);
    last = [body[at]!, body.subarray(at + 5, at + 5 + length)];
    at += 5 + length;
  }
  assert.equal(last?.[0], flag, `${what}: the last frame carries the status`);
  return last![1];
}

function statusOf(protocol: Protocol, fields: Record<string, unknown>, body: Buffer): { code: string; message: string } {
  if (protocol === 'connect') return JSON.parse(body.toString('utf8')) as { code: string; message: string };
  if (protocol === 'connect-stream') {
    return (JSON.parse(lastFrame(body, 0b10, protocol).toString('utf8')) as { error: { code: string; message: string } }).error;
  }
  if (protocol === 'grpc-web') {
    for (const line of lastFrame(body, 0x80, protocol).toString('utf8').split('\r\n')) {
      const [key, value] = [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()];
      if (key !== '') fields[key] = value;
    }
  }
  assert.notEqual(fields['grpc-status'], undefined, `${protocol}: a grpc-status`);
  return { code: codeName(Number(fields['grpc-status']) as Code), message: decodeURIComponent(String(fields['grpc-message'] ?? '')) };
}

/** Asserts the message was cut after 1000 characters and is well-formed; returns how many characters were left out. */
function assertCut(message: string, what: string): number {
  const cut = /^([\s\S]{1000})… \((\d+) more characters\)$/.exec(message);
  assert.ok(cut, `${what}: a message of ${message.length} characters: ${message.slice(0, 80)}…`);
  assert.ok(!hasLoneSurrogate(message), `${what}: well-formed`);
  return Number(cut[2]);
}

const PROTOCOLS = ['connect', 'grpc', 'grpc-web'] as const;

describe('error messages are sendable in every protocol (gateway)', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite');
  });
  after(() => t?.close());

  test('a unary request whose JSON decoding error echoes a lone surrogate is answered INVALID_ARGUMENT', async () => {
    for (const protocol of PROTOCOLS) {
      for (const [path, body] of [
        ['/outpost.api.v1.AccountService/ListAccounts', '"\\ud800x"'],
        ['/outpost.api.v1.OperationService/GetOperation', '{"\\udc00": 1}'],
      ] as const) {
        const status = await call(t.gateway.grpcUrl, protocol, path, body);
        assert.equal(status.code, 'invalid_argument', `${protocol} ${path}: ${JSON.stringify(status)}`);
        assert.ok(!hasLoneSurrogate(status.message), `${protocol} ${path}: well-formed`);
      }
    }
  });

  test('a unary request whose JSON decoding error echoes a 5000-character key gets it cut after 1000 characters', async () => {
    for (const protocol of PROTOCOLS) {
      const status = await call(t.gateway.grpcUrl, protocol, '/outpost.api.v1.OperationService/GetOperation', `{"${'k'.repeat(5000)}": 1}`);
      assert.equal(status.code, 'invalid_argument', protocol);
      assert.ok(assertCut(status.message, protocol) > 4000);
    }
  });

  test("an implementation's error echoing a 70 000-character input is cut after 1000 characters", async () => {
    for (const protocol of PROTOCOLS) {
      const status = await call(
        t.gateway.grpcUrl,
        protocol,
        '/grpc.health.v1.Health/Check',
        JSON.stringify({ service: 'x'.repeat(70_000) }),
      );
      assert.equal(status.code, 'not_found', protocol);
      assert.ok(assertCut(status.message, protocol) > 68_000);
    }
  });

  test('ConnectError is left as the library made it: no property added to its prototype, messages kept as given', () => {
    assert.equal(Object.getOwnPropertyDescriptor(ConnectError.prototype, 'rawMessage'), undefined);
    assert.deepEqual(Object.getOwnPropertyNames(ConnectError.prototype).sort(), ['constructor', 'findDetails']);
    const text = `\ud800${'é'.repeat(2000)}`;
    const error = new ConnectError(text, Code.InvalidArgument);
    assert.equal(error.rawMessage, text);
    assert.ok(Object.getOwnPropertyDescriptor(error, 'rawMessage')?.writable, 'a plain data property of the instance');
  });
});

describe('error messages are sendable in every protocol (interceptor)', () => {
  const MESSAGE = `bad \ud800 input: ${'é'.repeat(3000)}`;
  const fail = () => {
    throw new ConnectError(MESSAGE, Code.FailedPrecondition, { 'x-kept': 'yes' });
  };
  let server: HealthRpcServer;
  let url: string;
  before(async () => {
    server = await startHealthRpcServer(
      {
        check: fail,
        // A stream that fails after its first message: the error reaches the interceptor while the response is read.
        async *watch() {
          yield { status: 1 };
          fail();
        },
      },
      { interceptors: [createSendableErrorInterceptor()] },
    );
    url = server.url;
  });
  after(() => server.close());

  test('unary and streaming, Connect, gRPC and gRPC-web: the code is kept, the message made well-formed and cut', async () => {
    const cases: [Protocol, string][] = [
      ['connect', 'Check'],
      ['grpc', 'Check'],
      ['grpc-web', 'Check'],
      ['connect-stream', 'Watch'],
      ['grpc', 'Watch'],
      ['grpc-web', 'Watch'],
    ];
    for (const [protocol, method] of cases) {
      const status = await call(url, protocol, `/grpc.health.v1.Health/${method}`, '{}');
      const what = `${protocol} ${method}`;
      assert.equal(status.code, 'failed_precondition', `${what}: ${JSON.stringify(status).slice(0, 200)}`);
      assert.equal(assertCut(status.message, what), MESSAGE.length - 1000);
      assert.ok(status.message.startsWith('bad \ufffd input: '), what);
    }
  });

  test("the agent stream endpoint's status trailers: well-formed and cut, metadata kept", () => {
    const trailers = statusTrailers(new ConnectError(MESSAGE, Code.InvalidArgument, { 'x-kept': 'yes' }));
    assert.equal(trailers['grpc-status'], '3');
    assert.equal(trailers['x-kept'], 'yes');
    assert.equal(assertCut(decodeURIComponent(trailers['grpc-message']!), 'statusTrailers'), MESSAGE.length - 1000);
  });
});
