/**
 * The Kubernetes verb of an API request, named the way the API server's audit log and RBAC name it (its
 * RequestInfo): a GET of a collection is `list` (or `watch` with `watch=true`), of one object `get`; POST `create`;
 * PUT `update`; PATCH `patch`, or `apply` for a server-side apply (`application/apply-patch+yaml`, which the API server
 * files under `patch`, split out here because the agent's apply and patch operations differ); DELETE of one object
 * `delete`, of a collection `deletecollection`. Paths outside `/api` and `/apis` resources (`/version`, discovery
 * documents) are non-resource requests: the lowercased HTTP method, as the API server reports them. Used to label
 * `outpost_agent_kubernetes_requests_total`, so the set of values stays small.
 */
import type { Query } from './kube-client.js';

/** See the module comment. `path` has no query string; `query` holds the parameters. */
export function kubeVerb(method: string, path: string, query?: Query, contentType?: string): string {
  const parts = path.split('/').filter((p) => p !== '');
  // /api/VERSION/… or /apis/GROUP/VERSION/…
  const rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : undefined;
  if (rest === undefined || rest.length === 0) return method.toLowerCase();
  // namespaces/NS/RESOURCE/… is a namespaced resource; namespaces[/NAME] is the Namespace kind itself.
  const resourceParts = rest[0] === 'namespaces' && rest.length >= 3 ? rest.slice(2) : rest;
  const named = resourceParts.length >= 2;
  const watch = query?.watch === true || query?.watch === 'true' || query?.watch === 1 || query?.watch === '1';
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
      return watch ? 'watch' : named ? 'get' : 'list';
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return contentType?.startsWith('application/apply-patch') ? 'apply' : 'patch';
    case 'DELETE':
      return named ? 'delete' : 'deletecollection';
    default:
      return method.toLowerCase();
  }
}
