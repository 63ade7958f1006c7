/**
 * The Secret values an operation request carries (src/shared/request-secret-values.ts), which the agent and the
 * gateway redact from a failed operation's message: every Secret in an apply's manifests however its kind is spelled
 * (escapes included), read as JSON first and YAML else, broken documents and alias bombs skipped, nesting up to its
 * limit; the last-applied annotation's values (or the annotation whole when it is not JSON); and what a patch of a
 * Secret sets. A value missed here is shown in plaintext in the stored message.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { manifestSecretValues, patchSecretValues } from '../../src/shared/request-secret-values.js';
import { LAST_APPLIED_ANNOTATION } from '../../src/shared/secret-scrub.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const sorted = (values: string[]) => [...values].sort();
const json = (value: unknown) => JSON.stringify(value);

describe('the values in an apply', () => {
  test('a kind spelled without the word "secret" is still read: YAML escapes, a double-quoted line continuation, JSON \\u', () => {
    for (const kind of ['"\\x53ecret"', '"\\u0053ecret"', '"\\U00000053ecret"', '"Sec\\\n  ret"']) {
      assert.deepEqual(manifestSecretValues(`kind: ${kind}\nstringData: {a: the-value}\n`), ['the-value'], kind);
    }
    assert.deepEqual(manifestSecretValues('{"kind": "\\u0053ecret", "stringData": {"a": "the-value"}}'), ['the-value']);
  });

  test('JSON is read as JSON: with a duplicate key the last one counts, where YAML would refuse the document', () => {
    const text = '{"kind": "Secret", "stringData": {"a": "first-value"}, "stringData": {"a": "second-value"}}';
    assert.deepEqual(manifestSecretValues(text), ['second-value']);
  });

  test('a YAML document with an error, or with an alias bomb, is skipped (the agent refuses it); the others are read', () => {
    const broken = 'kind: Secret\nstringData: {a: in-a-broken-document}\nkind: Secret\n';
    const aliases = Array.from({ length: 101 }, () => '*a').join(', ');
    const bomb = `kind: Secret\nstringData: {a: in-a-bomb}\nanchor: &a [x, x]\nuses: [${aliases}]\n`;
    const good = 'kind: Secret\nstringData: {b: in-a-good-document}\n';
    assert.deepEqual(manifestSecretValues(`${broken}---\n${good}`), ['in-a-good-document']);
    assert.deepEqual(manifestSecretValues(`${bomb}---\n${good}`), ['in-a-good-document']);
  });

  test('an object whose kind is not a string is no Secret, and the objects after it are still read', () => {
    const text = json([
      { kind: 5, stringData: { a: 'not-a-secret-value' } },
      { kind: 'Secret', stringData: { a: 'later-value' } },
    ]);
    assert.deepEqual(manifestSecretValues(text), ['later-value']);
  });

  test('a Secret nested 64 levels deep, in lists or in objects, is read; one level deeper is not', () => {
    const secret = { kind: 'Secret', stringData: { a: 'deep-value' } };
    const inLists = (levels: number): unknown => (levels === 0 ? secret : [inLists(levels - 1)]);
    const inObjects = (levels: number): unknown => (levels === 0 ? secret : { wrapped: inObjects(levels - 1) });
    assert.deepEqual(manifestSecretValues(json(inLists(64))), ['deep-value']);
    assert.deepEqual(manifestSecretValues(json(inLists(65))), []);
    assert.deepEqual(manifestSecretValues(json(inObjects(64))), ['deep-value']);
    assert.deepEqual(manifestSecretValues(json(inObjects(65))), []);
  });

  test('the last-applied annotation: its values when it is a JSON object, the annotation whole when it is not JSON', () => {
    const withAnnotation = (annotation: unknown) =>
      json([
        { kind: 'Secret', metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: annotation } }, stringData: { a: 'own-value' } },
        { kind: 'Secret', stringData: { b: 'next-value' } },
      ]);
    assert.deepEqual(manifestSecretValues(withAnnotation(json({ data: { p: b64('applied-value') } }))), [
      'own-value',
      b64('applied-value'),
      'applied-value',
      'next-value',
    ]);
    assert.deepEqual(manifestSecretValues(withAnnotation('password: not-json')), ['own-value', 'password: not-json', 'next-value']);
    for (const nothing of ['', '  ', 'null', '"a-json-string"', '["a-json-list"]', 7, { data: { p: 'x' } }]) {
      assert.deepEqual(manifestSecretValues(withAnnotation(nothing)), ['own-value', 'next-value'], json(nothing));
    }
  });

  test('a Secret without metadata, without annotations, or with either not a map has only its own values', () => {
    for (const metadata of [undefined, null, 'text', { name: 's' }, { annotations: null }, { annotations: 'text' }]) {
      const text = json([
        { kind: 'Secret', metadata, stringData: { a: 'own-value' } },
        { kind: 'Secret', stringData: { b: 'next-value' } },
      ]);
      assert.deepEqual(manifestSecretValues(text), ['own-value', 'next-value'], json(metadata));
    }
  });
});

describe('the values in a patch of a Secret', () => {
  test('every string a JSON patch sets, in lists and maps too; none from an op without a value or that is no object', () => {
    const patch = json([
      null,
      'add',
      { op: 'remove', path: '/metadata/labels/gone' },
      { op: 'add', path: '/metadata/labels/a', value: ['first-item-value', 'second-item-value', 7, true, null] },
      { op: 'add', path: '/metadata/annotations', value: { a: { b: 'nested-value' } } },
    ]);
    assert.deepEqual(patchSecretValues('Secret', patch), ['first-item-value', 'second-item-value', 'nested-value']);
  });

  test('values set under /data, in any case, are taken decoded too; a path that only contains "data" is not /data', () => {
    const setting = (path: string, value: unknown) => patchSecretValues('Secret', json([{ op: 'add', path, value }]));
    assert.deepEqual(setting('/data/p', b64('decoded-value')), [b64('decoded-value'), 'decoded-value']);
    assert.deepEqual(setting('/DATA/p', b64('decoded-value')), [b64('decoded-value'), 'decoded-value']);
    assert.deepEqual(setting('/data', { p: b64('decoded-value') }), [b64('decoded-value'), 'decoded-value']);
    for (const path of ['/metadata/labels/data', '/database', '/stringData/p'])
      assert.deepEqual(setting(path, b64('decoded-value')), [b64('decoded-value')], path);
    assert.deepEqual(
      patchSecretValues('Secret', json([{ op: 'add', path: ['/data/p'], value: b64('decoded-value') }])),
      [b64('decoded-value')],
      'a path that is not a string (the cluster refuses it) is not /data',
    );
  });

  test('a value that is a whole Secret, or holds one, gives its values as a Secret: decoded data and last-applied values', () => {
    const annotations = { [LAST_APPLIED_ANNOTATION]: json({ stringData: { q: 'applied-value' } }) };
    const whole = patchSecretValues(
      'Secret',
      json([{ op: 'replace', path: '', value: { metadata: { annotations }, data: { p: b64('whole-object-value') } } }]),
    );
    assert.deepEqual(
      sorted(whole),
      sorted([annotations[LAST_APPLIED_ANNOTATION], b64('whole-object-value'), 'whole-object-value', 'applied-value']),
    );
    const list = patchSecretValues(
      'Secret',
      json([{ op: 'add', path: '/metadata/annotations/x', value: { items: [{ kind: 'Secret', data: { p: b64('listed-value') } }] } }]),
    );
    assert.deepEqual(sorted(list), sorted(['Secret', b64('listed-value'), 'listed-value']));
  });

  test("a merge patch's data and stringData values and its last-applied annotation's, in JSON or YAML", () => {
    const merge = { data: { p: b64('merge-value') }, metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: 'not json' }, name: 'n' } };
    assert.deepEqual(patchSecretValues('secrets', json(merge)), [b64('merge-value'), 'merge-value', 'not json']);
    assert.deepEqual(patchSecretValues('v1/Secret', 'stringData:\n  p: yaml-patch-value\n'), ['yaml-patch-value']);
  });

  test('no value for another kind, for text that is no patch, or for a patch that is neither a list nor an object', () => {
    assert.deepEqual(patchSecretValues('ConfigMap', json({ data: { p: 'config-value' } })), []);
    for (const patch of ['', '  ', 'a: [', 'null', '"just-a-string"', '42'])
      assert.deepEqual(patchSecretValues('Secret', patch), [], patch);
  });
});
