/**
 * Credit-based flow control of proxied Kubernetes requests: a pump never sends more than the credit granted, pauses
 * its source when the credit is spent and resumes on a grant, splits chunks, ends once everything was sent (also with
 * no credit left for an empty source), and reports a source closed before its end; the receiver grants delivered
 * bytes back in batches and flags a peer that sent more than granted.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createCreditReceiver, pumpWithCredit } from '../../src/shared/kube-credit.js';

function sink() {
  const sent: Buffer[] = [];
  const state = { ended: false, failed: undefined as Error | undefined };
  return {
    sent,
    state,
    total: () => sent.reduce((n, b) => n + b.length, 0),
    sink: {
      send: (chunk: Uint8Array) => sent.push(Buffer.from(chunk)),
      end: () => (state.ended = true),
      fail: (err: Error) => (state.failed = err),
    },
  };
}

const tick = () => new Promise((r) => setImmediate(r));

test('sends no more than the credit, pauses the source, resumes on a grant, ends after the last byte', async () => {
  const source = new PassThrough();
  const s = sink();
  const pump = pumpWithCredit(source, 10, s.sink, 4);
  source.write(Buffer.from('abcdefghijklmnopqrstuvwxyz'));
  source.end();
  await tick();
  assert.equal(s.total(), 10, 'the credit');
  assert.ok(
    s.sent.every((c) => c.length <= 4),
    'chunks of at most maxChunk',
  );
  assert.equal(source.isPaused(), true);
  assert.equal(s.state.ended, false, 'bytes still wait');
  pump.grant(100);
  await tick();
  assert.equal(Buffer.concat(s.sent).toString(), 'abcdefghijklmnopqrstuvwxyz');
  assert.equal(s.state.ended, true);
});

test('an empty source ends even with no credit; a source closed before its end fails', async () => {
  const empty = new PassThrough();
  const a = sink();
  pumpWithCredit(empty, 0, a.sink);
  empty.end();
  await tick();
  assert.equal(a.state.ended, true);

  const broken = new PassThrough();
  const b = sink();
  pumpWithCredit(broken, 100, b.sink);
  broken.write('x');
  broken.destroy();
  await tick();
  assert.equal(b.state.ended, false);
  assert.match(String(b.state.failed?.message), /closed before its end/);
});

test('stop: nothing more is sent', async () => {
  const source = new PassThrough();
  const s = sink();
  const pump = pumpWithCredit(source, 100, s.sink);
  pump.stop();
  source.write('late');
  source.end();
  await tick();
  assert.equal(s.total(), 0);
  assert.equal(s.state.ended, false);
});

test('the receiver grants delivered bytes back in batches and flags a peer that sent more than granted', () => {
  const grants: number[] = [];
  const receiver = createCreditReceiver(100, (n) => grants.push(n));
  assert.equal(receiver.received(60), true);
  receiver.delivered(20);
  assert.deepEqual(grants, [], 'under a quarter of the window: not yet');
  receiver.delivered(40);
  assert.deepEqual(grants, [60]);
  assert.equal(receiver.received(100), true, 'exactly the credit: 40 left + 60 granted');
  assert.equal(receiver.received(1), false, 'one byte more than granted');
});
