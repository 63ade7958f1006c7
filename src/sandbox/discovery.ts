/**
 * Discovery documents (`/version`, `/api`, `/apis`, `/api/v1`, `/apis/G/V`) built from the kind registry on every
 * request, so CRD kinds appear as soon as they are established. Only the legacy (unaggregated) JSON forms are served;
 * kubectl and client-go fall back to them when the aggregated media type is not answered.
 */
import { apiVersionOf, type KindInfo, type KindRegistry } from './kinds.js';

/** The Kubernetes version the sandbox claims. */
const SANDBOX_KUBE_VERSION = { major: '1', minor: '31', gitVersion: 'v1.31.0-outpost-sandbox' };

/** `/version`. */
export function versionInfo(): Record<string, unknown> {
  return {
    ...SANDBOX_KUBE_VERSION,
    gitCommit: '0000000000000000000000000000000000000000',
    gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z',
    goVersion: 'go1.22.0',
    compiler: 'gc',
    platform: 'linux/amd64',
  };
}

/** `/api`. */
export function coreVersions(serverAddress: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress }],
  };
}

/** Groups (non-core) with their served versions, in registration order. */
function groups(registry: KindRegistry): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const info of registry.all()) {
    if (info.group === '') continue;
    const versions = out.get(info.group) ?? [];
    for (const v of info.versions) if (!versions.includes(v)) versions.push(v);
    out.set(info.group, versions);
  }
  return out;
}

function groupEntry(name: string, versions: string[]): Record<string, unknown> {
  return {
    name,
    versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
    preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
  };
}

/** `/apis`. */
export function groupList(registry: KindRegistry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [...groups(registry)].map(([name, versions]) => groupEntry(name, versions)),
  };
}

/** `/apis/G` or undefined when the group is not served. */
export function apiGroup(registry: KindRegistry, group: string): Record<string, unknown> | undefined {
  const versions = groups(registry).get(group);
  if (!versions) return undefined;
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(group, versions) };
}

function resourceEntries(info: KindInfo): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: info.plural,
    singularName: info.singular,
    namespaced: info.namespaced,
    kind: info.kind,
    verbs: info.verbs,
  };
  if (info.shortNames.length > 0) main.shortNames = info.shortNames;
  if (info.categories.length > 0) main.categories = info.categories;
  const out = [main];
  for (const sub of [...info.subresources].sort()) {
    if (sub === 'status')
      out.push({
        name: `${info.plural}/status`,
        singularName: '',
        namespaced: info.namespaced,
        kind: info.kind,
        verbs: ['get', 'patch', 'update'],
      });
    if (sub === 'scale')
      out.push({
        name: `${info.plural}/scale`,
        singularName: '',
        namespaced: info.namespaced,
        group: 'autoscaling',
        version: 'v1',
        kind: 'Scale',
        verbs: ['get', 'patch', 'update'],
      });
    if (sub === 'log')
      out.push({ name: `${info.plural}/log`, singularName: '', namespaced: info.namespaced, kind: info.kind, verbs: ['get'] });
    if (sub === 'exec' || sub === 'attach' || sub === 'portforward') {
      const kind = sub === 'exec' ? 'PodExecOptions' : sub === 'attach' ? 'PodAttachOptions' : 'PodPortForwardOptions';
      out.push({ name: `${info.plural}/${sub}`, singularName: '', namespaced: info.namespaced, kind, verbs: ['create', 'get'] });
    }
  }
  return out;
}

/** `/api/v1` or `/apis/G/V`; undefined when that group/version is not served. */
export function resourceList(registry: KindRegistry, group: string, version: string): Record<string, unknown> | undefined {
  const kinds = registry.all().filter((k) => k.group === group && k.versions.includes(version));
  if (kinds.length === 0) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf(group, version),
    resources: kinds.flatMap(resourceEntries),
  };
}
