/**
 * Unit tests of the sandbox's SPDY/3.1 layer: the header dictionary, header-block compression both ways (against
 * zlib's own deflate with the dictionary and a sync flush, as Go's spdystream writes), the frame parser on arbitrary splits,
 * and the server session (streams, replies, data, FIN, PING, RST, flow control).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { constants, deflateSync, inflateSync } from 'node:zlib';
import { SPDY3_DICTIONARY } from '../../src/sandbox/spdy/dictionary.js';
import {
  dataFrame,
  FLAG_FIN,
  type Frame,
  FrameParser,
  FrameType,
  pingFrame,
  rstStreamFrame,
  settingsFrame,
  SETTINGS_INITIAL_WINDOW_SIZE,
  synStreamFrame,
  windowUpdateFrame,
} from '../../src/sandbox/spdy/frames.js';
import {
  adler32,
  decodeNameValueBlock,
  encodeNameValueBlock,
  HeaderCompressor,
  HeaderDecompressor,
} from '../../src/sandbox/spdy/header-codec.js';
import { SpdyServerSession, type SpdyStream } from '../../src/sandbox/spdy/session.js';

test('the SPDY/3 dictionary is the 1423 bytes Go spdystream uses', () => {
  assert.equal(SPDY3_DICTIONARY.length, 1423);
  assert.equal(adler32(SPDY3_DICTIONARY), 0xe3c6a7c2);
  assert.ok(SPDY3_DICTIONARY.subarray(0, 11).equals(Buffer.from('\0\0\0\x07options')));
  assert.ok(SPDY3_DICTIONARY.toString('latin1').endsWith(',*,enq=0.'));
});

test('compressed header blocks are one zlib stream a standard inflater reads block by block', () => {
  const c = new HeaderCompressor();
  const blocks = [c.compress({ streamtype: 'error', port: '8080', requestid: '0' }), c.compress({}), c.compress({ a: 'x'.repeat(70000) })];
  const whole = inflateSync(Buffer.concat(blocks), { dictionary: SPDY3_DICTIONARY, finishFlush: constants.Z_SYNC_FLUSH });
  const first = decodeNameValueBlock(whole);
  assert.deepEqual(first, { streamtype: 'error', port: '8080', requestid: '0' });
  const d = new HeaderDecompressor();
  assert.deepEqual(d.decompress(blocks[0]!), { streamtype: 'error', port: '8080', requestid: '0' });
  assert.deepEqual(d.decompress(blocks[1]!), {});
  assert.equal(d.decompress(blocks[2]!).a!.length, 70000);
});

test('the decompressor reads a block zlib compressed with the dictionary and sync-flushed, as Go writes them', () => {
  const headers = { streamtype: 'error', port: '80', requestid: '1' };
  const block = deflateSync(encodeNameValueBlock(headers), {
    dictionary: SPDY3_DICTIONARY,
    level: 9,
    finishFlush: constants.Z_SYNC_FLUSH,
  });
  assert.ok(block.subarray(-4).equals(Buffer.from([0, 0, 0xff, 0xff])), 'a sync flush, not a finished stream');
  assert.deepEqual(new HeaderDecompressor().decompress(block), headers);
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

test('the frame parser cuts frames out of arbitrary pieces', () => {
  const bytes = Buffer.concat([pingFrame(1), dataFrame(3, Buffer.from('hello'), true), rstStreamFrame(5, 5), windowUpdateFrame(0, 1000)]);
  for (const size of [1, 2, 3, 7, 8, 13, bytes.length]) {
    const parser = new FrameParser();
    const frames: Frame[] = [];
    for (let at = 0; at < bytes.length; at += size) frames.push(...parser.push(bytes.subarray(at, at + size)));
    assert.equal(frames.length, 4, `pieces of ${size}`);
    assert.deepEqual(frames[0], { kind: 'control', version: 3, type: FrameType.ping, flags: 0, payload: u32(1) });
    assert.deepEqual(frames[1], { kind: 'data', streamId: 3, flags: FLAG_FIN, data: Buffer.from('hello') });
    assert.equal(parser.pending, 0);
  }
});

/** A client side for the session: its own compressor, and the frames the server sent, parsed. */
function harness() {
  const sent: Frame[] = [];
  const parser = new FrameParser();
  const session = new SpdyServerSession((frame) => sent.push(...parser.push(frame)));
  const compressor = new HeaderCompressor();
  const streams: SpdyStream[] = [];
  session.on('stream', (s: SpdyStream) => streams.push(s));
  const open = (id: number, headers: Record<string, string>) => session.receive(synStreamFrame(id, compressor.compress(headers)));
  return { session, sent, streams, open };
}

test('the session opens streams, replies, carries data both ways and closes on FIN from both sides', () => {
  const { session, sent, streams, open } = harness();
  open(1, { streamtype: 'data', port: '9000', requestid: '0' });
  assert.equal(streams.length, 1);
  const stream = streams[0]!;
  assert.deepEqual(stream.headers, { streamtype: 'data', port: '9000', requestid: '0' });
  const got: Buffer[] = [];
  let ended = false;
  let closed = false;
  stream.on('data', (d: Buffer) => got.push(d));
  stream.on('end', () => (ended = true));
  stream.on('close', () => (closed = true));
  stream.reply();
  assert.equal(sent[0]!.kind === 'control' && sent[0]!.type, FrameType.synReply);
  session.receive(dataFrame(1, Buffer.from('abc')));
  session.receive(dataFrame(1, Buffer.alloc(0), true));
  assert.equal(Buffer.concat(got).toString(), 'abc');
  assert.ok(ended && !closed);
  stream.write(Buffer.alloc(40 * 1024, 1));
  stream.end();
  const data = sent.filter((f): f is Extract<Frame, { kind: 'data' }> => f.kind === 'data');
  assert.equal(
    data.reduce((n, f) => n + f.data.length, 0),
    40 * 1024,
  );
  assert.equal(data.at(-1)!.flags & FLAG_FIN, FLAG_FIN);
  assert.ok(closed);
  assert.equal(session.openStreams, 0);
});

test('PINGs from the client are echoed; even stream ids and data on unknown streams are refused', () => {
  const { session, sent, open } = harness();
  session.receive(pingFrame(7));
  assert.deepEqual(sent.shift(), { kind: 'control', version: 3, type: FrameType.ping, flags: 0, payload: u32(7) });
  open(2, {});
  const rst = sent.shift()!;
  assert.ok(rst.kind === 'control' && rst.type === FrameType.rstStream);
  session.receive(dataFrame(9, Buffer.from('x')));
  const rst2 = sent.shift()!;
  assert.ok(rst2.kind === 'control' && rst2.type === FrameType.rstStream && rst2.payload.readUInt32BE(4) === 2);
});

test('RST_STREAM from the client closes the stream', () => {
  const { session, streams, open } = harness();
  open(1, {});
  let closed = false;
  streams[0]!.on('close', () => (closed = true));
  session.receive(rstStreamFrame(1, 5));
  assert.ok(closed);
});

test('with a flow-controlling peer, sending waits for WINDOW_UPDATE; received data is granted back', () => {
  const { session, sent, streams, open } = harness();
  session.receive(settingsFrame([[SETTINGS_INITIAL_WINDOW_SIZE, 1000]]));
  open(1, {});
  const stream = streams[0]!;
  stream.reply();
  stream.write(Buffer.alloc(3000, 2));
  const bytes = () => sent.filter((f) => f.kind === 'data').reduce((n, f) => n + (f.kind === 'data' ? f.data.length : 0), 0);
  assert.equal(bytes(), 1000);
  session.receive(windowUpdateFrame(1, 1500));
  assert.equal(bytes(), 2500);
  session.receive(windowUpdateFrame(1, 5000));
  assert.equal(bytes(), 3000);
  sent.length = 0;
  session.receive(dataFrame(1, Buffer.alloc(40 * 1024)));
  const updates = sent.filter((f) => f.kind === 'control' && f.type === FrameType.windowUpdate);
  assert.equal(updates.length, 2, 'one for the stream, one for the connection');
});

test('GOAWAY on close, and nothing more is sent after it', () => {
  const { session, sent } = harness();
  session.close();
  const last = sent.at(-1)!;
  assert.ok(last.kind === 'control' && last.type === FrameType.goAway);
  const count = sent.length;
  session.receive(pingFrame(3));
  assert.equal(sent.length, count);
});
