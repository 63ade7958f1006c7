/**
 * Recognising a Secret's values (src/shared/secret-values.ts), which the Secret scrub and the error redaction rely on:
 * which forms of a value count (as stored, decoded only when it really is base64 of UTF-8 text, stringData, trimmed),
 * what is not a value (empty strings, non-string entries, `data` that is not a map), the length from which a value is
 * recognised inside longer text (8 characters; shorter ones only whole or quoted), and the redaction of a message
 * (a value that contains another is replaced whole, a tiny value with a quote or a newline is found raw and escaped).
 * A slip here leaks a value into metadata or a message, or redacts ordinary text.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createSecretValueMatcher, REDACTED, secretValuesOf } from '../../src/shared/secret-values.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const sorted = (values: string[]) => [...values].sort();

describe('the values of a Secret', () => {
  test('a base64 data value is kept as stored and decoded, also when wrapped in lines or padded with a trailing newline', () => {
    assert.deepEqual(sorted(secretValuesOf({ data: { a: b64('twelve chars') } })), sorted([b64('twelve chars'), 'twelve chars']));
    // `base64` wraps its output in lines; a file written by hand ends in a newline.
    assert.deepEqual(sorted(secretValuesOf({ data: { a: 'QUJD\nREVG' } })), sorted(['QUJD\nREVG', 'ABCDEF']));
    assert.deepEqual(sorted(secretValuesOf({ data: { a: 'QUJDRA==\n' } })), sorted(['QUJDRA==\n', 'QUJDRA==', 'ABCD']));
  });

  test('a data value that is not base64 is kept only as stored, though a lenient decoder reads text from it', () => {
    // Node's decoder skips the '!' and would read "twelve chars"; the value is not base64, so it has no decoded form.
    assert.deepEqual(secretValuesOf({ data: { a: `${b64('twelve chars')}!` } }), [`${b64('twelve chars')}!`]);
    assert.deepEqual(secretValuesOf({ data: { a: `!${b64('twelve chars')}` } }), [`!${b64('twelve chars')}`]);
  });

  test('a data value that decodes to bytes which are not UTF-8 text is kept only as stored', () => {
    const binary = Buffer.from([0xff, 0xfe, 0xfd, 0x80]).toString('base64');
    assert.deepEqual(secretValuesOf({ data: { blob: binary } }), [binary]);
  });

  test('entries that are not strings, and data or stringData that is not a map, give no value', () => {
    assert.deepEqual(
      sorted(secretValuesOf({ data: { n: 5, z: null, o: {}, s: b64('kept-value') }, stringData: { n: 7, l: ['x'], s: 'typed' } })),
      sorted([b64('kept-value'), 'kept-value', 'typed']),
    );
    assert.deepEqual(secretValuesOf({ data: [b64('listed-value')], stringData: ['listed-string-value'] }), []);
    assert.deepEqual(secretValuesOf({ data: null, stringData: 'a-string-not-a-map' }), []);
  });
});

describe('recognising and redacting values', () => {
  test('a matcher is empty only when it has no non-empty value', () => {
    assert.equal(createSecretValueMatcher([]).empty, true);
    assert.equal(createSecretValueMatcher(['', '']).empty, true);
    assert.equal(createSecretValueMatcher(['x']).empty, false);
  });

  test('an empty value is ignored: it is not held and an empty quoted string is not redacted', () => {
    const matcher = createSecretValueMatcher(['', 'abc']);
    assert.equal(matcher.holds(''), false);
    assert.equal(matcher.holds('abc'), true);
    assert.equal(matcher.redact('name: Invalid value: "": must not be empty'), 'name: Invalid value: "": must not be empty');
  });

  test('a value of 8 characters is recognised and redacted inside longer text; one of 7 only whole or quoted', () => {
    const matcher = createSecretValueMatcher(['eight-ch', 'seven-c']);
    assert.equal(matcher.contains('prefix-eight-ch-suffix'), true);
    assert.equal(matcher.holds('prefix-eight-ch-suffix'), true);
    assert.equal(matcher.redact('bad name prefix-eight-ch-suffix'), `bad name prefix-${REDACTED}-suffix`);

    assert.equal(matcher.contains('seven-c'), false, 'contains never matches a short value, not even whole');
    assert.equal(matcher.holds('seven-c'), true);
    assert.equal(matcher.holds('prefix-seven-c'), false);
    assert.equal(matcher.redact('bad name prefix-seven-c'), 'bad name prefix-seven-c');
    assert.equal(matcher.redact('Invalid value: "seven-c"'), `Invalid value: "${REDACTED}"`);
  });

  test('a tiny value with a quote or a newline is redacted quoted both as it is and as escaped in JSON', () => {
    const matcher = createSecretValueMatcher(['a"b', 'c\nd']);
    assert.equal(matcher.redact('Invalid value: "a"b" and "c\nd"'), `Invalid value: "${REDACTED}" and "${REDACTED}"`);
    assert.equal(matcher.redact('Invalid value: "a\\"b" and "c\\nd"'), `Invalid value: "${REDACTED}" and "${REDACTED}"`);
  });

  test('a value that contains another is replaced whole, whichever comes first', () => {
    for (const values of [
      ['short-01', 'short-01-and-more'],
      ['short-01-and-more', 'short-01'],
    ]) {
      const matcher = createSecretValueMatcher(values);
      assert.equal(matcher.redact('names: short-01-and-more, short-01'), `names: ${REDACTED}, ${REDACTED}`, values.join());
    }
    const tiny = createSecretValueMatcher(['ab', 'x"ab"y-long']);
    assert.equal(tiny.redact('value x"ab"y-long and "ab"'), `value ${REDACTED} and "${REDACTED}"`);
  });

  test('every occurrence is redacted, and text without a value comes back unchanged', () => {
    const matcher = createSecretValueMatcher(['repeated-value']);
    assert.equal(matcher.redact('repeated-value/repeated-value'), `${REDACTED}/${REDACTED}`);
    assert.equal(matcher.redact('nothing secret here'), 'nothing secret here');
  });
});
