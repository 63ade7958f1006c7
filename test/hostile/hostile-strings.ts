/**
 * Strings an attacker or a broken client sends where a name, a path segment or a value is expected: SQL, quotes,
 * path traversal, control characters, NUL, unicode that changes length or direction, very long text, template and
 * format syntax. The fixed corpus is mixed with random text so every run tries new shapes.
 */
import type { Rng } from '../../testkit/rng.js';

/** Hand-picked hostile strings (each one has broken some server somewhere). */
const HOSTILE_STRINGS: readonly string[] = [
  "x'; drop table accounts;--",
  "' or '1'='1",
  '"; delete from objects; --',
  "a' union select session_token_hash from agent_sessions --",
  '$1',
  '%s%s%s%n',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection probe, sent as plain text
  '${process.exit()}',
  '{{7*7}}',
  '../../etc/passwd',
  '..\\..\\windows',
  '%2e%2e%2f',
  '/',
  '\\',
  '',
  ' ',
  '\t\n\r',
  '\u0000',
  'a\u0000b',
  '\u0007\u001b[31m',
  '\u202eevil\u202c',
  '\ufeffbom',
  'Ω≈ç√∫',
  '日本語',
  '😀'.repeat(10),
  '\ud800',
  'e\u0301\u0301\u0301',
  'A'.repeat(254),
  'a'.repeat(10_000),
  '-1',
  '0',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '<script>alert(1)</script>',
  'prod-1\nInjected-Header: yes',
  'name with spaces',
  'UPPER',
  '-leading-dash',
  'trailing-dot.',
  '*',
  '?',
  '#',
  '%',
  '%00',
  '%zz',
];

/** Random text of up to `max` code units from a mix of alphabets, controls and surrogates. */
export function randomText(rng: Rng, max = 40): string {
  const length = rng.int(0, max);
  let out = '';
  for (let i = 0; i < length; i++) {
    const pool = rng.int(0, 9);
    if (pool < 5) out += String.fromCharCode(rng.int(0x20, 0x7e));
    else if (pool < 6) out += String.fromCharCode(rng.int(0, 0x1f));
    else if (pool < 8) out += String.fromCharCode(rng.int(0xa0, 0x2fff));
    else if (pool < 9) out += String.fromCodePoint(rng.int(0x1f300, 0x1f64f));
    else out += String.fromCharCode(rng.int(0xd800, 0xdfff));
  }
  return out;
}

/** A hostile string: mostly from the corpus, sometimes random, sometimes a corpus entry glued to a plausible name. */
export function hostileString(rng: Rng): string {
  const choice = rng.int(0, 9);
  if (choice < 6) return rng.pick(HOSTILE_STRINGS);
  if (choice < 8) return randomText(rng);
  return `prod-${rng.int(0, 99)}${rng.pick(HOSTILE_STRINGS)}`;
}
