/**
 * Text the gateway refuses up front (src/shared/unstorable-text.ts): a NUL character or a lone UTF-16 surrogate, in
 * any string or object key of a message, named by its path — so it never reaches a Postgres query or an encoder.
 * Paired surrogates (an emoji) are fine; bytes and protobuf-es `$typeName` are not walked.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { findUnstorableText, hasLoneSurrogate, textProblem, wellFormed } from '../../src/shared/unstorable-text.js';

const HIGH = '\ud83d';
const LOW = '\ude00';
const EMOJI = `${HIGH}${LOW}`;
const NUL_PROBLEM = 'contains a NUL character (\\u0000)';
const SURROGATE_PROBLEM = 'contains a lone UTF-16 surrogate (not valid Unicode)';

describe('lone surrogates', () => {
  test('a high surrogate without its low one, or a low one without its high one, is lone; a pair is not', () => {
    for (const text of [HIGH, LOW, `a${HIGH}`, `${HIGH}a`, `a${LOW}b`, `${LOW}${HIGH}`, `${EMOJI}${LOW}`, `${HIGH}${EMOJI}`]) {
      assert.equal(hasLoneSurrogate(text), true, JSON.stringify(text));
    }
    for (const text of ['', 'plain', EMOJI, `a${EMOJI}b${EMOJI}`, 'é\u00e9'])
      assert.equal(hasLoneSurrogate(text), false, JSON.stringify(text));
  });

  test('wellFormed replaces each lone surrogate with U+FFFD and keeps pairs; well-formed text comes back as it was', () => {
    assert.equal(wellFormed(`a${HIGH}b${LOW}c${EMOJI}`), `a\ufffdb\ufffdc${EMOJI}`);
    assert.equal(wellFormed(`${HIGH}${HIGH}`), '\ufffd\ufffd', 'every one, not only the first');
    const ok = `plain ${EMOJI}`;
    assert.equal(wellFormed(ok), ok);
  });

  test('textProblem names the NUL character first, then a lone surrogate, else nothing', () => {
    assert.equal(textProblem('a\u0000b'), NUL_PROBLEM);
    assert.equal(textProblem(`\u0000${HIGH}`), NUL_PROBLEM);
    assert.equal(textProblem(`x${LOW}`), SURROGATE_PROBLEM);
    assert.equal(textProblem(`fine ${EMOJI}`), undefined);
  });
});

describe('findUnstorableText', () => {
  test('nothing wrong: undefined, whatever the shape', () => {
    for (const value of [undefined, null, 0, true, 'text', [], {}, ['a', { b: ['c', 1, null, false] }], { nested: { deep: EMOJI } }]) {
      assert.equal(findUnstorableText(value, 'body'), undefined, JSON.stringify(value));
    }
  });

  test('a string at the root is named by the prefix, or "(value)" without one', () => {
    assert.equal(findUnstorableText('a\u0000', 'name'), `name ${NUL_PROBLEM}`);
    assert.equal(findUnstorableText(`a${HIGH}`), `(value) ${SURROGATE_PROBLEM}`);
  });

  test('a value inside objects and arrays is named by its path', () => {
    const body = { accounts: [{ name: 'ok' }, { name: 'x', properties: { team: 'a\u0000b' } }] };
    assert.equal(findUnstorableText(body, 'body'), `body.accounts[1].properties.team ${NUL_PROBLEM}`);
    assert.equal(findUnstorableText([['fine'], ['also', `b${LOW}`]], 'rows'), `rows[1][1] ${SURROGATE_PROBLEM}`);
    assert.equal(findUnstorableText({ a: { b: 'x\u0000' } }), `a.b ${NUL_PROBLEM}`, 'no prefix: the path starts at the first key');
  });

  test('a key is checked before its value and named by where it is; the path to it is printable', () => {
    assert.equal(findUnstorableText({ 'k\u0000': 'v' }, 'body'), `a key of body ${NUL_PROBLEM}`);
    assert.equal(findUnstorableText({ [`k${HIGH}`]: 'v' }), `a key of (root) ${SURROGATE_PROBLEM}`);
    assert.equal(findUnstorableText({ outer: { [`k${LOW}`]: 1 } }, 'm'), `a key of m.outer ${SURROGATE_PROBLEM}`);
  });

  test('the first problem in document order is the one named', () => {
    const value = { first: ['ok', 'a\u0000'], second: `b${HIGH}` };
    assert.equal(findUnstorableText(value, 'm'), `m.first[1] ${NUL_PROBLEM}`);
    assert.equal(findUnstorableText(['x', 'y\u0000', `z${HIGH}`], 'list'), `list[1] ${NUL_PROBLEM}`);
  });

  test('bytes and $typeName are not walked; other keys of a message are', () => {
    const message = { $typeName: 'x\u0000', payload: new Uint8Array([0, 0xd8, 0x3d]), note: 'fine' };
    assert.equal(findUnstorableText(message, 'msg'), undefined);
    assert.equal(findUnstorableText({ ...message, note: `n${LOW}` }, 'msg'), `msg.note ${SURROGATE_PROBLEM}`);
  });

  test('deeply nested input is walked without recursion', () => {
    let deep: unknown = 'bottom\u0000';
    for (let i = 0; i < 20_000; i++) deep = [deep];
    const found = findUnstorableText(deep, 'd');
    assert.ok(found?.startsWith('d[0][0]') && found.endsWith(NUL_PROBLEM), found?.slice(0, 40));
  });
});
