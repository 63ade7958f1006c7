/**
 * The suite's instrument checked against a plain `node:http2` server: the raw client must tell the three ways a call
 * can end apart (Trailers-Only, headers + messages + trailers, a status in a first HEADERS block without END_STREAM),
 * report resets, decode percent-encoded `grpc-message`, and frame requests exactly as PROTOCOL-HTTP2 says — otherwise a
 * failing Trailers-Only case would prove nothing about the gateway.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { frameMessage, openRawCall } from './grpc-wire.js';

describe('the raw gRPC client', () => {
  let server: http2.Http2Server;
  let url: string;
  const received: { headers: http2.IncomingHttpHeaders; body: Buffer }[] = [];
  before(async () => {
    server = http2.createServer();
    server.on('stream', (stream, headers) => {
      stream.on('error', () => {});
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      const path = String(headers[':path']);
      const done = () => received.push({ headers, body: Buffer.concat(chunks) });
      if (path === '/trailers-only') {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '16', 'grpc-message': 'bad%20token%20%C3%A9' },
          { endStream: true },
        );
        done();
      } else if (path === '/trailers') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '14', 'grpc-message': 'bye', 'x-outpost-reconnect': 'now' }));
        stream.write(frameMessage(new Uint8Array([8, 1])));
        stream.end(frameMessage(new Uint8Array([8, 2])));
      } else if (path === '/status-in-headers') {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '9', 'grpc-message': 'x' });
        stream.end();
      } else if (path === '/reset') {
        stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR);
      } else if (path === '/echo') {
        stream.on('end', () => {
          done();
          stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '0' }, { endStream: true });
        });
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  test('a HEADERS frame with END_STREAM is Trailers-Only; grpc-message is percent-decoded', async () => {
    const o = await openRawCall(url, { path: '/trailers-only' }).ended;
    assert.equal(o.form, 'trailers-only');
    assert.equal(o.trailersOnly, true);
    assert.equal(o.grpcStatus, 16);
    assert.equal(o.grpcMessage, 'bad token é');
  });

  test('headers, messages and trailers: the messages are read and every trailer reported', async () => {
    const call = openRawCall(url, { path: '/trailers' });
    assert.deepEqual([...(await call.read())!], [8, 1]);
    assert.deepEqual([...(await call.read())!], [8, 2]);
    const o = await call.ended;
    assert.equal(o.form, 'trailers');
    assert.equal(o.messages, 2);
    assert.equal(o.grpcStatus, 14);
    assert.equal(o.trailers['x-outpost-reconnect'], 'now');
  });

  test('a status in a first HEADERS block without END_STREAM is told apart from Trailers-Only', async () => {
    const o = await openRawCall(url, { path: '/status-in-headers' }).ended;
    assert.equal(o.form, 'status-in-headers');
    assert.equal(o.trailersOnly, false);
    assert.equal(o.grpcStatus, 9);
  });

  test('a reset before any status is reported as one', async () => {
    const o = await openRawCall(url, { path: '/reset' }).ended;
    assert.equal(o.form, 'reset');
    assert.equal(o.grpcStatus, undefined);
    assert.equal(o.rstCode, http2.constants.NGHTTP2_INTERNAL_ERROR);
  });

  test('requests carry the gRPC headers and length-prefixed messages, the compressed flag and gzip when asked', async () => {
    const call = openRawCall(url, { path: '/echo', headers: { 'grpc-encoding': 'gzip', authorization: 'Bearer t' } });
    call.writeMessage(new Uint8Array([1, 2, 3]));
    call.writeMessage(new Uint8Array([4, 5]), { compressed: true });
    call.end();
    await call.ended;
    const { headers, body } = received.at(-1)!;
    assert.equal(headers['content-type'], 'application/grpc+proto');
    assert.equal(headers.te, 'trailers');
    assert.equal(headers['grpc-encoding'], 'gzip');
    assert.equal(headers.authorization, 'Bearer t');
    assert.deepEqual([...body.subarray(0, 8)], [0, 0, 0, 0, 3, 1, 2, 3]);
    assert.equal(body[8], 1, 'compressed flag');
    const len = body.readUInt32BE(9);
    assert.deepEqual([...gunzipSync(body.subarray(13, 13 + len))], [4, 5]);
  });
});
