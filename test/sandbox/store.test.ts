import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/sandbox/errors.js';
import { createHistory } from '../../src/sandbox/history.js';
import { createKindRegistry } from '../../src/sandbox/kinds.js';
import { createObjectStore } from '../../src/sandbox/store.js';
import type { StoreEvent } from '../../src/sandbox/types.js';

function setup(historyWindow = 100) {
  const registry = createKindRegistry();
  const store = createObjectStore(registry, historyWindow);
  const ns = registry.byKindKey('/Namespace')!;
  const cm = registry.byKindKey('/ConfigMap')!;
  const deploy = registry.byKindKey('apps/Deployment')!;
  store.create(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } });
  return { registry, store, ns, cm, deploy };
}

const configMap = (name: string, data: Record<string, string> = { a: '1' }, namespace = 'default') => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace },
  data,
});

function codeOf(fn: () => unknown): number | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    throw err;
  }
  return undefined;
}

describe('object store', () => {
  test('create fills uid, resourceVersion, creationTimestamp; versions grow by one per change', () => {
    const { store, cm } = setup();
    const rv0 = store.resourceVersion;
    const a = store.create(cm, configMap('a'));
    const b = store.create(cm, configMap('b'));
    assert.match(a.metadata.uid!, /^[0-9a-f-]{36}$/);
    assert.equal(a.metadata.resourceVersion, String(rv0 + 1));
    assert.equal(b.metadata.resourceVersion, String(rv0 + 2));
    assert.match(a.metadata.creationTimestamp!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(a.metadata.generation, undefined, 'ConfigMaps carry no generation');
  });

  test('generateName, duplicates, missing namespaces and invalid names are refused with the right codes', () => {
    const { store, cm } = setup();
    const g = store.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'gen-', namespace: 'default' } });
    assert.match(g.metadata.name!, /^gen-[a-z0-9]{5}$/);
    store.create(cm, configMap('dup'));
    assert.equal(
      codeOf(() => store.create(cm, configMap('dup'))),
      409,
    );
    assert.equal(
      codeOf(() => store.create(cm, configMap('x', {}, 'nope'))),
      404,
    );
    assert.equal(
      codeOf(() => store.create(cm, configMap('Bad_Name'))),
      422,
    );
    assert.equal(
      codeOf(() => store.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' } })),
      422,
    );
    assert.equal(
      codeOf(() => store.create(cm, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'n', labels: { a: 1 } } })),
      400,
    );
  });

  test('update: stale resourceVersion is 409, a no-op produces no version, spec changes bump generation', () => {
    const { store, deploy } = setup();
    const d = store.create(deploy, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', namespace: 'default' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
      },
    });
    assert.equal(d.metadata.generation, 1);
    const same = store.update(deploy, d);
    assert.equal(same.metadata.resourceVersion, d.metadata.resourceVersion);
    const labelled = store.update(deploy, { ...d, metadata: { ...d.metadata, labels: { x: 'y' } } });
    assert.equal(labelled.metadata.generation, 1, 'metadata changes keep the generation');
    assert.equal(
      codeOf(() => store.update(deploy, { ...d, spec: { ...(d.spec as object), replicas: 2 } })),
      409,
    );
    const scaled = store.update(deploy, { ...labelled, spec: { ...(labelled.spec as object), replicas: 2 } });
    assert.equal(scaled.metadata.generation, 2);
    const withStatus = store.update(deploy, { ...scaled, status: { replicas: 9 } });
    assert.equal(withStatus.status, undefined, 'the main resource ignores status for kinds with a status subresource');
    const status = store.update(deploy, { ...scaled, status: { replicas: 9 } }, { subresource: 'status' });
    assert.deepEqual(status.status, { replicas: 9 });
    assert.equal(status.metadata.generation, 2);
  });

  test('finalizers hold a delete until the last one is removed', () => {
    const { store, cm } = setup();
    const events: StoreEvent[] = [];
    store.subscribe((e) => events.push(e));
    store.create(cm, { ...configMap('f'), metadata: { name: 'f', namespace: 'default', finalizers: ['example.com/hold'] } });
    const marked = store.delete(cm, 'default', 'f');
    assert.equal(marked.deleted, false);
    assert.ok(marked.obj.metadata.deletionTimestamp);
    const live = store.get(cm, 'default', 'f')!;
    store.update(cm, { ...live, metadata: { ...live.metadata, finalizers: [] } });
    assert.equal(store.get(cm, 'default', 'f'), undefined);
    assert.deepEqual(
      events.map((e) => e.type),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
  });

  test('deleting a namespace deletes what is in it', () => {
    const { store, ns, cm } = setup();
    store.create(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'gone' } });
    store.create(cm, configMap('one', {}, 'gone'));
    store.create(cm, configMap('two', {}, 'gone'));
    store.create(cm, configMap('keep'));
    store.delete(ns, undefined, 'gone');
    assert.deepEqual(
      store.list(cm).map((o) => o.metadata.name),
      ['keep'],
    );
  });

  test('scan pages through objects in key order within a namespace', () => {
    const { store, ns, cm } = setup();
    store.create(ns, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a-b' } });
    for (const n of ['c', 'a', 'b']) store.create(cm, configMap(n));
    store.create(cm, configMap('z', {}, 'a-b'));
    const first = store.scan(cm, { namespace: 'default', limit: 2 });
    assert.deepEqual(
      first.items.map((o) => o.metadata.name),
      ['a', 'b'],
    );
    assert.equal(first.remaining, 1);
    const second = store.scan(cm, { namespace: 'default', limit: 2, after: first.continueAfter });
    assert.deepEqual(
      second.items.map((o) => o.metadata.name),
      ['c'],
    );
    assert.equal(second.continueAfter, undefined);
    assert.equal(store.scan(cm).items.length, 4);
  });

  test('history keeps a window and reports versions that fell out of it', () => {
    const { store, cm } = setup(3);
    const start = store.resourceVersion;
    for (let i = 0; i < 5; i++) store.create(cm, configMap(`h${i}`));
    assert.equal(store.eventsSince(start), undefined);
    assert.deepEqual(
      store.eventsSince(start + 2)!.map((e) => e.rv),
      [start + 3, start + 4, start + 5],
    );
    assert.deepEqual(store.eventsSince(store.resourceVersion), []);
    store.expireHistory();
    assert.equal(store.eventsSince(start + 4), undefined);
    assert.deepEqual(store.eventsSince(store.resourceVersion), []);
  });

  test('the history ring appends in constant time at any size', () => {
    const history = createHistory(2);
    for (let rv = 1; rv <= 5; rv++)
      history.push({ type: 'ADDED', kindKey: '/Pod', object: { apiVersion: 'v1', kind: 'Pod', metadata: {} }, rv });
    assert.equal(history.size, 2);
    assert.equal(history.compactedRv, 3);
    assert.deepEqual(
      history.since(3)!.map((e) => e.rv),
      [4, 5],
    );
    assert.equal(history.since(2), undefined);
  });
});
