/**
 * secretPatchProblem: a JSON patch of a Secret may not read its values — `copy`/`move` from, or `test` at, `/data`,
 * `/stringData`, kubectl's last-applied annotation or any ancestor of them (the whole object included), in any
 * spelling the API server's JSON patch library would follow; operations that only write pass.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { secretPatchProblem } from '../../src/shared/secret-patch-rules.js';

const LAST_APPLIED = '/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration';

test('operations reading Secret values are refused, with the operation named', () => {
  const refused: unknown[] = [
    { op: 'copy', from: '/data/password', path: '/metadata/annotations/x' },
    { op: 'move', from: '/data', path: '/metadata/labels' },
    { op: 'copy', from: '/stringData/token', path: '/metadata/name' },
    { op: 'test', path: '/data/password', value: 'guess' },
    { op: 'test', path: '/data', value: {} },
    { op: 'copy', from: '', path: '/metadata/annotations/x' },
    { op: 'copy', from: '/metadata', path: '/data/x' },
    { op: 'copy', from: '/metadata/annotations', path: '/data/x' },
    { op: 'copy', from: LAST_APPLIED, path: '/metadata/name' },
    { op: 'test', path: '', value: {} },
    // Spellings the server's library reads the same way: what precedes the first "/" is ignored, no "/" is the root.
    { op: 'copy', from: 'x/data/password', path: '/metadata/annotations/x' },
    { op: 'copy', from: 'data', path: '/metadata/annotations/x' },
    // Other case and escapes: refused too.
    { op: 'copy', from: '/Data/password', path: '/metadata/annotations/x' },
    { op: 'copy', From: '/data/password', path: '/metadata/annotations/x' },
    { op: 'TEST', path: '/data/password', value: 'guess' },
    { op: 'copy', from: '/metadata/annotations/kubectl.kubernetes.io~1LAST-applied-configuration', path: '/x' },
    { op: 'copy', from: 7, path: '/x' },
  ];
  for (const op of refused) {
    const problem = secretPatchProblem([{ op: 'add', path: '/metadata/labels/a', value: 'b' }, op]);
    assert.ok(problem, JSON.stringify(op));
    assert.match(problem, /^JSON patch operation 1 /, JSON.stringify(op));
  }
  assert.match(
    secretPatchProblem([{ op: 'copy', from: '/data/password', path: '/x' }])!,
    /reads "\/data\/password", which holds or contains/,
  );
  assert.match(secretPatchProblem([{ op: 'test', path: '/data/password', value: 'x' }])!, /\(test\) tests "\/data\/password"/);
});

test('writing operations and reads elsewhere pass', () => {
  const allowed: unknown[] = [
    [],
    [{ op: 'add', path: '/data/password', value: 'bmV3' }],
    [{ op: 'replace', path: '/stringData/token', value: 'new' }],
    [{ op: 'remove', path: '/data/old' }],
    [{ op: 'add', path: '', value: { apiVersion: 'v1', kind: 'Secret' } }],
    [{ op: 'copy', from: '/metadata/labels/app', path: '/metadata/labels/name' }],
    [{ op: 'move', from: '/metadata/annotations/a', path: '/metadata/annotations/b' }],
    [{ op: 'test', path: '/metadata/resourceVersion', value: '42' }],
    [{ op: 'copy', from: '/type', path: '/metadata/labels/type' }],
    [{ op: 'copy', from: '/database', path: '/metadata/labels/db' }],
    // "/" is the member named "" of the object (RFC 6901), not the object.
    [{ op: 'copy', from: '/', path: '/metadata/labels/empty' }],
  ];
  for (const ops of allowed) assert.equal(secretPatchProblem(ops), undefined, JSON.stringify(ops));
});

test('a body that is not an array of operation objects cannot be checked and is refused', () => {
  assert.match(secretPatchProblem({ op: 'copy', from: '/data/x', path: '/y' })!, /must be an array/);
  assert.match(secretPatchProblem(null)!, /must be an array/);
  assert.match(secretPatchProblem(['copy'])!, /operation 0 is not an object/);
  assert.match(secretPatchProblem([[{ op: 'copy' }]])!, /operation 0 is not an object/);
});
