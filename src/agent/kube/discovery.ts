/**
 * API discovery: which resources the cluster serves, at their preferred version, that can be listed and watched.
 * A group whose discovery fails is reported (as skipped), never fatal.
 */
import type { KubeClient } from './kube-client.js';

/**
 * One API resource as discovery describes it: what the watch pipeline lists and watches (discovery keeps those that
 * can be listed and watched) and what an operation addresses (operations/resource-resolver.ts).
 */
export interface ResourceType {
  /** API group, '' for core. */
  group: string;
  version: string;
  /** `group/version`, or `version` for core. */
  apiVersion: string;
  kind: string;
  /** Plural resource name, used in URLs and access reviews. */
  resource: string;
  namespaced: boolean;
  /** Served by Kubernetes itself (strategic merge patch applies), as opposed to a custom resource. */
  builtin: boolean;
  /** Subresources served (`scale`, `status`, `log`…). */
  subresources: string[];
}

/** One entry of an APIResourceList (`/api/v1`, `/apis/G/V`): a resource, or a subresource when its name has a `/`. */
export interface APIResource {
  name: string;
  singularName?: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

/** Groups served by Kubernetes itself (their kinds take strategic merge patches); custom resources do not. */
function isBuiltinGroup(group: string): boolean {
  return group === '' || !group.includes('.') || group.endsWith('.k8s.io');
}

/** The ResourceType of `found` (a resource of `all`, the list of its group version). */
export function resourceTypeOf(group: string, version: string, found: APIResource, all: APIResource[]): ResourceType {
  return {
    group,
    version,
    apiVersion: group === '' ? version : `${group}/${version}`,
    kind: found.kind,
    resource: found.name,
    namespaced: found.namespaced,
    builtin: isBuiltinGroup(group),
    subresources: all.filter((r) => r.name.startsWith(`${found.name}/`)).map((r) => r.name.slice(found.name.length + 1)),
  };
}

/** Result of discovery: the resources, and the groups whose discovery failed (with why). */
export interface DiscoveryResult {
  resources: ResourceType[];
  failedGroups: { apiVersion: string; reason: string }[];
}

interface APIResourceList {
  groupVersion?: string;
  resources?: APIResource[];
}
interface APIGroupList {
  groups?: {
    name: string;
    preferredVersion?: { groupVersion: string; version: string };
    versions?: { groupVersion: string; version: string }[];
  }[];
}

function usable(resource: APIResource): boolean {
  if (resource.name.includes('/')) return false; // subresource (status, scale, log…)
  const verbs = resource.verbs ?? [];
  return verbs.includes('list') && verbs.includes('watch');
}

function toTypes(group: string, version: string, list: APIResourceList): ResourceType[] {
  const all = list.resources ?? [];
  return all.filter(usable).map((r) => resourceTypeOf(group, version, r, all));
}

/** Discovers the core group and every API group at its preferred version, in parallel. */
export async function discoverResources(client: KubeClient, signal?: AbortSignal): Promise<DiscoveryResult> {
  const core = await client.getJson<APIResourceList>('/api/v1', undefined, signal);
  const groups = await client.getJson<APIGroupList>('/apis', undefined, signal);
  const resources = toTypes('', 'v1', core);
  const failedGroups: DiscoveryResult['failedGroups'] = [];
  const results = await Promise.all(
    (groups.groups ?? []).map(async (g) => {
      const preferred = g.preferredVersion ?? g.versions?.[0];
      if (preferred === undefined) return [];
      try {
        const list = await client.getJson<APIResourceList>(`/apis/${preferred.groupVersion}`, undefined, signal);
        return toTypes(g.name, preferred.version, list);
      } catch (err) {
        failedGroups.push({ apiVersion: preferred.groupVersion, reason: `discovery failed: ${(err as Error).message}` });
        return [];
      }
    }),
  );
  for (const list of results) resources.push(...list);
  return { resources, failedGroups };
}
