/**
 * The demo's log lines as sentences: level, component, message and the error's message; non-JSON passes through.
 */
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';
import { createSentenceStream, sentenceOf } from '../../src/demo/sentence-log.js';

test('a pino line becomes a sentence', () => {
  assert.equal(
    sentenceOf('{"level":40,"component":"gateway","msg":"INSECURE MODE: careful"}'),
    'warning (gateway): INSECURE MODE: careful',
  );
  assert.equal(sentenceOf('{"level":50,"msg":"could not start","err":{"message":"EADDRINUSE"}}'), 'error: could not start: EADDRINUSE');
  assert.equal(sentenceOf('plain text'), 'plain text');
});

test('the stream splits chunks into lines', async () => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString('utf8')));
  const stream = createSentenceStream(out);
  stream.write('{"level":30,"msg":"one"}\n{"level":30,');
  stream.write('"msg":"two"}\n');
  await new Promise((resolve) => stream.end(resolve));
  assert.equal(text, 'info: one\ninfo: two\n');
});
