import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { PatchError, applyServerSideApply } from '../../../src/sandbox/patch/index.js';

type Any = Record<string, any>;
const now = new Date('2024-05-01T10:00:00.123Z');
const apply = (live: Any | undefined, applied: Any, fieldManager: string, force = false, kindKey = 'apps/Deployment'): Any =>
  applyServerSideApply(live, applied, { fieldManager, force, kindKey, now });

const config = (over: { replicas?: number; image?: string; labels?: Record<string, string>; env?: Any[]; extra?: Any[] } = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'default', labels: over.labels ?? { app: 'web' } },
  spec: {
    ...(over.replicas === undefined ? {} : { replicas: over.replicas }),
    selector: { matchLabels: { app: 'web' } },
    template: {
      metadata: { labels: { app: 'web' } },
      spec: {
        containers: [{ name: 'app', image: over.image ?? 'app:1', ...(over.env ? { env: over.env } : {}) }, ...(over.extra ?? [])],
      },
    },
  },
});

/** What the API server adds around a created object. */
const stored = (obj: Any): Any => ({
  ...obj,
  metadata: { ...obj.metadata, uid: 'uid-1', resourceVersion: '5', creationTimestamp: '2024-01-01T00:00:00Z' },
  status: { replicas: 1 },
});

const entry = (obj: Any, manager: string): Any | undefined =>
  (obj.metadata.managedFields as Any[]).find((e) => e.manager === manager && e.operation === 'Apply');

describe('server-side apply: create', () => {
  test('the result is the applied object plus a managedFields entry', () => {
    const applied = config({ replicas: 2 });
    const out = apply(undefined, applied, 'kubectl');
    const { managedFields, ...meta } = out.metadata;
    assert.deepEqual({ ...out, metadata: meta }, applied);
    assert.equal(managedFields.length, 1);
    const e = managedFields[0];
    assert.equal(e.manager, 'kubectl');
    assert.equal(e.operation, 'Apply');
    assert.equal(e.apiVersion, 'apps/v1');
    assert.equal(e.time, '2024-05-01T10:00:00Z');
    assert.equal(e.fieldsType, 'FieldsV1');
    assert.deepEqual(e.fieldsV1, {
      'f:metadata': { 'f:labels': { 'f:app': {} } },
      'f:spec': {
        'f:replicas': {},
        'f:selector': { 'f:matchLabels': { 'f:app': {} } },
        'f:template': {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:containers': { 'k:{"name":"app"}': { '.': {}, 'f:image': {}, 'f:name': {} } },
          },
        },
      },
    });
    assert.equal(Object.hasOwn(applied.metadata, 'managedFields'), false, 'input not mutated');
  });

  test('invalid configurations are 400', () => {
    const bad: [string, Any][] = [
      ['apiVersion', { kind: 'Deployment', metadata: { name: 'x' } }],
      ['kind', { apiVersion: 'apps/v1', metadata: { name: 'x' } }],
      ['metadata.name', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: {} }],
      ['directive', { ...config(), spec: { $patch: 'replace' } }],
    ];
    for (const [what, applied] of bad) {
      assert.throws(
        () => apply(undefined, applied, 'kubectl'),
        (e: unknown) => e instanceof PatchError && e.status === 400,
        what,
      );
    }
    assert.throws(
      () => apply(undefined, config(), ''),
      (e: unknown) => e instanceof PatchError && e.status === 400,
    );
    assert.throws(
      () => apply(undefined, config(), 'x'.repeat(129)),
      (e: unknown) => e instanceof PatchError && e.status === 400,
    );
  });
});

describe('server-side apply: update', () => {
  test('changes apply, live-only fields stay, identity and status are kept', () => {
    const live = stored(apply(undefined, config({ replicas: 1 }), 'kubectl'));
    live.metadata.annotations = { 'set-by': 'someone-else' };
    const snapshot = structuredClone(live);
    const out = apply(live, config({ replicas: 3, image: 'app:2' }), 'kubectl');
    assert.equal(out.spec.replicas, 3);
    assert.equal(out.spec.template.spec.containers[0].image, 'app:2');
    assert.equal(out.metadata.uid, 'uid-1');
    assert.equal(out.metadata.resourceVersion, '5');
    assert.deepEqual(out.status, { replicas: 1 });
    assert.deepEqual(out.metadata.annotations, { 'set-by': 'someone-else' });
    assert.equal(out.metadata.managedFields.length, 1);
    assert.deepEqual(live, snapshot, 'live not mutated');
  });

  test('applying the same configuration again changes nothing, not even the entry time (no new resourceVersion)', () => {
    const live = stored(apply(undefined, config({ replicas: 2 }), 'kubectl'));
    const later = (applied: Any) =>
      applyServerSideApply(live, applied, {
        fieldManager: 'kubectl',
        kindKey: 'apps/Deployment',
        force: false,
        now: new Date('2024-06-01T00:00:00Z'),
      });
    assert.deepEqual(later(config({ replicas: 2 })), live);
    assert.equal(entry(later(config({ replicas: 3 })), 'kubectl')!.time, '2024-06-01T00:00:00Z', 'a change stamps the new time');
  });

  test('fields the manager stops applying are removed', () => {
    const first = config({
      replicas: 2,
      labels: { app: 'web', tier: 'front' },
      env: [
        { name: 'A', value: '1' },
        { name: 'B', value: '2' },
      ],
      extra: [{ name: 'side', image: 's:1' }],
    });
    const live = stored(apply(undefined, first, 'kubectl'));
    const out = apply(live, config({ env: [{ name: 'A', value: '1' }] }), 'kubectl');
    assert.equal('replicas' in out.spec, false);
    assert.deepEqual(out.metadata.labels, { app: 'web' });
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'app', image: 'app:1', env: [{ name: 'A', value: '1' }] }]);
    const fields = entry(out, 'kubectl')!.fieldsV1;
    assert.equal('f:replicas' in fields['f:spec'], false);
  });

  test('removing the last field of a list removes the emptied list', () => {
    const live = stored(apply(undefined, config({ env: [{ name: 'A', value: '1' }] }), 'kubectl'));
    const out = apply(live, config(), 'kubectl');
    assert.deepEqual(out.spec.template.spec.containers, [{ name: 'app', image: 'app:1' }]);
  });

  test('fields not owned by the manager are never removed', () => {
    const live = stored(apply(undefined, config(), 'kubectl'));
    live.spec.paused = true; // set by a plain update, no managedFields entry
    const out = apply(live, config(), 'kubectl');
    assert.equal(out.spec.paused, true);
  });
});

describe('server-side apply: ownership between managers', () => {
  test('another Apply manager changing an owned field is a 409 listing the conflict', () => {
    const live = stored(apply(undefined, config({ replicas: 1 }), 'alice'));
    const snapshot = structuredClone(live);
    assert.throws(
      () => apply(live, config({ replicas: 5 }), 'bob'),
      (e: unknown) => {
        assert.ok(e instanceof PatchError);
        assert.equal(e.status, 409);
        assert.equal(e.message, 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
        assert.deepEqual(e.conflicts, [{ manager: 'alice', field: '.spec.replicas', message: 'conflict with "alice"' }]);
        return true;
      },
    );
    assert.deepEqual(live, snapshot);
  });

  test('several conflicts are grouped by manager, as Kubernetes words them', () => {
    let live = stored(apply(undefined, config({ replicas: 1 }), 'alice'));
    live = apply(live, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { owner: 'carol' } } }, 'carol');
    const applied = config({ replicas: 2, image: 'app:9', labels: { app: 'web', owner: 'bob' } });
    assert.throws(
      () => apply(live, applied, 'bob'),
      (e: unknown) => {
        assert.ok(e instanceof PatchError && e.status === 409);
        assert.equal(
          e.message,
          'Apply failed with 3 conflicts: conflicts with "alice":\n' +
            '- .spec.replicas\n' +
            '- .spec.template.spec.containers[name="app"].image\n' +
            'conflicts with "carol":\n' +
            '- .metadata.labels.owner',
        );
        return true;
      },
    );
  });

  test('applying the same value shares ownership without conflict', () => {
    const live = stored(apply(undefined, config({ replicas: 1 }), 'alice'));
    const out = apply(live, config({ replicas: 1 }), 'bob');
    assert.deepEqual(entry(out, 'alice')!.fieldsV1['f:spec']['f:replicas'], {});
    assert.deepEqual(entry(out, 'bob')!.fieldsV1['f:spec']['f:replicas'], {});
    // alice dropping the shared field leaves it: bob still owns it
    const after = apply(out, config(), 'alice');
    assert.equal(after.spec.replicas, 1);
  });

  test('force moves ownership of conflicting fields', () => {
    const live = stored(apply(undefined, config({ replicas: 1 }), 'alice'));
    const forced = apply(
      live,
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 7 } },
      'hpa',
      true,
    );
    assert.equal(forced.spec.replicas, 7);
    assert.equal('f:replicas' in entry(forced, 'alice')!.fieldsV1['f:spec'], false);
    assert.deepEqual(entry(forced, 'hpa')!.fieldsV1, { 'f:spec': { 'f:replicas': {} } });
    // alice re-applies without replicas: the field now belongs to hpa and stays
    const after = apply(forced, config(), 'alice');
    assert.equal(after.spec.replicas, 7);
    assert.deepEqual(
      after.metadata.managedFields.map((e: Any) => e.manager),
      ['alice', 'hpa'],
    );
  });

  test('Update managers do not conflict but lose fields whose value changes', () => {
    const live = stored(apply(undefined, config({ replicas: 1 }), 'alice'));
    live.metadata.managedFields.push({
      manager: 'kubectl-edit',
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: '2024-01-01T00:00:00Z',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:paused': {} }, 'f:metadata': { 'f:labels': { 'f:app': {} } } },
    });
    live.spec.paused = true;
    const out = apply(live, { ...config({ replicas: 1 }), spec: { ...config({ replicas: 1 }).spec, paused: false } }, 'alice');
    assert.equal(out.spec.paused, false);
    const edit = out.metadata.managedFields.find((e: Any) => e.manager === 'kubectl-edit');
    assert.deepEqual(edit.fieldsV1, { 'f:metadata': { 'f:labels': { 'f:app': {} } } });
  });

  test('a list item co-owned by another manager survives when one manager drops it', () => {
    const live = stored(apply(undefined, config({ extra: [{ name: 'side', image: 's:1' }] }), 'alice'));
    const bobsView = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { containers: [{ name: 'side', env: [{ name: 'X', value: 'y' }] }] } } },
    };
    const withBob = apply(live, bobsView, 'bob');
    const out = apply(withBob, config(), 'alice');
    assert.deepEqual(out.spec.template.spec.containers, [
      { name: 'app', image: 'app:1' },
      { name: 'side', env: [{ name: 'X', value: 'y' }] },
    ]);
  });
});

describe('server-side apply: kinds and validation against live', () => {
  test('custom resources treat lists as atomic', () => {
    const cr = (items: Any[]) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { items } });
    const live = apply(undefined, cr([{ name: 'a' }, { name: 'b' }]), 'm', false, 'example.com/Widget');
    assert.deepEqual(entry(live, 'm')!.fieldsV1, { 'f:spec': { 'f:items': {} } });
    const out = apply(live, cr([{ name: 'c' }]), 'm', false, 'example.com/Widget');
    assert.deepEqual(out.spec.items, [{ name: 'c' }]);
  });

  test('finalizers are owned per value', () => {
    const cm = (finalizers: string[]) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', finalizers } });
    const live = apply(undefined, cm(['a', 'b']), 'm', false, '/ConfigMap');
    assert.deepEqual(entry(live, 'm')!.fieldsV1, { 'f:metadata': { 'f:finalizers': { 'v:"a"': {}, 'v:"b"': {} } } });
    const out = apply(live, cm(['a']), 'm', false, '/ConfigMap');
    assert.deepEqual(out.metadata.finalizers, ['a']);
  });

  test('a configuration for another kind or name is 400', () => {
    const live = stored(apply(undefined, config(), 'kubectl'));
    assert.throws(
      () => apply(live, { ...config(), kind: 'StatefulSet' }, 'kubectl'),
      (e: unknown) => e instanceof PatchError && e.status === 400,
    );
    assert.throws(
      () => apply(live, { ...config(), metadata: { name: 'other' } }, 'kubectl'),
      (e: unknown) => e instanceof PatchError && e.status === 400 && /does not match/.test(e.message),
    );
  });

  test('managedFields in the configuration are ignored', () => {
    const applied = { ...config(), metadata: { ...config().metadata, managedFields: [{ manager: 'evil' }] } };
    const out = apply(undefined, applied, 'kubectl');
    assert.deepEqual(
      out.metadata.managedFields.map((e: Any) => e.manager),
      ['kubectl'],
    );
  });
});
