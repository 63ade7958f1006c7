/**
 * Resolves the kind an operation names (with or without apiVersion; `Kind`, `Kind.group`, the plural or the singular
 * name) to the API resource to call, by discovery. Answers are cached per account; a miss refreshes the cache once,
 * so a kind whose CustomResourceDefinition was created after the first look-up is found.
 */
import { KubeHttpError } from '../kube/kube-client.js';
import type { KubeCalls } from './kube-calls.js';
import { hasLoneSurrogate } from '../../shared/unstorable-text.js';
import { badRequest, notFound } from './operation-error.js';
import { resourceTypeOf, type APIResource, type ResourceType } from '../kube/discovery.js';

/** See the module comment. One per account (per Kubernetes client). */
export interface ResourceResolver {
  /** Throws a 404 NotFound {@link OperationError} when the cluster does not serve the kind. */
  resolve(calls: KubeCalls, kind: string, apiVersion?: string): Promise<ResourceType>;
}

interface APIGroupList {
  groups?: { name: string; preferredVersion?: { groupVersion: string }; versions?: { groupVersion: string }[] }[];
}

/**
 * `text` percent-encoded as one URL path segment. A lone UTF-16 surrogate has no UTF-8 form (`encodeURIComponent`
 * would throw a URIError, reported as a 500): it is the operation's mistake, a 400. So are `.` and `..`, which
 * `encodeURIComponent` leaves as they are and a URL parser would resolve (as Kubernetes, which refuses such names);
 * the client refuses every other path that could leave the cluster's URL (src/shared/kube-path.ts).
 */
export function pathSegment(text: string, what: string): string {
  if (hasLoneSurrogate(text)) throw badRequest(`${what} ${JSON.stringify(text)} is not valid Unicode (it holds a lone surrogate)`);
  if (text === '.' || text === '..') throw badRequest(`${what} may not be "." or ".."`);
  return encodeURIComponent(text);
}

/** The URL path of a resource collection, object or subresource. */
export function resourcePath(
  r: Pick<ResourceType, 'group' | 'version' | 'resource' | 'namespaced'>,
  namespace?: string,
  name?: string,
  subresource?: string,
): string {
  let path = r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  if (r.namespaced && namespace) path += `/namespaces/${pathSegment(namespace, 'namespace')}`;
  path += `/${r.resource}`;
  if (name !== undefined) path += `/${pathSegment(name, 'name')}`;
  if (subresource !== undefined) path += `/${subresource}`;
  return path;
}

function splitGroupVersion(gv: string): { group: string; version: string } {
  const slash = gv.indexOf('/');
  return slash < 0 ? { group: '', version: gv } : { group: gv.slice(0, slash), version: gv.slice(slash + 1) };
}

/** Creates an empty resolver. */
export function createResourceResolver(): ResourceResolver {
  const groupVersions = new Map<string, Promise<APIResource[]>>();
  let preferred: Promise<string[]> | undefined;

  function fetchGroupVersion(calls: KubeCalls, gv: string): Promise<APIResource[]> {
    const path = gv === 'v1' ? '/api/v1' : `/apis/${gv}`;
    const promise = calls
      .json<{ resources?: APIResource[] }>({ method: 'GET', path })
      .then(({ body }) => body.resources ?? [])
      .catch((err: unknown) => {
        if (err instanceof KubeHttpError && err.status === 404) return [];
        groupVersions.delete(gv); // do not cache failures
        throw err;
      });
    groupVersions.set(gv, promise);
    return promise;
  }

  function fetchPreferred(calls: KubeCalls): Promise<string[]> {
    const promise = calls
      .json<APIGroupList>({ method: 'GET', path: '/apis' })
      .then(({ body }) => [
        'v1',
        ...(body.groups ?? []).flatMap((g) => {
          const gv = g.preferredVersion?.groupVersion ?? g.versions?.[0]?.groupVersion;
          return gv ? [gv] : [];
        }),
      ])
      .catch((err: unknown) => {
        preferred = undefined;
        throw err;
      });
    preferred = promise;
    return promise;
  }

  function match(resources: APIResource[], gv: string, name: string): ResourceType | undefined {
    const lower = name.toLowerCase();
    const main = resources.filter((r) => !r.name.includes('/'));
    const found =
      main.find((r) => r.kind === name) ?? main.find((r) => r.kind.toLowerCase() === lower || r.name === lower || r.singularName === lower);
    if (!found) return undefined;
    const { group, version } = splitGroupVersion(gv);
    return resourceTypeOf(group, version, found, resources);
  }

  async function lookUp(
    calls: KubeCalls,
    kind: string,
    apiVersion: string | undefined,
    refresh: boolean,
  ): Promise<ResourceType | undefined> {
    if (apiVersion) {
      const resources = (!refresh && groupVersions.get(apiVersion)) || fetchGroupVersion(calls, apiVersion);
      return match(await resources, apiVersion, kind);
    }
    // `Kind.group` / `plural.group` narrows to one group
    const dot = kind.indexOf('.');
    const name = dot < 0 ? kind : kind.slice(0, dot);
    const group = dot < 0 ? undefined : kind.slice(dot + 1);
    const gvs = await ((!refresh && preferred) || fetchPreferred(calls));
    const candidates = gvs.filter((gv) => group === undefined || splitGroupVersion(gv).group === group);
    const lists = await Promise.all(candidates.map((gv) => (!refresh && groupVersions.get(gv)) || fetchGroupVersion(calls, gv)));
    for (let i = 0; i < candidates.length; i++) {
      const found = match(lists[i]!, candidates[i]!, name);
      if (found) return found;
    }
    return undefined;
  }

  return {
    async resolve(calls, kind, apiVersion) {
      if (kind.trim() === '') throw notFound('no kind given');
      const found =
        (await lookUp(calls, kind, apiVersion || undefined, false)) ?? (await lookUp(calls, kind, apiVersion || undefined, true));
      if (found) return found;
      throw notFound(
        apiVersion
          ? `the server doesn't have a resource type "${kind}" in version "${apiVersion}"`
          : `the server doesn't have a resource type "${kind}"`,
      );
    },
  };
}
