/**
 * Request targets below a cluster's server URL, which may carry a path prefix (a Rancher-style proxy serves a cluster
 * at `https://host/k8s/clusters/c1`). The path is checked with the shared rules (src/shared/kube-path.ts) and then
 * appended to the prefix as text: nothing re-resolves it, so no `..`, backslash or encoded separator can leave the
 * prefix and reach the host with the agent's credentials (docs/kubectl.md, "Paths").
 */
import type http from 'node:http';
import { urlToHttpOptions } from 'node:url';
import { clusterPathProblem, kubePathProblem } from '../../shared/kube-path.js';

/** Where one request goes: `url` for messages, `options` (host, port, the exact `path`) for `http(s).request`. */
export interface ClusterTarget {
  url: URL;
  options: http.RequestOptions & { path: string };
}

/** Thrown for a path the rules refuse; nothing was sent. */
export class ClusterPathError extends Error {}

/** Targets below one server URL. */
export interface ClusterUrls {
  /** `pathAndQuery` as the proxy passes it (checked with {@link kubePathProblem}); throws {@link ClusterPathError}. */
  raw(pathAndQuery: string): ClusterTarget;
  /** An API path of the agent's own (no `?`) and its query parameters; throws {@link ClusterPathError}. */
  api(path: string, query?: Record<string, string | number | boolean | undefined>): ClusterTarget;
}

/** Reads the server URL once (`https://host:6443`, `https://host/k8s/clusters/c1/`); throws when it is not one. */
export function createClusterUrls(server: string): ClusterUrls {
  const base = new URL(server);
  const prefix = base.pathname.replace(/\/+$/, '');
  const { protocol, hostname, port, auth } = urlToHttpOptions(base);
  const hostOptions: http.RequestOptions = { protocol, hostname, ...(port ? { port } : {}), ...(auth ? { auth } : {}) };

  function target(pathAndQuery: string): ClusterTarget {
    const path = prefix + pathAndQuery;
    // For messages only (the path was checked, so parsing it changes nothing): what is sent is `options.path`.
    return { url: new URL(base.origin + path), options: { ...hostOptions, path } };
  }

  return {
    raw(pathAndQuery) {
      const problem = kubePathProblem(pathAndQuery);
      if (problem) throw new ClusterPathError(problem);
      return target(pathAndQuery);
    },
    api(path, query = {}) {
      const problem = clusterPathProblem(path);
      if (problem) throw new ClusterPathError(`${problem}: ${JSON.stringify(path.slice(0, 200))}`);
      const params = new URLSearchParams();
      for (const [key, value] of Object.entries(query)) if (value !== undefined) params.set(key, String(value));
      const search = params.toString();
      return target(search === '' ? path : `${path}?${search}`);
    },
  };
}
