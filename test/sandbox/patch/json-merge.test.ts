import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, applyJsonPatch, applyMergePatch } from '../../../src/sandbox/patch/index.js';

const cm = () => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', labels: { a: '1', b: '2' } },
  data: { x: '1', list: '["a"]' },
  items: [1, 2, 3],
});

describe('applyJsonPatch', () => {
  test('applies every RFC 6902 operation', () => {
    const target = cm();
    const out = applyJsonPatch(target, [
      { op: 'add', path: '/metadata/labels/c', value: '3' },
      { op: 'remove', path: '/metadata/labels/a' },
      { op: 'replace', path: '/data/x', value: '2' },
      { op: 'move', from: '/data/list', path: '/data/moved' },
      { op: 'copy', from: '/data/x', path: '/data/copy' },
      { op: 'test', path: '/items/1', value: 2 },
      { op: 'add', path: '/items/-', value: 4 },
    ]);
    assert.deepEqual(out.metadata, { name: 'c', labels: { b: '2', c: '3' } });
    assert.deepEqual(out.data, { x: '2', moved: '["a"]', copy: '2' });
    assert.deepEqual(out.items, [1, 2, 3, 4]);
    assert.deepEqual(target, cm(), 'target is not mutated');
  });

  test('a failed test op is 422 and changes nothing', () => {
    const target = cm();
    assert.throws(
      () =>
        applyJsonPatch(target, [
          { op: 'replace', path: '/data/x', value: 'changed' },
          { op: 'test', path: '/data/x', value: 'nope' },
        ]),
      (e: unknown) => e instanceof PatchError && e.status === 422 && /test/i.test(e.message),
    );
    assert.deepEqual(target, cm());
  });

  test('operations on missing paths are 422', () => {
    for (const op of [
      { op: 'remove', path: '/nope' },
      { op: 'replace', path: '/a/b', value: 1 },
      { op: 'move', from: '/nope', path: '/x' },
      { op: 'add', path: '/items/9', value: 1 },
    ]) {
      assert.throws(
        () => applyJsonPatch(cm(), [op]),
        (e: unknown) => e instanceof PatchError && e.status === 422,
        JSON.stringify(op),
      );
    }
  });

  test('malformed patches are 400', () => {
    for (const patch of [
      { op: 'add' },
      'x',
      null,
      [null],
      [{ op: 'frobnicate', path: '/a' }],
      [{ op: 'add', path: 'no-slash', value: 1 }],
      [{ op: 'add', path: '/a' }],
      [{ op: 'copy', path: '/a' }],
    ]) {
      assert.throws(
        () => applyJsonPatch(cm(), patch),
        (e: unknown) => e instanceof PatchError && e.status === 400,
        JSON.stringify(patch),
      );
    }
  });

  test('a result that is not an object is 422', () => {
    assert.throws(
      () => applyJsonPatch(cm(), [{ op: 'replace', path: '', value: 5 }]),
      (e: unknown) => e instanceof PatchError && e.status === 422,
    );
  });

  test('the patch value is copied, not aliased', () => {
    const value = { deep: ['x'] };
    const out = applyJsonPatch(cm(), [{ op: 'add', path: '/extra', value }]);
    value.deep.push('y');
    assert.deepEqual(out.extra, { deep: ['x'] });
  });
});

describe('applyMergePatch', () => {
  test('objects merge, null deletes, lists replace', () => {
    const target = cm();
    const out = applyMergePatch(target, {
      metadata: { labels: { a: null, c: '3' } },
      data: null,
      items: [9],
      extra: { nested: { ok: true, gone: null } },
    });
    assert.deepEqual(out, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', labels: { b: '2', c: '3' } },
      items: [9],
      extra: { nested: { ok: true } },
    });
    assert.deepEqual(target, cm());
  });

  test('a scalar replaced by an object and back', () => {
    const out = applyMergePatch({ a: 1, b: { c: 1 } }, { a: { x: 1 }, b: 2 });
    assert.deepEqual(out, { a: { x: 1 }, b: 2 });
  });

  test('a patch that is not an object is 400', () => {
    for (const p of [[1], 'x', null, 3]) {
      assert.throws(
        () => applyMergePatch(cm(), p),
        (e: unknown) => e instanceof PatchError && e.status === 400,
      );
    }
  });
});
