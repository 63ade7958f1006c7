/**
 * A gRPC call the gateway ends with an error before any message is a Trailers-Only response: ONE HEADERS frame that
 * carries :status, content-type, grpc-status and grpc-message and has END_STREAM set (PROTOCOL-HTTP2.md). Not a
 * HEADERS frame without END_STREAM followed by an empty DATA frame that ends the stream: C-core clients (Python,
 * C++, Ruby, PHP) never read a status from that, and hang until they half-close. Checked on the frames a raw
 * node:http2 client receives — the flags of the response HEADERS, no trailers frame, no DATA bytes — for every path
 * that answers before a message: the agent stream's own endpoint, the refusals from the headers (pre-admission) and
 * connect-node's client RPCs. Also: the request side is still open (bidi cases) when the answer arrives, a refusal
 * from the headers resets the stream with NO_ERROR once answered, and gRPC-web over HTTP/1.1 is still answered.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { Code } from '@connectrpc/connect';
import { encodeMessage } from '../../src/gateway/grpc/grpc-wire.js';
import { authorizationOf, STATUS_CASES, statusCaseConfig, type StatusCase } from '../conformance/grpc-status-cases.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const { NGHTTP2_FLAG_END_STREAM } = http2.constants;

/** What the client saw of one call, frame by frame as far as node:http2 tells. */
interface Seen {
  headers: http2.IncomingHttpHeaders;
  /** The flags of the response HEADERS frame. */
  headerFlags: number;
  /** Trailers, when a second HEADERS frame came. */
  trailers?: http2.IncomingHttpHeaders;
  dataBytes: number;
  /** True while the client had not ended its request side when the response ended. */
  requestOpenAtEnd: boolean;
  /** RST_STREAM code once the stream closed (0: NO_ERROR, or no reset). */
  rstCode: number;
}

/** Makes the call on a fresh session; resolves once the stream closed (the client closes it after the response ended). */
function call(url: string, c: StatusCase): Promise<Seen> {
  const session = http2.connect(url);
  session.on('error', () => {});
  const authorization = authorizationOf(c);
  return new Promise<Seen>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${c.name}: no answer within 20 s`)), 20_000);
    const req = session.request(
      {
        ':method': 'POST',
        ':path': c.path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...(authorization ? { authorization } : {}),
      },
      { endStream: false },
    );
    const seen: Seen = { headers: {}, headerFlags: 0, dataBytes: 0, requestOpenAtEnd: false, rstCode: -1 };
    req.on('response', (headers, flags) => {
      seen.headers = headers;
      seen.headerFlags = flags;
    });
    req.on('trailers', (trailers) => (seen.trailers = trailers));
    req.on('data', (d: Buffer) => (seen.dataBytes += d.length));
    req.on('error', () => {});
    req.on('end', () => {
      seen.requestOpenAtEnd = !req.writableEnded;
      // The server's stream is done; close ours (a client that got its status would).
      if (!req.closed) req.close();
    });
    req.on('close', () => {
      clearTimeout(timer);
      seen.rstCode = req.rstCode ?? 0;
      session.destroy();
      resolve(seen);
    });
    for (const m of c.messages) req.write(encodeMessage(m));
    if (c.kind !== 'bidi') req.end();
  });
}

describe('gRPC errors before the first message are Trailers-Only: one HEADERS frame with END_STREAM', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', statusCaseConfig);
  });
  after(() => t?.close());

  for (const c of STATUS_CASES) {
    test(c.name, async () => {
      const seen = await call(t.gateway.grpcUrl, c);
      const status = Number(seen.headers['grpc-status']);
      assert.equal(
        status,
        c.code,
        `grpc-status ${seen.headers['grpc-status']} (${Code[status]}), expected ${Code[c.code]}: ${JSON.stringify(seen.headers)}`,
      );
      assert.match(decodeURIComponent(String(seen.headers['grpc-message'] ?? '')), c.message);
      assert.equal(seen.headers[':status'], 200);
      assert.match(String(seen.headers['content-type']), /^application\/grpc/);
      assert.ok(
        seen.headerFlags & NGHTTP2_FLAG_END_STREAM,
        `the HEADERS frame must end the stream (flags 0x${seen.headerFlags.toString(16)})`,
      );
      assert.equal(seen.trailers, undefined, 'no trailers frame after a Trailers-Only response');
      assert.equal(seen.dataBytes, 0, 'no DATA bytes');
      if (c.kind === 'bidi') assert.ok(seen.requestOpenAtEnd, 'answered while the request side was still open');
      assert.equal(seen.rstCode, http2.constants.NGHTTP2_NO_ERROR);
    });
  }

  test('gRPC-web over HTTP/1.1, refused from its headers, still gets its status in the response headers', async () => {
    const { hostname, port } = new URL(t.gateway.httpUrl);
    const socket = net.connect(Number(port), hostname);
    socket.on('error', () => {});
    let answer = '';
    socket.on('data', (d) => (answer += d.toString('latin1')));
    const closed = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('the connection was not closed')), 20_000);
      socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
    });
    socket.write(
      'POST /outpost.api.v1.ObjectService/ListObjects HTTP/1.1\r\nHost: x\r\nContent-Type: application/grpc-web+proto\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n\0\0\0\0\0\r\n',
    );
    await closed;
    assert.match(answer, /^HTTP\/1\.1 200 /);
    assert.match(answer, /\r\ngrpc-status: 16\r\n/i);
    assert.match(answer, /\r\ngrpc-message: authentication required/i);
  });
});
