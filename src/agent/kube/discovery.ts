/**
 * API discovery: which resources the cluster serves, at their preferred version, that can be listed and watched.
 * A group whose discovery fails is reported (as skipped), never fatal.
 */
import type { KubeClient } from './kube-client.js';

/** One listable, watchable API resource. */
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
}

/** Result of discovery: the resources, and the groups whose discovery failed (with why). */
export interface DiscoveryResult {
  resources: ResourceType[];
  failedGroups: { apiVersion: string; reason: string }[];
}

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
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
  const apiVersion = group === '' ? version : `${group}/${version}`;
  return (list.resources ?? []).filter(usable).map((r) => ({
    group,
    version,
    apiVersion,
    kind: r.kind,
    resource: r.name,
    namespaced: r.namespaced,
  }));
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
