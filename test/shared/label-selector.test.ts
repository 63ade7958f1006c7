import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesLabelSelector, parseLabelSelector } from '../../src/shared/label-selector.js';

describe('parseLabelSelector', () => {
  test('empty string is the match-all selector', () => {
    assert.deepEqual(parseLabelSelector(''), []);
    assert.deepEqual(parseLabelSelector('   '), []);
  });

  test('parses every operator', () => {
    assert.deepEqual(parseLabelSelector('a=b,c==d,e!=f,g in (y,x),h notin (z),i,!j'), [
      { key: 'a', operator: 'Equals', values: ['b'] },
      { key: 'c', operator: 'Equals', values: ['d'] },
      { key: 'e', operator: 'NotEquals', values: ['f'] },
      { key: 'g', operator: 'In', values: ['x', 'y'] },
      { key: 'h', operator: 'NotIn', values: ['z'] },
      { key: 'i', operator: 'Exists', values: [] },
      { key: 'j', operator: 'DoesNotExist', values: [] },
    ]);
  });

  test('tolerates whitespace and prefixed keys', () => {
    assert.deepEqual(parseLabelSelector('  app.kubernetes.io/name  =  web ,  tier in(  a , b ) , ! gone '), [
      { key: 'app.kubernetes.io/name', operator: 'Equals', values: ['web'] },
      { key: 'tier', operator: 'In', values: ['a', 'b'] },
      { key: 'gone', operator: 'DoesNotExist', values: [] },
    ]);
  });

  test('empty values are allowed after = and inside sets', () => {
    assert.deepEqual(parseLabelSelector('a='), [{ key: 'a', operator: 'Equals', values: [''] }]);
    assert.deepEqual(parseLabelSelector('a!=,b=c'), [
      { key: 'a', operator: 'NotEquals', values: [''] },
      { key: 'b', operator: 'Equals', values: ['c'] },
    ]);
    assert.deepEqual(parseLabelSelector('a in (x,)'), [{ key: 'a', operator: 'In', values: ['', 'x'] }]);
  });

  test('keywords can be keys', () => {
    assert.deepEqual(parseLabelSelector('in=notin'), [{ key: 'in', operator: 'Equals', values: ['notin'] }]);
  });

  /** `[input, what is wrong, position, what was found]`: each refusal names the place and the token it stopped at. */
  const syntaxErrors: [string, string, number, string][] = [
    ['a=b=c', 'expected ","', 3, '"="'],
    ['a b', 'expected an operator (=, ==, !=, in, notin) or "," after key "a"', 2, '"b"'],
    ['a!b', 'expected an operator (=, ==, !=, in, notin) or "," after key "a"', 1, '"!"'],
    ['a ! = b', 'expected an operator (=, ==, !=, in, notin) or "," after key "a"', 2, '"!"'],
    [',a', 'expected a label key or "!"', 0, '","'],
    ['(a)', 'expected a label key or "!"', 0, '"("'],
    ['=a', 'expected a label key or "!"', 0, '"="'],
    ['a,,b', 'expected a label key or "!"', 2, '","'],
    ['a,', 'expected a requirement after ","', 2, 'end of string'],
    ['a=b,', 'expected a requirement after ","', 4, 'end of string'],
    ['a in x', 'expected "(" after "in"', 5, '"x"'],
    ['a notin x', 'expected "(" after "notin"', 8, '"x"'],
    ['a in (x', 'expected "," or ")" in value set', 7, 'end of string'],
    ['a notin (x y)', 'expected "," or ")" in value set', 11, '"y"'],
    ['a in (', 'expected a value, "," or ")" in value set', 6, 'end of string'],
    ['a in (=)', 'expected a value, "," or ")" in value set', 6, '"="'],
    ['a in (x)y', 'expected ","', 8, '"y"'],
    ['!', 'expected a label key after "!"', 1, 'end of string'],
    ['!,a', 'expected a label key after "!"', 1, '","'],
    ['!a=b', 'expected ","', 2, '"="'],
    ['a=(', 'expected a value after "="', 2, '"("'],
    ['a==)', 'expected a value after "=="', 3, '")"'],
    ['a!=!', 'expected a value after "!="', 3, '"!"'],
    ['a= =b', 'expected a value after "="', 3, '"="'],
    ['a=b c', 'expected ","', 4, '"c"'],
  ];
  for (const [input, what, position, found] of syntaxErrors) {
    test(`rejects ${JSON.stringify(input)}: ${what} at ${position}`, () => {
      assert.throws(() => parseLabelSelector(input), {
        name: 'SelectorError',
        message: `unable to parse label selector "${input}": ${what} at position ${position}, found ${found}`,
      });
    });
  }

  const CHARACTERS = "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  /** Refusals that are not about the syntax: the operator, the empty set, the key's and the value's own rules. */
  const otherErrors: [string, string][] = [
    ['a>1', 'unable to parse label selector "a>1": operator ">" is not supported'],
    ['a<1', 'unable to parse label selector "a<1": operator "<" is not supported'],
    ['a in ()', `unable to parse label selector "a in ()": for 'in', 'notin' operators, values set can't be empty`],
    ['-a=b', `invalid label key "-a": name part must ${CHARACTERS}`],
    ['x/y/z=1', `invalid label key "x/y/z": name part must ${CHARACTERS}`],
    [`${'x'.repeat(64)}=a`, `invalid label key "${'x'.repeat(64)}": name part must be no more than 63 characters`],
    ['/a=b', 'invalid label key "/a": prefix part must be non-empty'],
    ['p/=b', 'invalid label key "p/": name part must be non-empty'],
    ['!p/', 'invalid label key "p/": name part must be non-empty'],
    ['good_bad/a=b', 'invalid label key "good_bad/a": prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters'],
    ['Bad_Prefix/a=b', 'invalid label key "Bad_Prefix/a": prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters'],
    [
      `${'a'.repeat(254)}/b`,
      `invalid label key "${'a'.repeat(254)}/b": prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters`,
    ],
    ['a=-b', `invalid label value "-b" for key "a": must be empty or ${CHARACTERS}`],
    ['a in (x,-b)', `invalid label value "-b" for key "a": must be empty or ${CHARACTERS}`],
    [`a=${'x'.repeat(64)}`, `invalid label value "${'x'.repeat(64)}" for key "a": must be no more than 63 characters`],
  ];
  for (const [input, message] of otherErrors) {
    test(`rejects ${JSON.stringify(input.length > 40 ? `${input.slice(0, 40)}…` : input)}: ${message.slice(0, 60)}`, () => {
      assert.throws(() => parseLabelSelector(input), { name: 'SelectorError', message });
    });
  }

  test('a selector that is not a string is refused as such', () => {
    assert.throws(() => parseLabelSelector(42 as unknown as string), { name: 'SelectorError', message: 'label selector must be a string' });
  });

  test('the longest key and value Kubernetes allows pass: a 253-character prefix, 63-character names', () => {
    const prefix = `${'a'.repeat(61)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}`;
    assert.equal(prefix.length, 253);
    const key = `${prefix}/${'n'.repeat(63)}`;
    assert.deepEqual(parseLabelSelector(`${key}=${'v'.repeat(63)}`), [{ key, operator: 'Equals', values: ['v'.repeat(63)] }]);
  });

  test('a prefix of one-character labels is a subdomain too', () => {
    assert.deepEqual(parseLabelSelector('x.y/z=1'), [{ key: 'x.y/z', operator: 'Equals', values: ['1'] }]);
  });

  test('a value set drops repeated values and sorts them; an empty slot is the empty value', () => {
    assert.deepEqual(parseLabelSelector('a in (y,x,y)'), [{ key: 'a', operator: 'In', values: ['x', 'y'] }]);
    assert.deepEqual(parseLabelSelector('a notin (,)'), [{ key: 'a', operator: 'NotIn', values: [''] }]);
    assert.deepEqual(parseLabelSelector('a in (,x)'), [{ key: 'a', operator: 'In', values: ['', 'x'] }]);
  });

  test('tabs and newlines separate tokens like spaces', () => {
    assert.deepEqual(parseLabelSelector('a\tin\t(x)\n,\tb\n!=\tc'), [
      { key: 'a', operator: 'In', values: ['x'] },
      { key: 'b', operator: 'NotEquals', values: ['c'] },
    ]);
  });
});

describe('matchesLabelSelector', () => {
  const labels = { app: 'web', tier: 'front', empty: '' };
  const m = (s: string, l: Record<string, string> | undefined = labels) => matchesLabelSelector(parseLabelSelector(s), l);

  test('equality', () => {
    assert.equal(m('app=web'), true);
    assert.equal(m('app==web'), true);
    assert.equal(m('app=db'), false);
    assert.equal(m('missing=x'), false);
    assert.equal(m('empty='), true);
    assert.equal(m('missing='), false);
  });

  test('inequality matches absent keys, as in Kubernetes', () => {
    assert.equal(m('app!=db'), true);
    assert.equal(m('app!=web'), false);
    assert.equal(m('missing!=x'), true);
  });

  test('set operators', () => {
    assert.equal(m('tier in (front,back)'), true);
    assert.equal(m('tier in (back)'), false);
    assert.equal(m('missing in (x)'), false);
    assert.equal(m('tier notin (back)'), true);
    assert.equal(m('tier notin (front)'), false);
    assert.equal(m('missing notin (x)'), true);
  });

  test('existence', () => {
    assert.equal(m('app'), true);
    assert.equal(m('missing'), false);
    assert.equal(m('!missing'), true);
    assert.equal(m('!app'), false);
  });

  test('all requirements must hold', () => {
    assert.equal(m('app=web,tier=front'), true);
    assert.equal(m('app=web,tier=back'), false);
  });

  test('objects without labels', () => {
    assert.equal(m('', undefined), true);
    assert.equal(m('a', undefined), false);
    assert.equal(m('!a,b!=c', undefined), true);
  });
});
