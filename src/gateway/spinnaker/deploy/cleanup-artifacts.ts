/**
 * cleanupArtifacts, which Orca sends after every Deploy (Manifest) with the deployed manifests: for each one that
 * carries `strategy.spinnaker.io/max-version-history: N`, every object of the same artifact (same kind, location
 * and `artifact.spinnaker.io/name`) beyond the N newest, by creation time, is deleted. The deployed object itself is
 * one of the N.
 */
import { readStrategy } from './deploy-strategy.js';
import type { KubeObject } from './deploy-types.js';
import { agentKindOf } from './kind-traits.js';
import { ANNOTATIONS } from './manifest-annotations.js';
import { versionOf } from './resource-versions.js';

type Existing = (agentKind: string, namespace: string, baseName: string) => Promise<KubeObject[]>;

/** True when `object` is a deploy of the artifact `baseName` (its annotation says so, or a `-vNNN` name does). */
function isArtifactOf(object: KubeObject, baseName: string): boolean {
  const annotations = object.metadata?.annotations ?? {};
  if (annotations[ANNOTATIONS.artifactType]) return annotations[ANNOTATIONS.artifactName] === baseName;
  return versionOf(object, baseName) !== undefined;
}

/** Oldest first: creation time, then version number (an unversioned object counts as older than any version). */
function oldestFirst(objects: KubeObject[], baseName: string): KubeObject[] {
  const created = (o: KubeObject) => String(o.metadata?.creationTimestamp ?? '');
  const version = (o: KubeObject) => versionOf(o, baseName) ?? -1;
  return [...objects].sort((a, b) => (created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : version(a) - version(b)));
}

const identity = (o: KubeObject) => JSON.stringify([agentKindOf(o), o.metadata?.namespace ?? '', o.metadata?.name]);

/**
 * The objects cleanupArtifacts deletes: for each `deployed` object with an integer max-version-history N ≥ 0 and an
 * `artifact.spinnaker.io/type` annotation, the objects `existing` lists for its kind, location
 * (`artifact.spinnaker.io/location`, else its namespace) and artifact name, minus the N newest. N = 0 deletes all of
 * them, the deployed one included, as Clouddriver does. Each object appears once. The caller deletes them (by
 * `metadata.name` in `metadata.namespace`) and reports the deleted names.
 */
export async function versionsToDelete(deployed: KubeObject[], existing: Existing): Promise<KubeObject[]> {
  const out = new Map<string, KubeObject>();
  const seen = new Set<string>();
  for (const object of deployed) {
    if (seen.has(identity(object))) continue;
    seen.add(identity(object));
    const annotations = object.metadata?.annotations ?? {};
    const max = readStrategy(annotations).maxVersionHistory;
    const baseName = annotations[ANNOTATIONS.artifactName];
    if (max === undefined || max < 0 || !annotations[ANNOTATIONS.artifactType] || baseName === undefined) continue;
    const location = annotations[ANNOTATIONS.artifactLocation] ?? object.metadata?.namespace ?? '';
    const versions = oldestFirst(
      (await existing(agentKindOf(object), location, baseName)).filter((o) => isArtifactOf(o, baseName)),
      baseName,
    );
    for (const old of versions.slice(0, Math.max(0, versions.length - max))) out.set(identity(old), old);
  }
  return [...out.values()];
}
