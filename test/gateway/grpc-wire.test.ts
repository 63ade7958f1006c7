import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { Code, ConnectError } from '@connectrpc/connect';
import {
  createMessageDecoder,
  encodeGrpcMessage,
  encodeMessage,
  messagePayload,
  parseGrpcTimeout,
  statusTrailers,
} from '../../src/gateway/grpc/grpc-wire.js';

describe('gRPC wire format', () => {
  test('messages split anywhere across chunks come out whole and in order', () => {
    const frames = Buffer.concat([
      encodeMessage(Buffer.from('first')),
      encodeMessage(Buffer.alloc(0)),
      encodeMessage(Buffer.from('third message')),
    ]);
    for (let cut = 1; cut < frames.length; cut++) {
      const decoder = createMessageDecoder(1024);
      const out = [...decoder.push(frames.subarray(0, cut)), ...decoder.push(frames.subarray(cut))];
      assert.deepEqual(
        out.map((m) => Buffer.from(m.data).toString()),
        ['first', '', 'third message'],
        `cut at ${cut}`,
      );
      assert.equal(decoder.partial, false);
    }
    const decoder = createMessageDecoder(1024);
    decoder.push(frames.subarray(0, 7));
    assert.equal(decoder.partial, true);
  });

  test('an oversized length is refused from its prefix; unknown flag bits are refused', () => {
    assert.throws(
      () => createMessageDecoder(10).push(Buffer.from([0, 0, 0, 0, 11])),
      (e: ConnectError) => e.code === Code.ResourceExhausted,
    );
    assert.throws(
      () => createMessageDecoder(10).push(Buffer.from([2, 0, 0, 0, 1, 0])),
      (e: ConnectError) => e.code === Code.InvalidArgument,
    );
  });

  test('gzip payloads are inflated up to the limit', () => {
    const data = gzipSync(Buffer.from('hello'));
    assert.equal(Buffer.from(messagePayload({ compressed: true, data }, 'gzip', 100)).toString(), 'hello');
    assert.throws(
      () => messagePayload({ compressed: true, data: gzipSync(Buffer.alloc(200)) }, 'gzip', 100),
      (e: ConnectError) => e.code === Code.ResourceExhausted,
    );
    assert.throws(
      () => messagePayload({ compressed: true, data }, 'identity', 100),
      (e: ConnectError) => e.code === Code.Internal,
    );
  });

  test('status trailers carry the code, the percent-encoded message and the error metadata', () => {
    assert.deepEqual(statusTrailers(), { 'grpc-status': '0' });
    const err = new ConnectError('bad 100% → "x"\n', Code.Unavailable, { 'x-outpost-reconnect': 'now' });
    assert.deepEqual(statusTrailers(err), {
      'x-outpost-reconnect': 'now',
      'grpc-status': '14',
      'grpc-message': 'bad 100%25 %E2%86%92 "x"%0A',
    });
    assert.equal(decodeURIComponent(encodeGrpcMessage('ünïcode %')), 'ünïcode %');
  });

  test('grpc-timeout units', () => {
    assert.equal(parseGrpcTimeout(undefined), undefined);
    assert.equal(parseGrpcTimeout('2S'), 2000);
    assert.equal(parseGrpcTimeout('1H'), 3_600_000);
    assert.equal(parseGrpcTimeout('1500u'), 1.5);
    assert.ok(Number.isNaN(parseGrpcTimeout('5s')));
    assert.ok(Number.isNaN(parseGrpcTimeout('123456789S')));
  });
});
