import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { deleteAtPath, fieldSetOf, formatFieldPath, fromFieldsV1, getAtPath, toFieldsV1 } from '../../../src/sandbox/patch/field-set.js';
import { schemaForKind } from '../../../src/sandbox/patch/schema.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'ns', labels: { app: 'a' }, finalizers: ['f1'] },
  spec: {
    containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80 }], args: ['x'] }],
    nodeSelector: {},
  },
};

describe('field sets', () => {
  test('fieldSetOf follows merge keys, primitive sets and atomic lists, skipping identity fields', () => {
    const set = fieldSetOf(pod, schemaForKind('/Pod'));
    assert.deepEqual([...set.values()].map(formatFieldPath).sort(), [
      '.metadata.finalizers[="f1"]',
      '.metadata.labels.app',
      '.spec.containers[name="c"]',
      '.spec.containers[name="c"].args',
      '.spec.containers[name="c"].image',
      '.spec.containers[name="c"].name',
      '.spec.containers[name="c"].ports[containerPort=80]',
      '.spec.containers[name="c"].ports[containerPort=80].containerPort',
      '.spec.nodeSelector',
    ]);
  });

  test('FieldsV1 round-trips and marks members with children by "."', () => {
    const set = fieldSetOf(pod, schemaForKind('/Pod'));
    const v1 = toFieldsV1(set);
    assert.deepEqual((v1['f:spec'] as Record<string, any>)['f:containers']['k:{"name":"c"}']['.'], {});
    assert.deepEqual([...fromFieldsV1(v1).keys()].sort(), [...set.keys()].sort());
    assert.equal(fromFieldsV1('garbage').size, 0);
    assert.equal(fromFieldsV1({ 'f:a': 'not-an-object' }).size, 0);
  });

  test('getAtPath and deleteAtPath resolve f:, k: and v: segments', () => {
    const obj = structuredClone(pod);
    assert.equal(getAtPath(obj, ['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:image']), 'i');
    assert.equal(getAtPath(obj, ['f:metadata', 'f:finalizers', 'v:"f1"']), 'f1');
    assert.equal(getAtPath(obj, ['f:spec', 'f:containers', 'k:{"name":"zz"}']), undefined);
    assert.equal(getAtPath(obj, ['f:spec', 'f:containers', 'k:{bad json']), undefined);
    assert.equal(deleteAtPath(obj, ['f:spec', 'f:containers', 'k:{"name":"c"}', 'f:ports', 'k:{"containerPort":80}']), true);
    assert.deepEqual(obj.spec.containers[0].ports, []);
    assert.equal(deleteAtPath(obj, ['f:metadata', 'f:finalizers', 'v:"f1"']), true);
    assert.deepEqual(obj.metadata.finalizers, []);
    assert.equal(deleteAtPath(obj, ['f:nope', 'f:deeper']), false);
  });
});
