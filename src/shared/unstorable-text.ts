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

/** What keeps Postgres from storing `text` (a NUL character, a lone surrogate), or undefined when nothing does. */
export function textProblem(text: string): string | undefined {
  if (text.includes('\u0000')) return 'contains a NUL character (\\u0000)';
  if (hasLoneSurrogate(text)) return 'contains a lone UTF-16 surrogate (not valid Unicode)';
  return undefined;
}

/**
 * What is wrong with the first string or object key inside `value` that holds a NUL character or a lone surrogate
 * (`body[0].properties.team contains a NUL character (\u0000)`), or undefined when none does. Walks plain objects,
 * arrays and protobuf-es messages (skipping bytes and `$typeName`); `prefix` names the root.
 */
export function findUnstorableText(value: unknown, prefix = ''): string | undefined {
  // An explicit stack, not recursion: a hostile body may nest thousands of levels deep.
  const stack: [unknown, string][] = [[value, prefix]];
  while (stack.length > 0) {
    const [item, path] = stack.pop()!;
    if (typeof item === 'string') {
      const problem = textProblem(item);
      if (problem) return `${path || '(value)'} ${problem}`;
      continue;
    }
    if (item === null || typeof item !== 'object' || item instanceof Uint8Array) continue;
    // Stryker disable next-line ArrayDeclaration: a starting entry would be a fixed clean string, walked and passed; no input can tell
    const children: [unknown, string][] = [];
    if (Array.isArray(item)) item.forEach((child, i) => children.push([child, `${path}[${i}]`]));
    else {
      for (const [key, child] of Object.entries(item)) {
        if (key === '$typeName') continue;
        const problem = textProblem(key);
        if (problem) return `a key of ${path || '(root)'} ${problem}`;
        // The key passed the check: the path names only keys free of what it reports.
        children.push([child, path ? `${path}.${key}` : key]);
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}
