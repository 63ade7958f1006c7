/**
 * The protobuf wire size of a message, computed from its descriptor without encoding it. The agent counts the bytes
 * of every data message it writes to the gateway stream (`outpost_agent_bytes_sent_total`); encoding each batch a
 * second time just to measure it (`toBinary(...).length`) cost about 9 ms per 500-event batch — as much as the send
 * itself — while this walk only adds up lengths (strings by `Buffer.byteLength`, bytes by their length).
 *
 * It covers what proto3 messages use: scalars and enums (implicit or explicit presence), nested and repeated messages,
 * packed and unpacked repeated scalars, oneofs. A message with a non-empty map field or a delimited (group) field is
 * measured with `toBinary` instead, so the answer is always exact (a test compares both on real messages).
 */
import { ScalarType, toBinary, type DescField, type DescMessage, type Message } from '@bufbuild/protobuf';
import { FeatureSet_FieldPresence } from '@bufbuild/protobuf/wkt';

/** Raised inside the walk for a shape it does not measure; the caller falls back to encoding. */
class Unmeasured extends Error {}

const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LEN = 2;
const WIRE_FIXED32 = 5;

function varintSize(value: number): number {
  if (value < 0) return 10; // negative int32/enum values are sign-extended to 64 bits
  let size = 1;
  while (value >= 0x80) {
    value = Math.floor(value / 128);
    size++;
  }
  return size;
}

function varintSize64(value: bigint): number {
  if (value < 0n) value = BigInt.asUintN(64, value);
  let size = 1;
  while (value >= 0x80n) {
    value >>= 7n;
    size++;
  }
  return size;
}

const tagSize = (number: number, wireType: number) => varintSize(number * 8 + wireType);

function wireTypeOf(scalar: ScalarType): number {
  switch (scalar) {
    case ScalarType.STRING:
    case ScalarType.BYTES:
      return WIRE_LEN;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return WIRE_FIXED64;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return WIRE_FIXED32;
    default:
      return WIRE_VARINT;
  }
}

/** Size of one scalar value without its tag (strings and bytes include their length prefix). */
function scalarSize(scalar: ScalarType, value: unknown): number {
  switch (scalar) {
    case ScalarType.STRING: {
      const n = Buffer.byteLength(value as string, 'utf8');
      return varintSize(n) + n;
    }
    case ScalarType.BYTES: {
      const n = (value as Uint8Array).length;
      return varintSize(n) + n;
    }
    case ScalarType.BOOL:
      return 1;
    case ScalarType.DOUBLE:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return 8;
    case ScalarType.FLOAT:
    case ScalarType.FIXED32:
    case ScalarType.SFIXED32:
      return 4;
    case ScalarType.INT32:
      return varintSize(value as number);
    case ScalarType.UINT32:
      return varintSize((value as number) >>> 0);
    case ScalarType.SINT32: {
      const v = value as number;
      return varintSize(((v << 1) ^ (v >> 31)) >>> 0);
    }
    case ScalarType.INT64:
    case ScalarType.UINT64:
      return varintSize64(BigInt(value as bigint | string));
    case ScalarType.SINT64: {
      const v = BigInt.asIntN(64, BigInt(value as bigint | string));
      return varintSize64(BigInt.asUintN(64, (v << 1n) ^ (v >> 63n)));
    }
    default:
      throw new Unmeasured();
  }
}

/** Whether an implicit-presence scalar holds its default (and so is not written). */
function isDefaultScalar(scalar: ScalarType, value: unknown): boolean {
  switch (scalar) {
    case ScalarType.STRING:
      return value === '';
    case ScalarType.BYTES:
      return (value as Uint8Array).length === 0;
    case ScalarType.BOOL:
      return value === false;
    case ScalarType.INT64:
    case ScalarType.UINT64:
    case ScalarType.SINT64:
    case ScalarType.FIXED64:
    case ScalarType.SFIXED64:
      return BigInt(value as bigint | string) === 0n;
    default:
      return value === 0;
  }
}

function fieldSize(field: DescField, value: unknown, selectedInOneof: boolean): number {
  switch (field.fieldKind) {
    case 'scalar':
    case 'enum': {
      const scalar = field.fieldKind === 'enum' ? ScalarType.INT32 : field.scalar;
      if (value === undefined) return 0;
      if (!selectedInOneof && field.presence === FeatureSet_FieldPresence.IMPLICIT && isDefaultScalar(scalar, value)) return 0;
      return tagSize(field.number, wireTypeOf(scalar)) + scalarSize(scalar, value);
    }
    case 'message': {
      if (value === undefined) return 0;
      if (field.delimitedEncoding) throw new Unmeasured();
      const inner = messageSize(field.message, value as Record<string, unknown>);
      return tagSize(field.number, WIRE_LEN) + varintSize(inner) + inner;
    }
    case 'list': {
      const items = value as unknown[];
      if (items.length === 0) return 0;
      if (field.listKind === 'message') {
        if (field.delimitedEncoding) throw new Unmeasured();
        let size = 0;
        for (const item of items) {
          const inner = messageSize(field.message, item as Record<string, unknown>);
          size += tagSize(field.number, WIRE_LEN) + varintSize(inner) + inner;
        }
        return size;
      }
      const scalar = field.listKind === 'enum' ? ScalarType.INT32 : field.scalar;
      let payload = 0;
      for (const item of items) payload += scalarSize(scalar, item);
      if (field.packed) return tagSize(field.number, WIRE_LEN) + varintSize(payload) + payload;
      return payload + items.length * tagSize(field.number, wireTypeOf(scalar));
    }
    case 'map':
      if (Object.keys(value as object).length === 0) return 0;
      throw new Unmeasured();
  }
}

function messageSize(schema: DescMessage, message: Record<string, unknown>): number {
  let size = 0;
  for (const field of schema.fields) {
    if (field.oneof !== undefined) {
      const selected = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (selected?.case === field.localName) size += fieldSize(field, selected.value, true);
    } else {
      size += fieldSize(field, message[field.localName], false);
    }
  }
  return size;
}

/** The number of bytes `toBinary(schema, message)` would produce (unknown fields aside). */
export function wireSize<Desc extends DescMessage>(schema: Desc, message: Message): number {
  try {
    return messageSize(schema, message as unknown as Record<string, unknown>);
  } catch (err) {
    if (!(err instanceof Unmeasured)) throw err;
    return toBinary(schema, message as never).length;
  }
}
