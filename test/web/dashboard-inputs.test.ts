/**
 * What the dashboard checks before it sends or navigates: the operation form's field messages (each bad input named
 * at its field, nothing to send), the kind names it maps like kubectl, and the row-shortcut URL of the Objects page
 * (malformed ones open nothing). Pure functions of web/src, run in node.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { objectsQuery, readObjectAction } from '../../web/src/object-action.js';
import { readObjectFilter } from '../../web/src/object-filter.js';
import { createDraft } from '../../web/src/operation-request.js';
import { normalizeDraft, validateDraft } from '../../web/src/operation-validation.js';

describe('operation form checks', () => {
  test('a complete draft has no message, and its kubectl kind name becomes the Kind', () => {
    const draft = createDraft({ op: 'scale', account: 'prod', kind: 'deploy', namespace: 'shop', name: 'cart', replicas: '3' });
    assert.deepEqual(validateDraft(draft), {});
    assert.equal(normalizeDraft(draft).kind, 'Deployment');
    assert.deepEqual(validateDraft(createDraft({ op: 'apply', account: 'prod', manifest: 'kind: ConfigMap' })), {});
  });

  test('each bad field gets its own message', () => {
    assert.deepEqual(Object.keys(validateDraft(createDraft({ name: '' }))).sort(), ['account', 'name']);
    const bad = validateDraft(createDraft({ account: 'prod', kind: 'gizmos', name: 'x', replicas: '-1' }));
    assert.match(bad.kind!, /Unknown kind “gizmos”/);
    assert.match(bad.replicas!, /whole number, 0 or more/);
    for (const replicas of ['', '1.5', 'two', '99999999999'])
      assert.ok(validateDraft(createDraft({ account: 'prod', name: 'x', replicas })).replicas, replicas);
    assert.match(validateDraft(createDraft({ op: 'delete', account: 'prod', kind: ' ', name: 'x' })).kind!, /Enter a kind/);
    assert.match(validateDraft(createDraft({ op: 'apply', account: 'prod', manifest: '  \n' })).manifest!, /manifest/);
    assert.equal(
      validateDraft(createDraft({ op: 'restart', account: 'prod', kind: 'Widget', name: 'x' })).kind,
      undefined,
      'a CamelCase custom Kind',
    );
  });
});

describe('the Objects page URL', () => {
  test('a kind in a link is read the kubectl way; an unknown one is kept for the server', () => {
    assert.equal(readObjectFilter(new URLSearchParams('kind=po')).kind, 'Pod');
    assert.equal(readObjectFilter(new URLSearchParams('kind=deployments')).kind, 'Deployment');
    assert.equal(readObjectFilter(new URLSearchParams('kind=gizmos')).kind, 'gizmos');
    assert.equal(readObjectFilter(new URLSearchParams('')).kind, '');
  });

  test('a row shortcut round-trips through the query, cluster-scoped objects included', () => {
    const filter = { account: 'prod', kind: 'Deployment', namespace: '', labels: '' };
    const draft = { op: 'scale' as const, account: 'prod', kind: 'Deployment', namespace: 'shop', name: 'cart', replicas: '4' };
    const action = readObjectAction(new URLSearchParams(objectsQuery(filter, draft)));
    assert.deepEqual(action?.draft, draft);
    const ns = { op: 'delete' as const, account: 'prod', kind: 'Namespace', namespace: '', name: 'old' };
    assert.deepEqual(readObjectAction(new URLSearchParams(objectsQuery(filter, ns)))?.draft, ns);
    assert.deepEqual(objectsQuery(filter), { account: 'prod', kind: 'Deployment', namespace: '', labels: '' });
  });

  test('malformed shortcuts open nothing', () => {
    for (const q of [
      'act=scale',
      'act=apply&on=a/b/c/d',
      'act=explode&on=a/b/c/d',
      'act=delete&on=a/b/c',
      'act=delete&on=a//c/d',
      'act=delete&on=a/b/c/%E0%A4%A',
    ])
      assert.equal(readObjectAction(new URLSearchParams(q)), undefined, q);
  });
});
