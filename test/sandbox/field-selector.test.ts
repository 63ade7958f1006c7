import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchesFieldSelector, parseFieldSelector } from '../../src/sandbox/field-selector.js';
import { SelectorError } from '../../src/shared/label-selector.js';

const pod = {
  metadata: { name: 'web-1', namespace: 'default' },
  spec: { nodeName: 'node-a', hostNetwork: false, priority: 5 },
  status: { phase: 'Running' },
};
const pending = { metadata: { name: 'web-2', namespace: 'prod' }, spec: {}, status: { phase: 'Pending' } };

describe('parseFieldSelector', () => {
  test('parses =, == and != terms', () => {
    assert.deepEqual(parseFieldSelector('metadata.name=web-1,status.phase==Running,spec.nodeName!=x'), [
      { field: 'metadata.name', operator: 'Equals', value: 'web-1' },
      { field: 'status.phase', operator: 'Equals', value: 'Running' },
      { field: 'spec.nodeName', operator: 'NotEquals', value: 'x' },
    ]);
  });

  test('empty selector and empty values', () => {
    assert.deepEqual(parseFieldSelector(''), []);
    assert.deepEqual(parseFieldSelector('spec.nodeName='), [{ field: 'spec.nodeName', operator: 'Equals', value: '' }]);
  });

  test('escaped separators stay in the value', () => {
    assert.deepEqual(parseFieldSelector('metadata.name=a\\,b\\=c\\\\d'), [
      { field: 'metadata.name', operator: 'Equals', value: 'a,b=c\\d' },
    ]);
  });

  for (const bad of ['metadata.name', 'a=b,', ',a=b', '=x', 'a..b=c', 'a b=c', 'a=b\\x']) {
    test(`rejects ${JSON.stringify(bad)}`, () => {
      assert.throws(() => parseFieldSelector(bad), SelectorError);
    });
  }
});

describe('matchesFieldSelector', () => {
  const m = (s: string, o: Record<string, unknown> = pod) => matchesFieldSelector(parseFieldSelector(s), o);

  test('metadata fields', () => {
    assert.equal(m('metadata.name=web-1'), true);
    assert.equal(m('metadata.name=web-2'), false);
    assert.equal(m('metadata.namespace!=default'), false);
    assert.equal(m('metadata.namespace!=default', pending), true);
  });

  test('arbitrary dotted paths and scalar conversion', () => {
    assert.equal(m('status.phase=Running'), true);
    assert.equal(m('spec.hostNetwork=false'), true);
    assert.equal(m('spec.priority=5'), true);
  });

  test('missing fields compare as empty', () => {
    assert.equal(m('spec.nodeName=', pending), true);
    assert.equal(m('spec.nodeName='), false);
    assert.equal(m('spec.nodeName!='), true);
    assert.equal(m('no.such.path='), true);
  });

  test('all terms must hold', () => {
    assert.equal(m('metadata.name=web-1,status.phase=Running'), true);
    assert.equal(m('metadata.name=web-1,status.phase=Pending'), false);
    assert.equal(m(''), true);
  });
});
