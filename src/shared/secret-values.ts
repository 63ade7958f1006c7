/**
 * Recognising a Secret's values where they do not belong: in a Secret's own metadata (copied there by some client,
 * ./secret-scrub.ts removes it) and in error messages (a cluster's "Invalid value: …" echo, which the gateway and the
 * agent redact). Only what holds a value literally is recognised — as stored (base64), decoded, or trimmed; a value
 * someone re-encoded on purpose cannot be told from ordinary text.
 *
 * Tiny values would match everything (a 1-byte value is in most strings), so a value shorter than
 * {@link MIN_CONTAINED_LENGTH} characters is recognised only whole: a metadata string that *is* the value, or the value
 * quoted in a message (`"abc"`, as Kubernetes quotes a bad value). Longer values are recognised anywhere inside.
 */
import { isUtf8 } from 'node:buffer';

/** Values at least this long are recognised inside longer text; shorter ones only whole. */
const MIN_CONTAINED_LENGTH = 8;

/** What a reader sees instead of a Secret value. */
export const REDACTED = '<redacted>';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const utf8 = new TextDecoder();

/** `value`'s base64 decoding as text, or undefined when it is not base64 of UTF-8 text. */
function decodedText(value: string): string | undefined {
  if (!/^[A-Za-z0-9+/\s]*={0,2}\s*$/.test(value)) return undefined;
  const bytes = Buffer.from(value, 'base64');
  return isUtf8(bytes) ? utf8.decode(bytes) : undefined;
}

/**
 * The forms under which a Secret's values could appear elsewhere: each `data` value as stored (base64) and its decoded
 * text, each `stringData` value, and each of those trimmed (a file's trailing newline). Empty strings are left out.
 * `secret` is a Secret object or any object with `data`/`stringData` maps (a manifest, a merge patch).
 */
export function secretValuesOf(secret: Record<string, unknown>): string[] {
  const out = new Set<string>();
  const add = (text: string | undefined) => {
    if (text === undefined) return;
    for (const form of [text, text.trim()]) if (form !== '') out.add(form);
  };
  if (isRecord(secret.data)) {
    for (const value of Object.values(secret.data)) {
      if (typeof value !== 'string') continue;
      add(value);
      add(decodedText(value));
    }
  }
  if (isRecord(secret.stringData)) for (const value of Object.values(secret.stringData)) if (typeof value === 'string') add(value);
  return [...out];
}

/** Recognises one set of values (see the module comment). */
export interface SecretValueMatcher {
  /** True when there is no value to recognise. */
  readonly empty: boolean;
  /** True when `text` is one of the values, or contains one at least {@link MIN_CONTAINED_LENGTH} long. */
  holds(text: string): boolean;
  /**
   * True when `text` contains a value at least {@link MIN_CONTAINED_LENGTH} long: for names (keys) chosen by a
   * writer, where a short value would be a common word rather than a copy.
   */
  contains(text: string): boolean;
  /**
   * `text` with every value at least {@link MIN_CONTAINED_LENGTH} long (also as escaped inside a quoted string) and
   * every quoted shorter value replaced by {@link REDACTED}.
   */
  redact(text: string): string;
}

/** Creates a matcher for `values` (empty strings are ignored). */
export function createSecretValueMatcher(values: Iterable<string>): SecretValueMatcher {
  const whole = new Set<string>();
  for (const value of values) if (value !== '') whole.add(value);
  const long = [...whole].filter((value) => value.length >= MIN_CONTAINED_LENGTH);
  // [needle, replacement], longest first: a value that contains another is replaced whole.
  const replacements = new Map<string, string>();
  for (const value of whole) {
    if (value.length >= MIN_CONTAINED_LENGTH) {
      replacements.set(value, REDACTED);
      replacements.set(JSON.stringify(value).slice(1, -1), REDACTED);
    } else {
      replacements.set(`"${value}"`, `"${REDACTED}"`);
      replacements.set(JSON.stringify(value), `"${REDACTED}"`);
    }
  }
  const ordered = [...replacements].sort(([a], [b]) => b.length - a.length);
  return {
    empty: whole.size === 0,
    holds: (text) => whole.has(text) || long.some((value) => text.includes(value)),
    contains: (text) => long.some((value) => text.includes(value)),
    redact(text) {
      let out = text;
      for (const [needle, replacement] of ordered) out = out.replaceAll(needle, replacement);
      return out;
    },
  };
}
