/**
 * No work before authentication (docs/security.md): Connect, gRPC and gRPC-web calls are refused from their headers
 * while the body is still on its way — over HTTP/1.1 and HTTP/2, in each protocol's own error form — and the body is
 * never read; HTTP/2 advertises a bounded number of concurrent streams; connections that send nothing, or only refused
 * requests, are closed; beyond the bound of unproven connections new ones are closed at once. Real sockets throughout.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const TOKEN = 'reader-token-0123456789abcdef';
const secure = (limits: GatewayConfigInput['limits'] = {}): GatewayConfigInput => ({
  insecure: false,
  auth: { tokens: [{ subject: 'reader', token: TOKEN }] },
  authorization: { rules: [{ kind: 'token' as const, subject: '^reader$', roles: ['read'] }] },
  limits,
});
const LIST = '/outpost.api.v1.ObjectService/ListObjects';

/** Resolves when the socket closes; rejects after `ms` (a bound on a hang, not a timing assertion). */
function closed(socket: net.Socket | http2.ClientHttp2Session, ms = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    if (socket.destroyed) return resolve();
    const timer = setTimeout(() => reject(new Error('the connection was not closed')), ms);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Opens a raw TCP connection. */
function tcp(url: string): Promise<net.Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => resolve(s));
    s.once('error', reject);
  });
}

/** Sends a request's headers and part of a chunked body, never the end; resolves with what the server answered. */
async function stalledHttp1(
  url: string,
  contentType: string,
  bodyBytes: number,
): Promise<{ answer: string; closedBeforeBodyEnded: boolean }> {
  const s = await tcp(url);
  const chunk = Buffer.alloc(bodyBytes, 0x20);
  let answer = '';
  s.on('data', (d) => (answer += d.toString('latin1')));
  s.on('error', () => {});
  const done = closed(s);
  s.write(`POST ${LIST} HTTP/1.1\r\nHost: x\r\nContent-Type: ${contentType}\r\nTransfer-Encoding: chunked\r\n\r\n`);
  s.write(`${chunk.length.toString(16)}\r\n`);
  s.write(chunk);
  s.write('\r\n');
  await done;
  return { answer, closedBeforeBodyEnded: true };
}

/** An HTTP/2 request whose body never ends; resolves with the response headers and whether the stream ended. */
function stalledHttp2(session: http2.ClientHttp2Session, contentType: string, extra: Record<string, string> = {}) {
  return new Promise<{ headers: http2.IncomingHttpHeaders; body: Buffer; rstCode: number }>((resolve, reject) => {
    const req = session.request({ ':method': 'POST', ':path': LIST, 'content-type': contentType, ...extra }, { endStream: false });
    const chunks: Buffer[] = [];
    let headers: http2.IncomingHttpHeaders = {};
    req.on('response', (h) => (headers = h));
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('error', () => {});
    req.on('close', () => resolve({ headers, body: Buffer.concat(chunks), rstCode: req.rstCode ?? 0 }));
    req.write(Buffer.alloc(32 * 1024, 0x20));
    setTimeout(() => reject(new Error('the stream was not answered')), 20_000).unref();
  });
}

describe('credentials are checked before any body is read', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', secure({ maxConcurrentStreams: 7, maxRefusedRequestsPerConnection: 5 }));
  });
  after(() => t?.close());

  test('HTTP/1.1: a Connect call with a stalled body gets 401 at once and the connection closes', async () => {
    const { answer } = await stalledHttp1(t.gateway.httpUrl, 'application/json', 256 * 1024);
    assert.match(answer, /^HTTP\/1\.1 401 /);
    assert.match(answer, /"code":"unauthenticated"/);
  });

  test('HTTP/2: gRPC, gRPC-web, Connect unary and Connect streaming are refused in their own form, and the stream is reset', async () => {
    const session = http2.connect(t.gateway.grpcUrl);
    session.on('error', () => {});
    try {
      const grpc = await stalledHttp2(session, 'application/grpc');
      assert.equal(grpc.headers['grpc-status'], '16');
      assert.match(String(grpc.headers['grpc-message']), /authentication required/);
      const web = await stalledHttp2(session, 'application/grpc-web+proto');
      assert.equal(web.headers['grpc-status'], '16');
      const unary = await stalledHttp2(session, 'application/json');
      assert.equal(unary.headers[':status'], 401);
      assert.equal(JSON.parse(unary.body.toString()).code, 'unauthenticated');
      const streaming = await stalledHttp2(session, 'application/connect+json');
      assert.equal(streaming.headers[':status'], 200);
      assert.equal(streaming.body[0], 0b10, 'an end-stream message');
      assert.equal(JSON.parse(streaming.body.subarray(5).toString()).error.code, 'unauthenticated');
      // A wrong token is refused the same way (and a right one answers).
      const wrong = await stalledHttp2(session, 'application/grpc', { authorization: 'Bearer not-the-token-0123456789' });
      assert.equal(wrong.headers['grpc-status'], '16');
    } finally {
      session.destroy();
    }
    const ok = await fetch(`${t.gateway.httpUrl}${LIST}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: '{}',
    });
    assert.equal(ok.status, 200);
  });

  test('HTTP/2 advertises the configured concurrent-stream limit', async () => {
    const session = http2.connect(t.gateway.grpcUrl);
    session.on('error', () => {});
    await new Promise<void>((resolve) => session.once('remoteSettings', () => resolve()));
    assert.equal(session.remoteSettings.maxConcurrentStreams, 7);
    session.destroy();
  });

  test('a connection that makes only refused requests is closed after maxRefusedRequestsPerConnection', async () => {
    const session = http2.connect(t.gateway.grpcUrl);
    session.on('error', () => {});
    const done = closed(session);
    for (let i = 0; i < 5; i++) await stalledHttp2(session, 'application/grpc').catch(() => {});
    await done;
  });
});

describe('connections that prove nothing are bounded', () => {
  let t: TestGateway;
  before(async () => {
    // The idle bound leaves a loaded machine time to prove a connection (and to open one beyond the limit) first.
    t = await startTestGateway('pglite', secure({ idleConnectionSeconds: 3, maxUnauthenticatedConnections: 3 }));
  });
  after(() => t?.close());

  test('an idle TCP connection and an idle HTTP/2 session are closed; an authenticated one stays', async () => {
    const idle = await tcp(t.gateway.httpUrl);
    idle.on('error', () => {});
    const idleH2 = http2.connect(t.gateway.grpcUrl);
    idleH2.on('error', () => {});
    // A TCP connection to the HTTP/2 port that never sends the preface.
    const silentH2c = await tcp(t.gateway.grpcUrl);
    silentH2c.on('error', () => {});
    await Promise.all([closed(idle), closed(idleH2), closed(silentH2c)]);

    const proven = http2.connect(t.gateway.grpcUrl);
    proven.on('error', () => {});
    const answered = await new Promise<number>((resolve, reject) => {
      const req = proven.request({
        ':method': 'POST',
        ':path': LIST,
        'content-type': 'application/json',
        authorization: `Bearer ${TOKEN}`,
      });
      req.on('response', (h) => resolve(Number(h[':status'])));
      req.on('error', reject);
      req.end('{}');
    });
    assert.equal(answered, 200);
    // Well past the idle bound (which closed the two above), the proven session is still open: a second call works.
    await new Promise((r) => setTimeout(r, 4000));
    assert.equal(proven.closed || proven.destroyed, false);
    proven.destroy();
  });

  test('beyond maxUnauthenticatedConnections new connections are closed at once', async () => {
    const held = await Promise.all([tcp(t.gateway.httpUrl), tcp(t.gateway.httpUrl), tcp(t.gateway.httpUrl)]);
    for (const s of held) s.on('error', () => {});
    const extra = await tcp(t.gateway.httpUrl);
    extra.on('error', () => {});
    let heldClosedFirst = false;
    for (const s of held) s.once('close', () => (heldClosedFirst ||= !extra.destroyed));
    await closed(extra);
    assert.equal(heldClosedFirst, false, 'the extra connection was closed before the held ones timed out');
    for (const s of held) s.destroy();
  });
});
