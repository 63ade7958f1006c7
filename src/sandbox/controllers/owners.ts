/**
 * Owner-reference helpers shared by the workload controllers.
 */
import type { KubeObject, OwnerReference } from '../types.js';

/** The controller owner reference of an object, if any. */
export function controllerRef(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r && r.controller === true);
}

/** An owner reference pointing at `owner` as its controller. */
export function ownerRefTo(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** Canonical JSON (sorted keys) for hashing. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const SAFE = 'bcdfghjklmnpqrstvwxz2456789';

/** A pod-template-hash in Kubernetes' style: FNV-1a 32 of the template, "safe-encoded" decimal digits. */
export function templateHash(template: unknown): string {
  const text = canonicalJson(template);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return [...String(hash)].map((d) => SAFE[Number(d) % SAFE.length]).join('');
}
