/**
 * What a Kubernetes API request is about, read from its method, path and query the way kube-apiserver's RequestInfo
 * does: verb (get, list, watch, create, update, patch, delete, deletecollection), API group, resource, subresource,
 * namespace and name — for the audit log and for telling long-running requests (watches, logs, exec, attach,
 * port-forward, proxy: exempt from the request timeout) from the rest.
 */

/** See the module comment. Empty strings where a part does not apply. */
export interface KubeRequestInfo {
  resourceRequest: boolean;
  verb: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  /** Watches, logs, exec, attach, port-forward and proxy (as kube-apiserver's long-running check). */
  longRunning: boolean;
  /**
   * The `timeout` query parameter in milliseconds (a Go duration, `32s`, `1m30s`: what kubectl's `--request-timeout`
   * sends); undefined when absent or not a duration.
   */
  timeoutMs?: number;
}

const GO_DURATION_UNITS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** Parses a Go duration (`1h2m3.5s`, `500ms`); undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(h|m|s|ms|us|µs|ns))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)/g)) total += Number(amount) * GO_DURATION_UNITS[unit!]!;
  return total;
}

const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** The subresources of a namespace itself. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

function truthy(value: string | null): boolean {
  return value === 'true' || value === '1';
}

/** Reads the request info; `pathAndQuery` is below the cluster's API root (`/api/v1/pods?watch=1`). */
export function kubeRequestInfo(method: string, pathAndQuery: string): KubeRequestInfo {
  const url = new URL(pathAndQuery, 'http://cluster.invalid');
  const m = method.toUpperCase();
  const base: KubeRequestInfo = {
    resourceRequest: false,
    verb: m.toLowerCase(),
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    namespace: '',
    name: '',
    longRunning: false,
  };
  let parts = url.pathname.split('/').filter(Boolean).map(decodeSegment);
  if (parts[0] === 'api' && parts.length >= 2) {
    base.apiVersion = parts[1]!;
    parts = parts.slice(2);
  } else if (parts[0] === 'apis' && parts.length >= 3) {
    base.apiGroup = parts[1]!;
    base.apiVersion = parts[2]!;
    parts = parts.slice(3);
  } else {
    return withTimeout(base, url);
  }
  if (parts.length === 0) return withTimeout(base, url);
  let watchPath = false;
  if (parts[0] === 'watch') {
    watchPath = true;
    parts = parts.slice(1);
  }
  const info: KubeRequestInfo = { ...base, resourceRequest: true };
  // A namespace itself (`namespaces/demo`, its `status` or `finalize`) is read as any resource below; what lies under
  // it (`namespaces/demo/pods/web`) is a namespaced resource.
  if (parts[0] === 'namespaces' && parts.length >= 3 && !(parts.length === 3 && NAMESPACE_SUBRESOURCES.has(parts[2]!))) {
    info.namespace = parts[1]!;
    parts = parts.slice(2);
  }
  if (parts.length > 0) {
    info.resource = parts[0]!;
    info.name = parts[1] ?? '';
    info.subresource = parts[2] ?? '';
  }
  switch (m) {
    case 'GET':
    case 'HEAD':
      info.verb = info.name === '' ? 'list' : 'get';
      if (watchPath || (info.verb === 'list' && truthy(url.searchParams.get('watch')))) info.verb = 'watch';
      break;
    case 'POST':
      info.verb = 'create';
      break;
    case 'PUT':
      info.verb = 'update';
      break;
    case 'DELETE':
      info.verb = info.name === '' ? 'deletecollection' : 'delete';
      break;
    // Any other method (PATCH, …) keeps its own name, lower-cased, as the verb.
  }
  info.longRunning = info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return withTimeout(info, url);
}

function withTimeout(info: KubeRequestInfo, url: URL): KubeRequestInfo {
  const timeout = url.searchParams.get('timeout');
  return timeout === null ? info : { ...info, timeoutMs: parseGoDuration(timeout) };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
