/**
 * JSON-level mutations of a valid request body: a value replaced by one of another type or a hostile string, a key
 * removed, renamed or added, the whole body wrapped or replaced; text-level damage (truncation, a byte flipped, a
 * duplicate key, invalid UTF-8, deep nesting); and random JSON. Structural mutations keep the body parseable so it
 * reaches the server's validation, text mutations test the parser in front of it.
 */
import type { Rng } from '../../testkit/rng.js';
import { flipBits, truncate } from './byte-mutations.js';
import { hostileString } from './hostile-strings.js';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A mutated body (as bytes, since some mutations are not valid UTF-8) and what was done. */
export interface MutatedJson {
  body: Uint8Array;
  how: string;
}

const encoder = new TextEncoder();

/** A value of a random type: hostile strings, numbers at the edges, nested containers. */
export function randomJson(rng: Rng, depth = 0): Json {
  switch (rng.int(0, depth > 3 ? 4 : 6)) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.pick([0, -1, 1.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53 + 1, 1e308, -1e-308, 4294967296, Number.MAX_SAFE_INTEGER]);
    case 3:
    case 4:
      return hostileString(rng);
    case 5:
      return Array.from({ length: rng.int(0, 4) }, () => randomJson(rng, depth + 1));
    default: {
      const out: Record<string, Json> = {};
      for (let i = rng.int(0, 4); i > 0; i--) {
        const key = rng.chance(0.5)
          ? hostileString(rng)
          : rng.pick(['name', 'account', 'id', 'state', 'kind', 'spec', '__proto__', 'constructor']);
        // defineProperty: a plain assignment to "__proto__" would set the prototype instead of adding the key
        Object.defineProperty(out, key, { value: randomJson(rng, depth + 1), enumerable: true, writable: true, configurable: true });
      }
      return out;
    }
  }
}

/** Every path to a value inside `value` (the root is `[]`). */
function paths(value: Json, prefix: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => paths(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) paths(v, [...prefix, k], out);
  return out;
}

function getAt(value: Json, path: (string | number)[]): Json {
  return path.reduce<Json>((v, k) => (v as Record<string | number, Json>)[k]!, value);
}

/** A structurally mutated copy of `base` (still JSON). */
export function mutateStructure(rng: Rng, base: Json): { value: Json; how: string } {
  const value = structuredClone(base);
  const all = paths(value);
  const path = rng.pick(all);
  const where = path.length === 0 ? '(root)' : path.join('.');
  if (path.length === 0) {
    const choice = rng.int(0, 2);
    if (choice === 0) return { value: [value], how: 'body wrapped in an array' };
    if (choice === 1) return { value: randomJson(rng), how: 'body replaced by a random value' };
    return { value: { ...(value as object), [hostileString(rng)]: randomJson(rng) }, how: 'unknown key added at the root' };
  }
  const parent = getAt(value, path.slice(0, -1)) as Record<string | number, Json>;
  const key = path[path.length - 1]!;
  switch (rng.int(0, 4)) {
    case 0:
      parent[key] = hostileString(rng);
      return { value, how: `${where} = hostile string` };
    case 1:
      parent[key] = randomJson(rng);
      return { value, how: `${where} = random value` };
    case 2:
      if (Array.isArray(parent)) parent.splice(Number(key), 1);
      else delete parent[key];
      return { value, how: `${where} removed` };
    case 3:
      if (Array.isArray(parent)) {
        parent.push(structuredClone(parent[Number(key)]!));
        return { value, how: `${where} repeated` };
      }
      parent[`${String(key)}${rng.pick(['_', 'X', ' ', ''])}${rng.int(0, 9)}`] = parent[key]!;
      delete parent[key];
      return { value, how: `${where} renamed` };
    default:
      parent[key] = rng.pick<Json>([null, [], {}, '', 0, -1, true, 'x'.repeat(rng.int(1000, 70_000))]);
      return { value, how: `${where} = edge value` };
  }
}

/** A text-level mutation of the JSON text of `base`. */
function mutateText(rng: Rng, base: Json): MutatedJson {
  const text = JSON.stringify(base);
  const bytes = encoder.encode(text);
  switch (rng.int(0, 6)) {
    case 0: {
      const m = truncate(rng, bytes);
      return { body: m.bytes, how: `JSON ${m.how}` };
    }
    case 1: {
      const m = flipBits(rng, bytes);
      return { body: m.bytes, how: `JSON ${m.how}` };
    }
    case 2:
      if (text.startsWith('{') && text.length > 2) {
        const dup = text.slice(1).split(',')[0]!.replace(/}$/, '');
        return { body: encoder.encode(`{${dup},${text.slice(1)}`), how: 'duplicate key' };
      }
      return { body: encoder.encode(`${text}${text}`), how: 'two JSON values' };
    case 3: {
      const at = rng.int(0, bytes.length);
      const bad = rng.pick([
        Uint8Array.of(0xff),
        Uint8Array.of(0xc3),
        Uint8Array.of(0xed, 0xa0, 0x80),
        Uint8Array.of(0),
        Uint8Array.of(0xef, 0xbb, 0xbf),
      ]);
      const out = new Uint8Array(bytes.length + bad.length);
      out.set(bytes.slice(0, at));
      out.set(bad, at);
      out.set(bytes.slice(at), at + bad.length);
      return { body: out, how: `bytes ${Array.from(bad, (b) => b.toString(16)).join(' ')} inserted at ${at}` };
    }
    case 4: {
      const depth = rng.int(100, 5000);
      return { body: encoder.encode('['.repeat(depth) + ']'.repeat(depth)), how: `nesting ${depth} deep` };
    }
    case 5:
      return {
        body: encoder.encode(rng.pick(['', ' ', 'null', '[]', '"x"', '1', 'NaN', '{"a":1', '{a:1}', "{'a':1}", '\u0000'])),
        how: 'not a request object',
      };
    default:
      return { body: encoder.encode(JSON.stringify(randomJson(rng))), how: 'random JSON' };
  }
}

/** Any JSON mutation: structural (re-serialized) two times in three, textual otherwise. */
export function mutateJson(rng: Rng, base: Json): MutatedJson {
  if (rng.chance(2 / 3)) {
    const { value, how } = mutateStructure(rng, base);
    return { body: encoder.encode(JSON.stringify(value)), how };
  }
  return mutateText(rng, base);
}
