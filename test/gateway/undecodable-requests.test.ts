/**
 * A request message that does not decode is the client's mistake: INVALID_ARGUMENT in every codec path the gateway
 * serves, in each protocol's own error form — Connect unary (binary and JSON, POST and GET, compressed or not; HTTP
 * 400 with a JSON error), Connect streaming (an end-stream error), gRPC (binary, JSON, gzip; unary, server streaming
 * and bidi through connect-node, and the agent stream's own endpoint; grpc-status 3) and gRPC-web (over HTTP/2 and
 * HTTP/1.1; the trailer frame). connect-es answered undecodable binary protobuf with INTERNAL "parse binary: …"
 * (HTTP 500). And the remedy (undecodable-request.ts) blames the client only for the request: an implementation's own
 * INTERNAL error with the same text stays INTERNAL.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { createUndecodableRequestInterceptor, guardUndecodableRequests } from '../../src/gateway/grpc/undecodable-request.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { type HealthRpcServer, startHealthRpcServer } from './health-rpc-server.js';

/** 100 NUL bytes: field number 0, which no protobuf message may have. */
const NULS = Buffer.alloc(100);
const LIST = '/outpost.api.v1.ObjectService/ListObjects';
const WATCH_FLEET = '/outpost.api.v1.FleetService/WatchFleet';
const REFLECTION = '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo';
const AGENT = '/outpost.agent.v1.AgentService/Connect';

const envelope = (data: Uint8Array, flags = 0) => {
  const out = Buffer.alloc(5 + data.length);
  out[0] = flags;
  out.writeUInt32BE(data.length, 1);
  out.set(data, 5);
  return out;
};

/** A reply as read off the wire. */
interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  trailers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP/2 request with its whole body; resolves once the response ended. */
function h2(url: string, path: string, headers: Record<string, string>, body: Buffer | undefined, method = 'POST'): Promise<Reply> {
  const session = http2.connect(url);
  session.on('error', () => {});
  return new Promise<Reply>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${path}: no answer within 20 s`)), 20_000);
    const req = session.request({ ':method': method, ':path': path, ...headers }, { endStream: body === undefined });
    const reply: Reply = { status: 0, headers: {}, trailers: {}, body: Buffer.alloc(0) };
    req.on('response', (h) => {
      reply.headers = h;
      reply.status = Number(h[':status']);
    });
    req.on('trailers', (t) => (reply.trailers = t));
    req.on('data', (d: Buffer) => (reply.body = Buffer.concat([reply.body, d])));
    req.on('error', () => {});
    req.on('close', () => {
      clearTimeout(timer);
      session.destroy();
      resolve(reply);
    });
    if (body !== undefined) req.end(body);
  });
}

/** One HTTP/1.1 request (fetch). */
async function h1(url: string, headers: Record<string, string>, body?: Buffer, method = 'POST'): Promise<Reply> {
  const res = await fetch(url, { method, headers, body: body ? new Uint8Array(body) : undefined, signal: AbortSignal.timeout(20_000) });
  return { status: res.status, headers: Object.fromEntries(res.headers), trailers: {}, body: Buffer.from(await res.arrayBuffer()) };
}

/** Connect's code names (the JSON error `code`). */
const codeName = (code: Code) => Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toLowerCase();

/** The status of a reply in `protocol`'s form, and checks that form. */
function statusOf(protocol: 'connect' | 'connect-stream' | 'grpc' | 'grpc-web', r: Reply): { code: string; message: string } {
  switch (protocol) {
    case 'connect': {
      const error = JSON.parse(r.body.toString('utf8')) as { code: string; message: string };
      assert.match(String(r.headers['content-type']), /^application\/json/);
      return error;
    }
    case 'connect-stream': {
      assert.equal(r.status, 200);
      assert.equal(r.body[0], 0b10, 'an end-stream message');
      const end = JSON.parse(r.body.subarray(5).toString('utf8')) as { error: { code: string; message: string } };
      return end.error;
    }
    case 'grpc': {
      assert.equal(r.status, 200);
      const source = r.trailers['grpc-status'] !== undefined ? r.trailers : r.headers;
      return { code: codeName(Number(source['grpc-status']) as Code), message: decodeURIComponent(String(source['grpc-message'] ?? '')) };
    }
    case 'grpc-web': {
      assert.equal(r.status, 200);
      assert.equal(r.body[0], 0x80, 'a trailer frame');
      const fields = Object.fromEntries(
        r.body
          .subarray(5)
          .toString('utf8')
          .split('\r\n')
          .filter(Boolean)
          .map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      return { code: codeName(Number(fields['grpc-status']) as Code), message: decodeURIComponent(fields['grpc-message'] ?? '') };
    }
  }
}

function assertInvalidArgument(protocol: Parameters<typeof statusOf>[0], r: Reply, what: string, message = /cannot decode the/) {
  const status = statusOf(protocol, r);
  assert.equal(status.code, 'invalid_argument', `${what}: ${JSON.stringify(status)} (HTTP ${r.status})`);
  assert.match(status.message, message, what);
  if (protocol === 'connect') assert.equal(r.status, 400, `${what}: HTTP status`);
}

describe('an undecodable request is INVALID_ARGUMENT in every codec path', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite');
  });
  after(() => t?.close());

  test('Connect unary POST: binary (HTTP/1.1 and HTTP/2, plain and gzip) → HTTP 400 invalid_argument; JSON too', async () => {
    assertInvalidArgument(
      'connect',
      await h1(`${t.gateway.httpUrl}${LIST}`, { 'content-type': 'application/proto' }, NULS),
      'proto over HTTP/1.1',
    );
    assertInvalidArgument('connect', await h2(t.gateway.grpcUrl, LIST, { 'content-type': 'application/proto' }, NULS), 'proto over HTTP/2');
    assertInvalidArgument(
      'connect',
      await h1(`${t.gateway.httpUrl}${LIST}`, { 'content-type': 'application/proto', 'content-encoding': 'gzip' }, gzipSync(NULS)),
      'gzip proto',
    );
    assertInvalidArgument(
      'connect',
      await h1(`${t.gateway.httpUrl}${LIST}`, { 'content-type': 'application/json' }, Buffer.from('{"account":')),
      'JSON',
      /./,
    );
  });

  test('Connect GET: binary (plain and gzip) and JSON messages → HTTP 400 invalid_argument', async () => {
    const get = (query: string) => h1(`${t.gateway.httpUrl}${LIST}?connect=v1&${query}`, {}, undefined, 'GET');
    assertInvalidArgument('connect', await get(`encoding=proto&base64=1&message=${NULS.toString('base64url')}`), 'GET proto');
    assertInvalidArgument(
      'connect',
      await get(`encoding=proto&base64=1&compression=gzip&message=${gzipSync(NULS).toString('base64url')}`),
      'GET gzip proto',
    );
    assertInvalidArgument('connect', await get(`encoding=json&message=${encodeURIComponent('{"account":')}`), 'GET JSON', /./);
  });

  test('Connect streaming: server streaming and bidi, binary and JSON → an invalid_argument end-stream', async () => {
    assertInvalidArgument(
      'connect-stream',
      await h2(t.gateway.grpcUrl, WATCH_FLEET, { 'content-type': 'application/connect+proto' }, envelope(NULS)),
      'WatchFleet proto',
    );
    assertInvalidArgument(
      'connect-stream',
      await h1(`${t.gateway.httpUrl}${WATCH_FLEET}`, { 'content-type': 'application/connect+proto' }, envelope(NULS)),
      'WatchFleet proto, HTTP/1.1',
    );
    assertInvalidArgument(
      'connect-stream',
      await h2(t.gateway.grpcUrl, WATCH_FLEET, { 'content-type': 'application/connect+json' }, envelope(Buffer.from('{"x":'))),
      'WatchFleet JSON',
      /./,
    );
    assertInvalidArgument(
      'connect-stream',
      await h2(t.gateway.grpcUrl, AGENT, { 'content-type': 'application/connect+proto' }, envelope(NULS)),
      'agent stream (Connect)',
    );
  });

  test('gRPC: unary, server streaming and bidi through connect-node, binary, gzip and JSON → grpc-status 3', async () => {
    const grpc = (path: string, type: string, body: Buffer, extra: Record<string, string> = {}) =>
      h2(t.gateway.grpcUrl, path, { 'content-type': type, te: 'trailers', ...extra }, body);
    assertInvalidArgument('grpc', await grpc(LIST, 'application/grpc', envelope(NULS)), 'unary');
    assertInvalidArgument('grpc', await grpc(LIST, 'application/grpc+proto', envelope(NULS)), 'unary +proto');
    assertInvalidArgument(
      'grpc',
      await grpc(LIST, 'application/grpc', envelope(gzipSync(NULS), 1), { 'grpc-encoding': 'gzip' }),
      'unary gzip',
    );
    assertInvalidArgument('grpc', await grpc(LIST, 'application/grpc+json', envelope(Buffer.from('{"account":'))), 'unary JSON', /./);
    assertInvalidArgument('grpc', await grpc(WATCH_FLEET, 'application/grpc', envelope(NULS)), 'server streaming');
    assertInvalidArgument('grpc', await grpc(REFLECTION, 'application/grpc', envelope(NULS)), 'bidi (reflection)');
    assertInvalidArgument(
      'grpc',
      await grpc(AGENT, 'application/grpc+json', envelope(Buffer.from('{"hello":'))),
      'agent stream, gRPC-JSON',
      /./,
    );
  });

  test("gRPC: the agent stream's own endpoint answers grpc-status 3 too", async () => {
    assertInvalidArgument(
      'grpc',
      await h2(t.gateway.grpcUrl, AGENT, { 'content-type': 'application/grpc', te: 'trailers' }, envelope(NULS)),
      'agent stream',
    );
  });

  test('gRPC-web: unary (HTTP/2 and HTTP/1.1), server streaming and bidi → grpc-status 3 in the trailer frame', async () => {
    const type = { 'content-type': 'application/grpc-web+proto' };
    assertInvalidArgument('grpc-web', await h2(t.gateway.grpcUrl, LIST, type, envelope(NULS)), 'unary over HTTP/2');
    assertInvalidArgument('grpc-web', await h1(`${t.gateway.httpUrl}${LIST}`, type, envelope(NULS)), 'unary over HTTP/1.1');
    assertInvalidArgument('grpc-web', await h2(t.gateway.grpcUrl, WATCH_FLEET, type, envelope(NULS)), 'server streaming');
    assertInvalidArgument('grpc-web', await h2(t.gateway.grpcUrl, AGENT, type, envelope(NULS)), 'bidi (agent stream)');
  });
});

describe('only the request is blamed', () => {
  let server: HealthRpcServer;
  let url: string;
  before(async () => {
    // An implementation that fails with the very text connect-es uses for an undecodable request.
    const fail = () => {
      throw new ConnectError('parse binary: a peer answered garbage', Code.Internal);
    };
    server = await startHealthRpcServer(
      { check: fail, watch: fail },
      { interceptors: [createUndecodableRequestInterceptor()], wrapHandler: guardUndecodableRequests },
    );
    url = server.url;
  });
  after(() => server.close());

  test("an implementation's own INTERNAL error stays INTERNAL (unary and streaming, Connect, gRPC and gRPC-web)", async () => {
    const check = '/grpc.health.v1.Health/Check';
    const watch = '/grpc.health.v1.Health/Watch';
    const internal = (protocol: Parameters<typeof statusOf>[0], r: Reply, what: string) => {
      const status = statusOf(protocol, r);
      assert.equal(status.code, 'internal', `${what}: ${JSON.stringify(status)}`);
      assert.match(status.message, /^parse binary: a peer answered garbage$/, what);
    };
    internal('connect', await h2(url, check, { 'content-type': 'application/proto' }, Buffer.alloc(0)), 'Connect unary');
    internal('grpc', await h2(url, check, { 'content-type': 'application/grpc', te: 'trailers' }, envelope(Buffer.alloc(0))), 'gRPC unary');
    internal(
      'grpc-web',
      await h2(url, check, { 'content-type': 'application/grpc-web+proto' }, envelope(Buffer.alloc(0))),
      'gRPC-web unary',
    );
    internal(
      'grpc',
      await h2(url, watch, { 'content-type': 'application/grpc', te: 'trailers' }, envelope(Buffer.alloc(0))),
      'gRPC server streaming',
    );
    internal(
      'connect-stream',
      await h2(url, watch, { 'content-type': 'application/connect+proto' }, envelope(Buffer.alloc(0))),
      'Connect server streaming',
    );
    // And a request that does not decode is still the client's mistake here.
    const undecodable = await h2(url, check, { 'content-type': 'application/grpc', te: 'trailers' }, envelope(NULS));
    assert.equal(statusOf('grpc', undecodable).code, 'invalid_argument');
  });
});
