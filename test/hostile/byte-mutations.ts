/**
 * Byte-level mutations of encoded messages: bit flips, truncation, spliced and random bytes, and protobuf-aware ones
 * that keep most of the message well-formed so it reaches deeper code — a field repeated (at the top level or inside
 * a nested message, with the enclosing lengths fixed up), an over-long varint, a length prefix pointing past the end.
 * Every mutation is a pure function of its input and the PRNG.
 */
import type { Rng } from '../../testkit/rng.js';

/** A mutated copy and a short description of what was done. */
export interface Mutated {
  bytes: Uint8Array;
  how: string;
}

/** Random bytes, 0 to `max` long. */
export function randomBytes(rng: Rng, max = 256): Uint8Array {
  const out = new Uint8Array(rng.int(0, max));
  for (let i = 0; i < out.length; i++) out[i] = rng.int(0, 255);
  return out;
}

/** Flips 1–8 random bits. */
export function flipBits(rng: Rng, input: Uint8Array): Mutated {
  const out = Uint8Array.from(input);
  if (out.length === 0) return { bytes: Uint8Array.of(rng.int(0, 255)), how: 'bit flip of nothing: one byte' };
  const flips = rng.int(1, 8);
  for (let i = 0; i < flips; i++) out[rng.int(0, out.length - 1)]! ^= 1 << rng.int(0, 7);
  return { bytes: out, how: `bit flip ×${flips}` };
}

/** Cuts the input at a random point (possibly to nothing). */
export function truncate(rng: Rng, input: Uint8Array): Mutated {
  const at = rng.int(0, Math.max(0, input.length - 1));
  return { bytes: input.slice(0, at), how: `truncated at ${at}/${input.length}` };
}

/** Inserts random bytes at a random point. */
function splice(rng: Rng, input: Uint8Array): Mutated {
  const at = rng.int(0, input.length);
  const junk = randomBytes(rng, 16);
  return { bytes: concat(input.slice(0, at), junk, input.slice(at)), how: `${junk.length} random bytes spliced at ${at}` };
}

/** One protobuf field as found on the wire: where it starts and ends, and where its payload is (length-delimited). */
interface WireField {
  start: number;
  end: number;
  wireType: number;
  payloadStart: number;
}

/** The top-level fields of `bytes`, or undefined when they do not parse as protobuf wire format. */
function wireFields(bytes: Uint8Array): WireField[] | undefined {
  const fields: WireField[] = [];
  let pos = 0;
  while (pos < bytes.length) {
    const start = pos;
    const tag = readVarint(bytes, pos);
    if (!tag || tag.value === 0) return undefined;
    pos = tag.next;
    const wireType = tag.value % 8;
    let payloadStart = pos;
    if (wireType === 0) {
      const v = readVarint(bytes, pos);
      if (!v) return undefined;
      pos = v.next;
    } else if (wireType === 1) pos += 8;
    else if (wireType === 5) pos += 4;
    else if (wireType === 2) {
      const len = readVarint(bytes, pos);
      if (!len) return undefined;
      payloadStart = len.next;
      pos = len.next + len.value;
    } else return undefined;
    if (pos > bytes.length) return undefined;
    fields.push({ start, end: pos, wireType, payloadStart });
  }
  return fields;
}

/**
 * Repeats one field: at the top level, or (half the time, when it parses) inside a nested message, fixing the
 * length prefixes on the way out. A repeated scalar or message field of proto3 is legal (last one wins, or merged);
 * a repeated list entry (an account in a Hello) is what validation must catch.
 */
function duplicateField(rng: Rng, input: Uint8Array, depth = 0): Mutated {
  const fields = wireFields(input);
  if (!fields || fields.length === 0) return flipBits(rng, input);
  const field = rng.pick(fields);
  if (field.wireType === 2 && depth < 4 && rng.chance(0.5)) {
    const payload = input.slice(field.payloadStart, field.end);
    if (wireFields(payload)?.length) {
      const inner = duplicateField(rng, payload, depth + 1);
      const head = input.slice(field.start, field.payloadStart);
      const tagEnd = readVarint(head, 0)!.next;
      const rebuilt = concat(head.slice(0, tagEnd), encodeVarint(inner.bytes.length), inner.bytes);
      return { bytes: concat(input.slice(0, field.start), rebuilt, input.slice(field.end)), how: `${inner.how} (nested ${depth + 1})` };
    }
  }
  const copy = input.slice(field.start, field.end);
  return { bytes: concat(input.slice(0, field.end), copy, input.slice(field.end)), how: `field at ${field.start} duplicated` };
}

/** Replaces a length-delimited field's length with a huge or past-the-end one, or appends an over-long varint. */
function corruptLength(rng: Rng, input: Uint8Array): Mutated {
  const fields = wireFields(input)?.filter((f) => f.wireType === 2);
  if (!fields || fields.length === 0 || rng.chance(0.3)) {
    return { bytes: concat(input, Uint8Array.of(0x08), new Uint8Array(11).fill(0xff)), how: 'over-long varint appended' };
  }
  const field = rng.pick(fields);
  const head = input.slice(field.start, field.payloadStart);
  const tagEnd = readVarint(head, 0)!.next;
  const length = rng.pick([0xffffffff, 0x7fffffff, field.end - field.payloadStart + rng.int(1, 64)]);
  const rebuilt = concat(head.slice(0, tagEnd), encodeVarint(length), input.slice(field.payloadStart, field.end));
  return { bytes: concat(input.slice(0, field.start), rebuilt, input.slice(field.end)), how: `field length set to ${length}` };
}

/** One mutation chosen at random among all of the above. */
export function mutateBytes(rng: Rng, input: Uint8Array): Mutated {
  switch (rng.int(0, 5)) {
    case 0:
    case 1:
      return flipBits(rng, input);
    case 2:
      return truncate(rng, input);
    case 3:
      return splice(rng, input);
    case 4:
      return duplicateField(rng, input);
    default:
      return corruptLength(rng, input);
  }
}

/** Concatenates byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function readVarint(bytes: Uint8Array, pos: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (pos + i >= bytes.length) return undefined;
    const b = bytes[pos + i]!;
    value += (b & 0x7f) * scale;
    scale *= 128;
    if ((b & 0x80) === 0) return { value, next: pos + i + 1 };
  }
  return undefined;
}

function encodeVarint(value: number): Uint8Array {
  const out: number[] = [];
  let v = value;
  while (v >= 0x80) {
    out.push((v % 128) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Uint8Array.from(out);
}
