/**
 * Regressions found by the hostile-input suite (test/hostile/): malformed requests that the gateway answered with a
 * bodiless 4xx/5xx, an INTERNAL error, or nothing at all now get a typed error — a JSON `{error, message}` 4xx or a
 * ConnectError with a real code — and change nothing. Protocol-level guards do not depend on the database driver,
 * so this runs on PGlite only.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

/** Writes raw bytes to the HTTP/1.1 port and returns everything the server sent before closing. */
function rawHttp1(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(Buffer.from(text, 'latin1')));
    const chunks: Buffer[] = [];
    socket.on('data', (c) => chunks.push(c));
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', reject);
    socket.setTimeout(30_000, () => socket.destroy(new Error('no answer')));
  });
}

/** One gRPC-JSON unary call over h2c: status and grpc-status/grpc-message from headers or trailers. */
function grpcJson(url: string, path: string, body: string): Promise<{ status: string | undefined; message: string | undefined }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(url);
    session.on('error', reject);
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc+json', te: 'trailers' });
    let found: Record<string, unknown> = {};
    stream.on('response', (h) => (found = { ...found, ...h }));
    stream.on('trailers', (t) => (found = { ...found, ...t }));
    stream.resume();
    stream.on('close', () => {
      session.close();
      resolve({ status: found['grpc-status'] as string | undefined, message: found['grpc-message'] as string | undefined });
    });
    stream.setTimeout(30_000, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    stream.end(encodeMessage(new TextEncoder().encode(body)));
  });
}

describe('malformed requests get typed errors (hostile-input regressions)', () => {
  let t: TestGateway;
  let port: number;
  before(async () => {
    t = await startTestGateway('pglite');
    port = Number(new URL(t.gateway.httpUrl).port);
  });
  after(async () => {
    await t?.close();
  });

  test('a request the HTTP/1.1 parser refuses gets a JSON 400/431 (HEAD: no body), not a bare one', async () => {
    const unknownMethod = await rawHttp1(port, 'FOO /armory/accounts HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.match(unknownMethod, /^HTTP\/1\.1 400 /);
    assert.match(unknownMethod, /\{"error":"bad_request","message":"malformed HTTP request \(HPE_/);
    const rawBytes = await rawHttp1(port, 'HEAD /assets/\xe4\xf0 HTTP/1.1\r\nhost: x\r\n\r\n');
    assert.match(rawBytes, /^HTTP\/1\.1 400 [\s\S]*content-type: application\/json[\s\S]*\r\n\r\n$/);
    const hugeHeader = await rawHttp1(port, `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`);
    assert.match(hugeHeader, /^HTTP\/1\.1 431 [\s\S]*"error":"headers_too_large"/);
  });

  test('gRPC over HTTP/1.1 → 426 with a JSON body (connect-node answered a bodiless 505)', async () => {
    const res = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/grpc' },
      body: Buffer.from(encodeMessage(new Uint8Array())),
    });
    assert.equal(res.status, 426);
    assert.equal((await res.json()).error, 'http2_required');
  });

  test('Connect GET: a message that is not base64 or not gzip → invalid_argument (was INTERNAL)', async () => {
    const base = `${t.gateway.httpUrl}/outpost.api.v1.AccountService/GetAccount?connect=v1&encoding=json`;
    for (const query of ['&base64=1&message=%25%25%25', '&compression=gzip&message=x']) {
      const res = await fetch(base + query);
      assert.equal(res.status, 400, query);
      assert.equal((await res.json()).code, 'invalid_argument', query);
    }
  });

  test('gRPC-JSON whose error message echoes a lone surrogate is answered (it hung: encodeURIComponent threw)', async () => {
    const reply = await grpcJson(t.gateway.grpcUrl, '/outpost.api.v1.AccountService/ListAccounts', '"\\ud800x"');
    assert.equal(reply.status, '3', `grpc-message: ${reply.message}`);
  });

  test('an error message echoing a 70 000-character input still ends with a grpc-status (it overflowed the trailer)', async () => {
    const reply = await grpcJson(t.gateway.grpcUrl, '/grpc.health.v1.Health/Check', JSON.stringify({ service: 'x'.repeat(70_000) }));
    assert.equal(reply.status, '5', `grpc-message: ${reply.message?.slice(0, 100)}`);
    assert.ok(decodeURIComponent(reply.message ?? '').length < 1100);
  });

  test('a JSON body nested 5000 levels deep → 400 (the NUL check recursed and overflowed the stack: 500)', async () => {
    const res = await fetch(`${t.gateway.httpUrl}/armory/accounts/dynamic`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '['.repeat(5000) + ']'.repeat(5000),
    });
    assert.equal(res.status, 400);
    assert.equal((await res.json()).error, 'bad_request');
  });

  test('NUL characters in RPC fields, REST paths and queries → INVALID_ARGUMENT / 400, nothing reaches Postgres', async () => {
    const rpc = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.ObjectService/ListObjects`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ account: 'a', namespace: 'x\u0000' }),
    });
    assert.equal(rpc.status, 400);
    assert.match((await rpc.json()).message, /request\.namespace contains a NUL character/);
    for (const path of ['/armory/agents/a%00b', '/armory/agent/operations/x%00', '/armory/accounts?page=%00']) {
      const res = await fetch(t.gateway.httpUrl + path);
      assert.equal(res.status, 400, path);
      assert.equal((await res.json()).error, 'bad_request', path);
    }
  });
});
