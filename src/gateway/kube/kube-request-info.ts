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
}

const LONG_RUNNING_SUBRESOURCES = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

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
    return base;
  }
  if (parts.length === 0) return base;
  let watchPath = false;
  if (parts[0] === 'watch') {
    watchPath = true;
    parts = parts.slice(1);
  }
  const info: KubeRequestInfo = { ...base, resourceRequest: true };
  if (parts[0] === 'namespaces' && parts.length >= 2) {
    info.namespace = parts[1]!;
    if (parts.length === 2 || (parts.length === 3 && (parts[2] === 'status' || parts[2] === 'finalize'))) {
      info.resource = 'namespaces';
      info.name = parts[1]!;
      info.subresource = parts[2] ?? '';
      info.namespace = '';
      parts = [];
    } else {
      parts = parts.slice(2);
    }
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
    case 'PATCH':
      info.verb = 'patch';
      break;
    case 'DELETE':
      info.verb = info.name === '' ? 'deletecollection' : 'delete';
      break;
    default:
      info.verb = m.toLowerCase();
  }
  info.longRunning = info.verb === 'watch' || LONG_RUNNING_SUBRESOURCES.has(info.subresource);
  return info;
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
