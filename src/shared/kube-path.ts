/**
 * What a proxied Kubernetes API path may look like (docs/kubectl.md), checked by the gateway and again by the agent:
 * one leading `/`, no spaces or control characters, and no dot segments (`..`, `.`, also percent-encoded) — a URL
 * parser would resolve them, and below a cluster URL with a path prefix (a Rancher-style proxy) that could leave the
 * cluster's API.
 */

/** Why `pathAndQuery` may not be proxied, or undefined when it may. */
export function kubePathProblem(pathAndQuery: string): string | undefined {
  if (!pathAndQuery.startsWith('/') || pathAndQuery.startsWith('//')) return 'the path must start with a single "/"';
  if (/[\u0000-\u0020\u007f]/.test(pathAndQuery)) return 'the path holds spaces or control characters';
  const path = pathAndQuery.split('?')[0]!;
  for (const segment of path.split('/')) {
    const plain = segment.replace(/%2e/gi, '.');
    if (plain === '.' || plain === '..') return 'the path holds a "." or ".." segment';
  }
  return undefined;
}
