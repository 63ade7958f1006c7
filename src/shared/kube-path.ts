/**
 * What a proxied Kubernetes API path may look like (docs/kubectl.md, "Paths"), checked by the gateway at admission
 * and again by the agent before it builds a cluster URL: ONE canonical form, the one every URL parser reads the same
 * way. Every later hop (a forward to another replica, the agent, the cluster URL below a path prefix) is built from
 * the checked path by concatenation, never by re-resolving text — so what was checked is what is sent.
 *
 * Refused: anything not starting with one `/`; raw spaces, control characters, characters outside printable ASCII
 * and `#`; a backslash (a WHATWG URL parser reads it as `/`, so `x\..\..\` would become dot segments); percent signs
 * not followed by two hex digits; in the path (not the query) encoded separators (`%2f`, `%5c`), encoded control
 * characters and `.`/`..` segments, raw or percent-encoded; and anything else whose WHATWG-normalised form differs
 * from the text. Encoded characters in the query are data (an exec command may hold a newline) and stay allowed.
 */

const PARSE_BASE = 'http://kube.invalid';

/** Why `pathAndQuery` may not be proxied, or undefined when it may. */
export function kubePathProblem(pathAndQuery: string): string | undefined {
  if (!pathAndQuery.startsWith('/') || pathAndQuery.startsWith('//')) return 'the path must start with a single "/"';
  if (/[\u0000-\u0020\u007f]/.test(pathAndQuery)) return 'the path holds spaces or control characters';
  if (/[^\u0021-\u007e]/.test(pathAndQuery)) return 'the path holds characters outside printable ASCII (percent-encode them)';
  if (pathAndQuery.includes('\\')) return 'the path holds a "\\", which URL parsers read as "/"';
  if (pathAndQuery.includes('#')) return 'the path holds a "#"';
  if (/%(?![0-9a-fA-F]{2})/.test(pathAndQuery)) return 'the path holds a "%" that is not valid percent-encoding';
  const path = pathAndQuery.split('?', 1)[0]!;
  if (/%(2f|5c)/i.test(path)) return 'the path holds an encoded "/" or "\\" (%2F, %5C)';
  if (/%([01][0-9a-f]|7f)/i.test(path)) return 'the path holds an encoded control character';
  for (const segment of path.split('/')) {
    const plain = segment.replace(/%2e/gi, '.');
    if (plain === '.' || plain === '..') return 'the path holds a "." or ".." segment';
  }
  const parsed = new URL(pathAndQuery, PARSE_BASE);
  if (parsed.href.slice(parsed.origin.length) !== pathAndQuery) return 'a URL parser reads the path differently (percent-encode it)';
  return undefined;
}

/**
 * A path below a cluster's API root for the agent's own calls (a collection, an object, a subresource; the query is
 * given apart): the same rules as {@link kubePathProblem}, and no `?` in it. Why it may not be used, or undefined.
 */
export function clusterPathProblem(path: string): string | undefined {
  if (path.includes('?')) return 'the path holds a "?"';
  return kubePathProblem(path);
}
