/**
 * The JSON value splitter the agent checks answers about Secrets with: values cut anywhere across chunks (inside
 * strings holding braces, quotes and escapes, inside multi-byte characters) come out whole, one JSON line each; text
 * that is not a sequence of JSON objects, a value past the bound and an answer ending inside a value fail the stream.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { test } from 'node:test';
import { createJsonValuesTransform } from '../../src/agent/kube-proxy/json-values.js';

async function run(chunks: Buffer[], map: (value: unknown) => unknown = (v) => v, max = 1 << 20): Promise<string> {
  const transform = createJsonValuesTransform(map, max);
  Readable.from(chunks).pipe(transform);
  let out = '';
  for await (const chunk of transform) out += (chunk as Buffer).toString('utf8');
  return out;
}

test('values split at every byte come out whole', async () => {
  const values = [
    { type: 'ADDED', object: { kind: 'Table', rows: [{ cells: ['a}b{', 'q"uote', 'back\\slash\\"}'] }] } },
    { type: 'MODIFIED', object: { kind: 'Status', message: 'ünïcödé ✓ {"x":[1,2]}' } },
    [1, { nested: [] }],
  ];
  const text = Buffer.from(`  ${values.map((v) => JSON.stringify(v, null, 1)).join('\n')}\n`);
  for (let cut = 1; cut < text.length; cut++) {
    const out = await run([text.subarray(0, cut), text.subarray(cut)]);
    assert.deepEqual(
      out
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
      values,
      `cut at ${cut}`,
    );
  }
  const bytes = [...text].map((b) => Buffer.from([b]));
  assert.equal((await run(bytes)).trim().split('\n').length, 3);
});

test('each value goes through the map; a throw fails the stream', async () => {
  const out = await run([Buffer.from('{"a":1}{"a":2}')], (v) => ({ ...(v as object), seen: true }));
  assert.equal(out, '{"a":1,"seen":true}\n{"a":2,"seen":true}\n');
  await assert.rejects(
    run([Buffer.from('{"a":1}{"a":2}')], (v) => {
      if ((v as { a: number }).a === 2) throw new Error('refused value');
      return v;
    }),
    /refused value/,
  );
});

test('what is not a sequence of JSON objects, a value past the bound and a cut value fail', async () => {
  await assert.rejects(run([Buffer.from('not json')]), /not a sequence of JSON objects/);
  await assert.rejects(run([Buffer.from('{"a":1} 42')]), /not a sequence of JSON objects/);
  await assert.rejects(run([Buffer.from('{"a":1,}')]), SyntaxError);
  await assert.rejects(
    run([Buffer.from(`{"a":"${'x'.repeat(100)}"}`)], (v) => v, 50),
    /larger than 50 bytes/,
  );
  await assert.rejects(
    run([Buffer.from('{"a":'), Buffer.from('"x'.repeat(40))], (v) => v, 50),
    /larger than 50 bytes/,
  );
  await assert.rejects(run([Buffer.from('{"a":{"b":1}')]), /ended inside a JSON value/);
  assert.equal(await run([]), '');
});
