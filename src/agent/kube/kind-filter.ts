/**
 * Applies an account's kind settings (kinds, omitKinds, customResourceDefinitions, onlyNamespacedResources) to the
 * discovered resources. Kind names match case-insensitively: `Deployment` matches the kind in any group,
 * `Deployment.apps` only in that group.
 */
import type { AccountConfig } from '../config/schema.js';
import type { ResourceType } from './discovery.js';

/** A kind that was asked for but cannot be watched. */
export interface SkippedType {
  apiVersion: string;
  kind: string;
  reason: string;
}

/** Whether a configured kind name (`Kind` or `Kind.group`) designates the resource. */
export function kindMatches(name: string, resource: Pick<ResourceType, 'kind' | 'group'>): boolean {
  const dot = name.indexOf('.');
  const kind = dot < 0 ? name : name.slice(0, dot);
  if (kind.toLowerCase() !== resource.kind.toLowerCase()) return false;
  return dot < 0 || name.slice(dot + 1).toLowerCase() === resource.group.toLowerCase();
}

/** Selects the resources to watch; names asked for explicitly that match nothing are returned as skipped. */
export function selectResources(
  resources: ResourceType[],
  account: Pick<AccountConfig, 'kinds' | 'omitKinds' | 'customResourceDefinitions' | 'onlyNamespacedResources'>,
): { selected: ResourceType[]; skipped: SkippedType[] } {
  const crdKinds = account.customResourceDefinitions.map((c) => c.kind);
  const wanted = account.kinds.length > 0 ? [...account.kinds, ...crdKinds] : [];
  const selected = resources.filter((r) => {
    if (wanted.length > 0 && !wanted.some((name) => kindMatches(name, r))) return false;
    if (account.omitKinds.some((name) => kindMatches(name, r))) return false;
    if (account.onlyNamespacedResources && !r.namespaced) return false;
    return true;
  });
  const skipped: SkippedType[] = [];
  for (const name of new Set([...account.kinds, ...crdKinds])) {
    if (account.omitKinds.includes(name)) continue;
    if (!resources.some((r) => kindMatches(name, r))) {
      const dot = name.indexOf('.');
      skipped.push({
        apiVersion: dot < 0 ? '' : name.slice(dot + 1),
        kind: dot < 0 ? name : name.slice(0, dot),
        reason: 'not served by the API server (no such kind in discovery, or it cannot be listed and watched)',
      });
    }
  }
  for (const crd of account.customResourceDefinitions) {
    if (crd.scope === undefined) continue;
    for (const r of selected) {
      if (kindMatches(crd.kind, r) && (crd.scope === 'Namespaced') !== r.namespaced) {
        skipped.push({ apiVersion: r.apiVersion, kind: r.kind, reason: `configured scope ${crd.scope} differs from the API server's` });
      }
    }
  }
  const mismatched = new Set(skipped.filter((s) => s.reason.startsWith('configured scope')).map((s) => `${s.apiVersion}/${s.kind}`));
  return { selected: selected.filter((r) => !mismatched.has(`${r.apiVersion}/${r.kind}`)), skipped };
}
