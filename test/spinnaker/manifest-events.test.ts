/**
 * Events of one object: which Events match it and the order Clouddriver returns them in.
 *
 * Differences from the contract (Clouddriver HEAD 2f5e98f wins):
 * - The sort key is `lastTimestamp` whenever that field is present, even when null; `firstTimestamp` is read only
 *   when `lastTimestamp` is absent; with neither the key is the text "n/a". Keys compare as text, ascending (oldest
 *   first); null keys go last; ties keep their input order (stable sort). `eventTime` is ignored, so events.k8s.io
 *   style Events (null lastTimestamp) come last (KubernetesManifestContainerBuilder.buildManifest).
 * - Clouddriver selects Events by involvedObject name and kind only, in the object's namespace
 *   (KubectlJobExecutor.eventsFor: `--field-selector involvedObject.name=N,involvedObject.kind=K`), with the kind
 *   spelled as its Spinnaker name capitalised (so `horizontalpodautoscaler` becomes "Horizontalpodautoscaler" and
 *   never matches, and custom kinds carry their group). Outpost matches by uid when both sides have one (leaving out
 *   Events of an earlier object of the same name), else by the object's own kind, name and namespace.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventsFor } from '../../src/gateway/spinnaker/manifest-events.js';

type Obj = Record<string, unknown>;

const web: Obj = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'prod', uid: 'u-web' } };

function event(id: string, involved: Obj, times: Obj = {}): Obj {
  return { apiVersion: 'v1', kind: 'Event', metadata: { name: id, namespace: 'prod' }, involvedObject: involved, ...times };
}
const about = { kind: 'Deployment', name: 'web', namespace: 'prod', uid: 'u-web' };
const ids = (events: Obj[]) => events.map((e) => (e.metadata as Obj).name);

describe('eventsFor: which events', () => {
  test('uid decides when both have one', () => {
    const events = [
      event('same-uid', about),
      event('old-incarnation', { ...about, uid: 'u-old' }),
      event('renamed-but-same-uid', { ...about, name: 'other' }),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['same-uid', 'renamed-but-same-uid']);
  });

  test('kind, name and namespace otherwise', () => {
    const events = [
      event('no-uid', { kind: 'Deployment', name: 'web', namespace: 'prod' }),
      event('empty-uid', { kind: 'Deployment', name: 'web', namespace: 'prod', uid: '' }),
      event('other-kind', { kind: 'ReplicaSet', name: 'web', namespace: 'prod' }),
      event('other-name', { kind: 'Deployment', name: 'api', namespace: 'prod' }),
      event('other-namespace', { kind: 'Deployment', name: 'web', namespace: 'dev' }),
      event('kind-case', { kind: 'deployment', name: 'web', namespace: 'prod' }),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['no-uid', 'empty-uid']);
  });

  test('an object without uid matches by kind, name and namespace', () => {
    const object = { kind: 'Deployment', metadata: { name: 'web', namespace: 'prod' } };
    assert.deepEqual(ids(eventsFor(object, [event('a', about), event('b', { ...about, namespace: 'dev' })])), ['a']);
  });

  test('cluster-scoped objects: missing namespace on both sides', () => {
    const ns = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } };
    const events = [
      event('a', { kind: 'Namespace', name: 'prod' }),
      event('b', { kind: 'Namespace', name: 'prod', namespace: '' }),
      event('c', { kind: 'Namespace', name: 'prod', namespace: 'prod' }),
    ];
    assert.deepEqual(ids(eventsFor(ns, events)), ['a', 'b']);
  });

  test('malformed events are skipped, not thrown on', () => {
    const events = [{}, { involvedObject: null }, { involvedObject: 'x' }, event('ok', about)] as Obj[];
    assert.deepEqual(ids(eventsFor(web, events)), ['ok']);
    assert.deepEqual(eventsFor(web, []), []);
  });
});

describe('eventsFor: order', () => {
  test('ascending by lastTimestamp', () => {
    const events = [
      event('c', about, { firstTimestamp: '2024-01-01T00:00:00Z', lastTimestamp: '2024-01-03T00:00:00Z' }),
      event('a', about, { firstTimestamp: '2024-01-01T00:00:00Z', lastTimestamp: '2024-01-01T00:00:00Z' }),
      event('b', about, { firstTimestamp: '2024-01-01T00:00:00Z', lastTimestamp: '2024-01-02T00:00:00Z' }),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['a', 'b', 'c']);
  });

  test('firstTimestamp only when lastTimestamp is absent', () => {
    const events = [
      event('last-3', about, { lastTimestamp: '2024-01-03T00:00:00Z' }),
      event('first-2', about, { firstTimestamp: '2024-01-02T00:00:00Z' }),
      event('last-1', about, { firstTimestamp: '2024-01-09T00:00:00Z', lastTimestamp: '2024-01-01T00:00:00Z' }),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['last-1', 'first-2', 'last-3']);
  });

  test('a present but null lastTimestamp sorts last even with a firstTimestamp; "n/a" after timestamps', () => {
    const events = [
      event('null-last', about, { lastTimestamp: null, firstTimestamp: '2020-01-01T00:00:00Z', eventTime: '2020-01-01T00:00:00.000000Z' }),
      event('neither', about),
      event('dated', about, { lastTimestamp: '2024-01-01T00:00:00Z' }),
      event('null-first', about, { firstTimestamp: null }),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['dated', 'neither', 'null-last', 'null-first']);
  });

  test('non-string timestamps count as null', () => {
    const events = [event('number', about, { lastTimestamp: 5 }), event('dated', about, { lastTimestamp: '2024-01-01T00:00:00Z' })];
    assert.deepEqual(ids(eventsFor(web, events)), ['dated', 'number']);
  });

  test('ties keep their input order', () => {
    const t = { lastTimestamp: '2024-01-01T00:00:00Z' };
    const events = [
      event('x', about, t),
      event('y', about, t),
      event('early', about, { lastTimestamp: '2023-12-31T00:00:00Z' }),
      event('z', about, t),
    ];
    assert.deepEqual(ids(eventsFor(web, events)), ['early', 'x', 'y', 'z']);
    const nulls = [event('n1', about, { lastTimestamp: null }), event('n2', about, { lastTimestamp: null })];
    assert.deepEqual(ids(eventsFor(web, nulls)), ['n1', 'n2']);
  });

  test('returns the given objects in a new array and leaves the input alone', () => {
    const first = event('b', about, { lastTimestamp: '2024-01-02T00:00:00Z' });
    const second = event('a', about, { lastTimestamp: '2024-01-01T00:00:00Z' });
    const input = [first, second];
    const result = eventsFor(web, input);
    assert.equal(result[0], second);
    assert.deepEqual(input, [first, second]);
    assert.notEqual(result, input);
  });
});
