/**
 * The cluster reads a deploy plan needs (deploy/deploy-types.ts `DeployContext`), answered live through the agent:
 * existing versions of an object (a list of its kind in its namespace, filtered by artifact name), single objects,
 * and — read before planning, since planning asks synchronously — the scope of the custom resource kinds the
 * manifests use (their cached CustomResourceDefinition; namespaced when unknown, as most are).
 */
import type { CacheReads } from '../cache-reads.js';
import { ANNOTATIONS } from '../deploy/manifest-annotations.js';
import { isRecord, type DeployContext, type KubeObject } from '../deploy/deploy-types.js';
import { groupOf, registeredKindOf } from '../../status/kind-names.js';
import type { LiveReads } from '../live-reads.js';

/** Every manifest of a description, Lists expanded one level (what planning will see). */
function manifestsOf(description: Record<string, unknown>): Record<string, unknown>[] {
  const raw = Array.isArray(description.manifests) ? description.manifests : isRecord(description.manifest) ? [description.manifest] : [];
  const out: Record<string, unknown>[] = [];
  for (const m of raw) {
    if (!isRecord(m)) continue;
    if (String(m.kind ?? '').toLowerCase() === 'list' && Array.isArray(m.items)) out.push(...m.items.filter(isRecord));
    else out.push(m);
  }
  return out;
}

/** Builds the context for one deploy on `account`. */
export async function createDeployContext(
  account: string,
  description: Record<string, unknown>,
  reads: LiveReads,
  cache: CacheReads,
): Promise<DeployContext> {
  const scopes = new Map<string, boolean>();
  for (const m of manifestsOf(description)) {
    const apiVersion = String(m.apiVersion ?? '');
    const kind = String(m.kind ?? '');
    const key = `${apiVersion}/${kind}`;
    if (scopes.has(key) || registeredKindOf(apiVersion, kind)) continue;
    scopes.set(key, (await cache.customKindNamespaced(account, groupOf(apiVersion), kind)) ?? true);
  }
  return {
    account,
    isNamespaced: (apiVersion, kind) => registeredKindOf(apiVersion, kind)?.namespaced ?? scopes.get(`${apiVersion}/${kind}`) ?? true,
    async existingVersions(agentKind, namespace, baseName) {
      const all = (await reads.list(account, agentKind, namespace)) as KubeObject[];
      const versioned = new RegExp(`^${baseName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-v\\d{3,}$`);
      return all.filter(
        (o) => o.metadata.annotations?.[ANNOTATIONS.artifactName] === baseName || versioned.test(String(o.metadata.name ?? '')),
      );
    },
    liveObject: async (agentKind, namespace, name) => (await reads.get(account, agentKind, namespace, name)) as KubeObject | undefined,
  };
}
