import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { SelectorError, matchesLabelSelector, parseLabelSelector } from '../../src/shared/label-selector.js';

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

  for (const bad of [
    'a=b=c',
    'a b',
    ',a',
    'a,',
    'a,,b',
    'a in x',
    'a in (x',
    'a in ()',
    'a notin (x y)',
    '!',
    '!a=b',
    'a>1',
    'a<1',
    '-a=b',
    'a=-b',
    `a=${'x'.repeat(64)}`,
    `${'x'.repeat(64)}=a`,
    'Bad_Prefix/a=b',
    '/a=b',
    'p/=b',
    'a=b c',
    '(a)',
  ]) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseLabelSelector(bad), SelectorError);
    });
  }

  test('error messages say what is wrong', () => {
    assert.throws(() => parseLabelSelector('a in ()'), /values set can't be empty/);
    assert.throws(() => parseLabelSelector('a=b c'), /position 4/);
    assert.throws(() => parseLabelSelector('a=-b'), /invalid label value "-b" for key "a"/);
    assert.throws(() => parseLabelSelector('a>1'), /operator ">" is not supported/);
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
