/**
 * Text that the gateway cannot store or echo safely: a NUL character (Postgres `text` and `jsonb` refuse it, so a
 * query carrying one fails inside the driver) and a lone UTF-16 surrogate (no UTF-8 encoding exists for it, so
 * `encodeURIComponent` — used for gRPC's `grpc-message` and for Kubernetes API paths — throws). Input holding either
 * (Postgres `jsonb` also refuses an escaped lone surrogate) is refused up front with a typed error instead of failing deep inside a query or an encoder.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** True when `text` contains a lone (unpaired) UTF-16 surrogate. */
export function hasLoneSurrogate(text: string): boolean {
  return LONE_SURROGATE.test(text);
}

/** Replaces each lone surrogate with U+FFFD, so the text has a UTF-8 encoding (ES2024 `toWellFormed`). */
export function wellFormed(text: string): string {
  return hasLoneSurrogate(text) ? text.replace(new RegExp(LONE_SURROGATE, 'g'), '\ufffd') : text;
}

function problemOf(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (hasLoneSurrogate(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/** A key as it may appear in a path of {@link findUnstorableText} (itself free of what it reports). */
function printable(key: string): string {
  return wellFormed(key).replace(/\u0000/g, '\\u0000');
}

/**
 * What is wrong with the first string or object key inside `value` that holds a NUL character or a lone surrogate
 * (`body[0].properties.team contains a NUL character (\u0000)`), or undefined when none does. Walks plain objects,
 * arrays and protobuf-es messages (skipping bytes and `$typeName`); `prefix` names the root.
 */
export function findUnstorableText(value: unknown, prefix = ''): string | undefined {
  if (typeof value === 'string') {
    const problem = problemOf(value);
    return problem && `${prefix || '(value)'} ${problem}`;
  }
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${prefix}[${i}]`);
      if (found) return found;
    }
    return undefined;
  }
  for (const [key, child] of Object.entries(value)) {
    if (key === '$typeName') continue;
    const path = prefix ? `${prefix}.${printable(key)}` : printable(key);
    const problem = problemOf(key);
    if (problem) return `a key of ${prefix || '(root)'} ${problem}`;
    const found = findUnstorableText(child, path);
    if (found) return found;
  }
  return undefined;
}
