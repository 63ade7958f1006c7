/**
 * The agent stream's own gRPC endpoint (src/gateway/agents/agent-stream-endpoint.ts): real clients in every form the
 * gateway accepts — gRPC with and without gzip through the fast path, Connect protocol and gRPC-JSON through
 * connect-node — and a raw HTTP/2 client sending what no well-behaved client sends (bad flags, a length beyond the
 * limit, a truncated message, bytes that are not a message, a bad grpc-timeout, an unknown compression). Each gets the
 * gRPC status a gRPC server owes it, and nothing is written.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { create, toBinary } from '@bufbuild/protobuf';
import { createClient, type Transport } from '@connectrpc/connect';
import { compressionGzip, createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { AgentService, ConnectRequestSchema } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import { Code, hello } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const PATH = '/outpost.agent.v1.AgentService/Connect';

/** Opens a stream with `transport`, sends a Hello, returns the first response's kind and ends cleanly. */
async function welcomeOver(transport: Transport, agentId: string, account: string): Promise<string | undefined> {
  const client = createClient(AgentService, transport);
  let sent = false;
  const requests = (async function* () {
    yield create(ConnectRequestSchema, { message: hello(agentId, [{ name: account }]) });
    sent = true;
    await new Promise((r) => setTimeout(r, 300));
  })();
  for await (const res of client.connect(requests)) {
    assert.ok(sent);
    return res.message.case;
  }
  return undefined;
}

/** What a raw HTTP/2 exchange ended with: response headers, trailers (if any), body bytes. */
interface RawResult {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  body: Buffer;
}

/** One raw request on the gRPC port: `chunks` written in order, then the request side ends (unless `keepOpen`). */
async function raw(url: string, headers: Record<string, string>, chunks: Buffer[]): Promise<RawResult> {
  const session = http2.connect(url);
  try {
    return await new Promise<RawResult>((resolve, reject) => {
      const req = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc', te: 'trailers', ...headers });
      const result: RawResult = { headers: {}, trailers: {}, body: Buffer.alloc(0) };
      req.on('response', (h) => (result.headers = h));
      req.on('trailers', (t) => (result.trailers = t));
      req.on('data', (d: Buffer) => (result.body = Buffer.concat([result.body, d])));
      req.on('end', () => resolve(result));
      req.on('error', reject);
      for (const c of chunks) req.write(c);
      req.end();
    });
  } finally {
    session.close();
  }
}

/** The gRPC status of a raw result: from the trailers, or from the headers of a trailers-only response. */
function statusOf(r: RawResult): { code: number; message: string } {
  const source = r.trailers['grpc-status'] !== undefined ? r.trailers : r.headers;
  return { code: Number(source['grpc-status']), message: decodeURIComponent(String(source['grpc-message'] ?? '')) };
}

const helloFrame = (agentId: string, account: string) =>
  encodeMessage(toBinary(ConnectRequestSchema, create(ConnectRequestSchema, { message: hello(agentId, [{ name: account }]) })));

describe('agent stream endpoint', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite');
  });
  after(async () => {
    await t?.close();
  });
  const accountRows = async (name: string) => (await t.query(`select 1 from accounts where name = '${name}'`)).length;

  test('gRPC (fast path), gzip-compressed gRPC, Connect protocol and gRPC-JSON all reach the session', async () => {
    const url = t.gateway.grpcUrl;
    assert.equal(await welcomeOver(createGrpcTransport({ baseUrl: url }), 'ep-grpc', 'ep-grpc'), 'welcome');
    assert.equal(
      await welcomeOver(createGrpcTransport({ baseUrl: url, sendCompression: compressionGzip, compressMinBytes: 0 }), 'ep-gzip', 'ep-gzip'),
      'welcome',
    );
    assert.equal(await welcomeOver(createConnectTransport({ baseUrl: url, httpVersion: '2' }), 'ep-connect', 'ep-connect'), 'welcome');
    assert.equal(await welcomeOver(createGrpcTransport({ baseUrl: url, useBinaryFormat: false }), 'ep-json', 'ep-json'), 'welcome');
    for (const name of ['ep-grpc', 'ep-gzip', 'ep-connect', 'ep-json']) assert.equal(await accountRows(name), 1, name);
    // The fast path and connect-node's route both name their streams gRPC ones (the Connect form is an RPC stream too).
    const transports = await t.query<{ agent_id: string; transport: string }>(
      `select agent_id, transport from agent_sessions where agent_id in ('ep-grpc', 'ep-gzip', 'ep-connect', 'ep-json') order by agent_id`,
    );
    assert.deepEqual(
      transports.map((r) => [r.agent_id, r.transport]),
      [
        ['ep-connect', 'grpc'],
        ['ep-grpc', 'grpc'],
        ['ep-gzip', 'grpc'],
        ['ep-json', 'grpc'],
      ],
    );
  });

  test('a well-formed raw exchange: headers, the Welcome as a length-prefixed message, then OK trailers', async () => {
    const r = await raw(t.gateway.grpcUrl, {}, [helloFrame('ep-raw', 'ep-raw')]);
    assert.equal(r.headers[':status'], 200);
    assert.match(String(r.headers['content-type']), /^application\/grpc/);
    assert.equal(r.body[0], 0, 'uncompressed');
    assert.equal(r.body.readUInt32BE(1), r.body.length - 5, 'one whole message');
    assert.deepEqual(statusOf(r), { code: 0, message: '' });
  });

  test('malformed input ends the call with the right status and writes nothing', async () => {
    const url = t.gateway.grpcUrl;
    const cases: [string, Record<string, string>, Buffer[], Code, RegExp][] = [
      ['bad flags', {}, [Buffer.from([0x80, 0, 0, 0, 1, 0])], Code.InvalidArgument, /invalid message flags/],
      ['length beyond the limit', {}, [Buffer.from([0, 0x10, 0, 0, 0])], Code.ResourceExhausted, /larger than configured readMaxBytes/],
      ['truncated message', {}, [helloFrame('ep-trunc', 'ep-trunc').subarray(0, 20)], Code.InvalidArgument, /ended inside a message/],
      [
        'not a message',
        {},
        [encodeMessage(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]))],
        Code.InvalidArgument,
        /cannot decode the message/,
      ],
      [
        'compressed without grpc-encoding',
        {},
        [Buffer.concat([Buffer.from([1, 0, 0, 0, 3]), Buffer.from('abc')])],
        Code.Internal,
        /without grpc-encoding/,
      ],
      [
        'gzip flag on bytes that are not gzip',
        { 'grpc-encoding': 'gzip' },
        [Buffer.concat([Buffer.from([1, 0, 0, 0, 3]), Buffer.from('abc')])],
        Code.InvalidArgument,
        /cannot decompress/,
      ],
      [
        'unknown compression',
        { 'grpc-encoding': 'snappy' },
        [helloFrame('ep-snappy', 'ep-snappy')],
        Code.Unimplemented,
        /unsupported grpc-encoding "snappy"/,
      ],
      [
        'bad grpc-timeout',
        { 'grpc-timeout': 'soon' },
        [helloFrame('ep-timeout', 'ep-timeout')],
        Code.InvalidArgument,
        /invalid grpc-timeout/,
      ],
    ];
    for (const [what, headers, chunks, code, message] of cases) {
      const r = await raw(url, headers, chunks);
      const status = statusOf(r);
      assert.equal(status.code, code, `${what}: ${JSON.stringify(status)}`);
      assert.match(status.message, message, what);
    }
    for (const name of ['ep-trunc', 'ep-snappy', 'ep-timeout']) assert.equal(await accountRows(name), 0, name);
  });

  test('a gzip-compressed message bigger than the limit once inflated is refused RESOURCE_EXHAUSTED', async () => {
    const big = gzipSync(Buffer.alloc(5 * 1024 * 1024, 1));
    const frame = Buffer.concat([Buffer.from([1, 0, 0, 0, 0]), big]);
    frame.writeUInt32BE(big.length, 1);
    const r = await raw(t.gateway.grpcUrl, { 'grpc-encoding': 'gzip' }, [frame]);
    assert.equal(statusOf(r).code, Code.ResourceExhausted);
  });

  test('grpc-timeout ends an open stream DEADLINE_EXCEEDED', async () => {
    const session = http2.connect(t.gateway.grpcUrl);
    try {
      const status = await new Promise<{ code: number; message: string }>((resolve, reject) => {
        const req = session.request({ ':method': 'POST', ':path': PATH, 'content-type': 'application/grpc', 'grpc-timeout': '300m' });
        const result: RawResult = { headers: {}, trailers: {}, body: Buffer.alloc(0) };
        req.on('response', (h) => (result.headers = h));
        req.on('trailers', (tr) => (result.trailers = tr));
        req.on('data', () => {});
        req.on('end', () => resolve(statusOf(result)));
        req.on('error', reject);
        req.write(helloFrame('ep-deadline', 'ep-deadline'));
      });
      assert.equal(status.code, Code.DeadlineExceeded, JSON.stringify(status));
    } finally {
      session.close();
    }
  });
});
