/**
 * JSON values as `kubectl get -o json` prints them, byte for byte: Go's `json.MarshalIndent(obj, "", "    ")` of the
 * object kubectl decoded into plain maps, so every object's keys are sorted by their bytes (not kept in the API
 * server's order), four spaces per level, and `<`, `>`, `&`, U+2028 and U+2029 inside strings escaped as `\u003c`…
 * (Go's HTML-safe default), then one newline.
 */
import type { JsonValue } from '@bufbuild/protobuf';

/** Go's order of map keys: by their UTF-8 bytes. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** A string as Go's encoder writes it. kubectl built with Go before 1.22 writes \b and \f as \u0008 and \u000c. */
function goString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function encode(value: JsonValue, indent: string): string {
  if (value === null || typeof value !== 'object') return typeof value === 'string' ? goString(value) : JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((v) => `${inner}${encode(v, inner)}`).join(',\n')}\n${indent}]`;
  }
  const keys = Object.keys(value).sort(byteOrder);
  if (keys.length === 0) return '{}';
  return `{\n${keys.map((k) => `${inner}${goString(k)}: ${encode(value[k]!, inner)}`).join(',\n')}\n${indent}}`;
}

/** `value` as kubectl's JSON, ending in a newline. The caller passes what kubectl would print (see toKubectlYaml). */
export function toKubectlJson(value: JsonValue): string {
  return `${encode(value, '')}\n`;
}
