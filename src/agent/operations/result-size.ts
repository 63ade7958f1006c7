/**
 * The serialized size of an OperationResult without serializing its objects: the executor checks every result against
 * the stream's message limit, and encoding the objects (google.protobuf.Struct, walked through reflection) only to
 * measure them cost as much as the encoding the stream does afterwards. The objects' size is computed from the JSON
 * values by the Struct wire format (what protobuf-es writes: every map entry with its key and value, every Value with
 * its kind); the rest of the message is encoded as usual (it is small, or a string). Exact, not an estimate: the
 * tests compare it with `toBinary` on every kind of JSON value.
 */
import { toBinary } from '@bufbuild/protobuf';
import { OperationResultSchema, type OperationResult } from '../../gen/outpost/agent/v1/operation_pb.js';

/** Bytes of a varint holding `n` (a length: 0 ≤ n < 2^53). */
function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** A length-delimited field of `inner` bytes with a one-byte tag (field numbers 1–15). */
const delimited = (inner: number) => 1 + varintSize(inner) + inner;

/** Size of a google.protobuf.Value holding `value`; undefined for anything that is not a JSON value. */
function valueSize(value: unknown): number | undefined {
  switch (typeof value) {
    case 'string':
      return delimited(Buffer.byteLength(value, 'utf8'));
    case 'number':
      return 9; // number_value: tag + fixed64
    case 'boolean':
      return 2; // bool_value: tag + one byte
    case 'object': {
      if (value === null) return 2; // null_value: tag + enum 0
      if (Array.isArray(value)) {
        const list = listSize(value);
        return list === undefined ? undefined : delimited(list);
      }
      const struct = structSize(value);
      return struct === undefined ? undefined : delimited(struct);
    }
    default:
      return undefined;
  }
}

/** Size of a google.protobuf.ListValue holding `items`. */
function listSize(items: unknown[]): number | undefined {
  let size = 0;
  for (const item of items) {
    const v = valueSize(item);
    if (v === undefined) return undefined;
    size += delimited(v);
  }
  return size;
}

/** Size of a google.protobuf.Struct holding `object` (a plain JSON object); undefined for anything else. */
export function structSize(object: object): number | undefined {
  const proto = Object.getPrototypeOf(object);
  if (proto !== Object.prototype && proto !== null) return undefined;
  let size = 0;
  for (const key in object) {
    if (!Object.hasOwn(object, key)) continue;
    const v = valueSize((object as Record<string, unknown>)[key]);
    if (v === undefined) return undefined;
    size += delimited(delimited(Buffer.byteLength(key, 'utf8')) + delimited(v));
  }
  return size;
}

/** The length of `toBinary(OperationResultSchema, result)`, computed without encoding its objects when they are JSON. */
export function resultSize(result: OperationResult): number {
  if (result.objects.length === 0) return toBinary(OperationResultSchema, result).length;
  let objects = 0;
  for (const object of result.objects) {
    const s = structSize(object);
    if (s === undefined) return toBinary(OperationResultSchema, result).length;
    objects += delimited(s); // objects = 7: a one-byte tag
  }
  return toBinary(OperationResultSchema, { ...result, objects: [] }).length + objects;
}
