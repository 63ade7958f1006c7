/**
 * Turns a request path and method into what the API server acts on (like kube-apiserver's RequestInfoFactory):
 * a resource request (group, version, namespace, resource, name, subresource, verb) or a non-resource request
 * (discovery, version, openapi). Authorization and dispatch both read this one structure.
 */

/** A parsed request. */
export interface RequestInfo {
  resourceRequest: boolean;
  path: string;
  /** Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection (or the lower-case HTTP method for non-resource requests). */
  verb: string;
  /** `api` or `apis` (resource requests and group discovery). */
  prefix?: 'api' | 'apis';
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Parses `path` (no query) for `method`, with `watch` telling whether `watch=true` was asked. */
export function parseRequestInfo(method: string, path: string, watch: boolean): RequestInfo {
  const nonResource: RequestInfo = { resourceRequest: false, path, verb: method.toLowerCase(), group: '', version: '', resource: '' };
  const parts = path
    .split('/')
    .filter((p) => p.length > 0)
    .map((p) => decodeURIComponent(p));
  if (parts[0] !== 'api' && parts[0] !== 'apis') return nonResource;
  const prefix = parts[0] as 'api' | 'apis';
  let rest: string[];
  let group = '';
  let version: string;
  if (prefix === 'api') {
    if (parts.length < 3) return { ...nonResource, prefix, version: parts[1] ?? '' };
    version = parts[1]!;
    rest = parts.slice(2);
  } else {
    if (parts.length < 4) return { ...nonResource, prefix, group: parts[1] ?? '', version: parts[2] ?? '' };
    group = parts[1]!;
    version = parts[2]!;
    rest = parts.slice(3);
  }
  let legacyWatch = false;
  if (rest[0] === 'watch') {
    legacyWatch = true;
    rest = rest.slice(1);
  }
  const info: RequestInfo = { resourceRequest: true, path, verb: '', prefix, group, version, resource: '' };
  if (rest[0] === 'namespaces' && rest.length > 2 && !NAMESPACE_SUBRESOURCES.has(rest[2]!)) {
    info.namespace = rest[1];
    rest = rest.slice(2);
  }
  info.resource = rest[0] ?? '';
  info.name = rest[1];
  info.subresource = rest[2];
  if (rest.length > 3) info.resource = ''; // too deep: not a resource
  switch (method.toUpperCase()) {
    case 'GET':
    case 'HEAD':
      info.verb = watch || legacyWatch ? 'watch' : info.name ? 'get' : 'list';
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
      info.verb = info.name ? 'delete' : 'deletecollection';
      break;
    default:
      info.verb = method.toLowerCase();
  }
  return info;
}
