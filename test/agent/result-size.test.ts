/**
 * The executor's result size (result-size.ts) is computed without encoding the objects: it must equal the encoded
 * length exactly, for every kind of JSON value, or a result over the stream limit would go out (or a fitting one be
 * refused).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create, toBinary, type JsonObject } from '@bufbuild/protobuf';
import { OperationResultSchema, RevisionSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { resultSize, structSize } from '../../src/agent/operations/result-size.js';

/** A deterministic pseudo-random JSON object of about `depth` levels. */
function randomObject(seed: number, depth: number): JsonObject {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s / 2 ** 31;
  };
  const strings = ['', 'a', 'é', '日本', '😀', 'x'.repeat(127), 'y'.repeat(128), 'z'.repeat(20_000), '\ud800 lone', 'a\u0000b'];
  const value = (d: number): unknown => {
    const r = next();
    if (d <= 0 || r < 0.5) {
      const k = Math.floor(next() * 6);
      return [null, true, false, next() * 1e9 - 5e8, -0, strings[Math.floor(next() * strings.length)]][k];
    }
    if (r < 0.75) return Array.from({ length: Math.floor(next() * 5) }, () => value(d - 1));
    return object(d - 1);
  };
  const object = (d: number): JsonObject => {
    const o: JsonObject = {};
    for (let i = Math.floor(next() * 8); i > 0; i--) o[strings[Math.floor(next() * strings.length)]! + i] = value(d) as never;
    return o;
  };
  return object(depth);
}

describe('result size', () => {
  test('equals the encoded length for objects of every JSON kind, empty and nested, with the other fields set', () => {
    const objects: JsonObject[] = [
      {},
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default', labels: {} }, data: { k: 'v' } },
      { list: [], nested: [[], [{}], [null, 1, 'two', false]], big: 'x'.repeat(300_000) },
    ];
    for (let seed = 1; seed <= 60; seed++) objects.push(randomObject(seed, 1 + (seed % 5)));
    const results = [
      create(OperationResultSchema, {}),
      create(OperationResultSchema, {
        id: 'op-1',
        account: 'prod',
        success: true,
        statusCode: 200,
        message: 'ok',
        objects: objects.slice(0, 3),
      }),
      create(OperationResultSchema, { id: 'op-2', statusCode: -1, reason: 'r', deleted: ['a', 'b'], logs: 'l'.repeat(70_000), objects }),
      create(OperationResultSchema, {
        id: 'op-3',
        objects: [objects[1]!],
        revisions: [create(RevisionSchema, { revision: 3n, name: 'rs', template: objects[4] as JsonObject })],
        duration: { seconds: 1n, nanos: 5 },
        kubernetesDuration: { seconds: 0n, nanos: 999 },
      }),
      ...objects.map((o, i) => create(OperationResultSchema, { id: `op-r${i}`, success: i % 2 === 0, objects: [o, o] })),
    ];
    for (const result of results) assert.equal(resultSize(result), toBinary(OperationResultSchema, result).length, result.id);
  });

  test('anything that is not a plain JSON object is measured by encoding it', () => {
    assert.equal(structSize(new Date(0)), undefined);
    assert.equal(structSize({ a: undefined }), undefined);
    assert.equal(structSize({ a: 1n }), undefined);
  });
});
