/**
 * Versions of versioned objects (`<name>-v000`, `-v001`, … `-v999`, `-v1000`): which existing version a re-deploy
 * reuses and which number a new version gets. A version is the `artifact.spinnaker.io/version` annotation of a live
 * object whose `artifact.spinnaker.io/name` is the base name (or, without those annotations, a `<base>-vNNN` name).
 */
import { CONTENT_DIGEST_ANNOTATION, contentText } from './content-digest.js';
import type { KubeObject } from './deploy-types.js';
import { isRecord } from './deploy-types.js';

const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
const ARTIFACT_NAME = 'artifact.spinnaker.io/name';
const ARTIFACT_VERSION = 'artifact.spinnaker.io/version';

/** `v` and the number, at least three digits: 0 → `v000`, 1000 → `v1000`. */
export function formatVersion(version: number): string {
  return `v${String(version).padStart(3, '0')}`;
}

/** The number of a `vNNN` version string, undefined for anything else (or a negative number). */
function parseVersion(text: string | undefined): number | undefined {
  if (text === undefined || !/^v[+-]?\d+$/.test(text)) return undefined;
  const n = Number.parseInt(text.slice(1), 10);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The version of a live object that is a version of `baseName`, else undefined. */
export function versionOf(object: KubeObject, baseName: string): number | undefined {
  const annotations = object.metadata?.annotations ?? {};
  if (annotations[ARTIFACT_NAME] !== undefined) {
    return annotations[ARTIFACT_NAME] === baseName ? parseVersion(annotations[ARTIFACT_VERSION]) : undefined;
  }
  const match = new RegExp(`^${escapeRegExp(baseName)}-(v\\d{3,})$`).exec(object.metadata?.name ?? '');
  return match ? parseVersion(match[1]) : undefined;
}

/** The versions of `baseName` among `existing`, oldest first (creation time, then version number). */
function versionsOldestFirst(existing: readonly KubeObject[], baseName: string): { object: KubeObject; version: number }[] {
  const created = (o: KubeObject) => String(o.metadata?.creationTimestamp ?? '');
  return existing
    .map((object) => ({ object, version: versionOf(object, baseName) }))
    .filter((v): v is { object: KubeObject; version: number } => v.version !== undefined)
    .sort((a, b) => (created(a.object) < created(b.object) ? -1 : created(a.object) > created(b.object) ? 1 : a.version - b.version));
}

/** True when a live object holds the same content as the new manifest (digest, else last-applied configuration). */
function sameContent(live: KubeObject, digest: string, manifest: KubeObject): boolean {
  const annotations = live.metadata?.annotations ?? {};
  const liveDigest = annotations[CONTENT_DIGEST_ANNOTATION];
  if (liveDigest !== undefined) return liveDigest === digest;
  const lastApplied = annotations[LAST_APPLIED_ANNOTATION];
  if (lastApplied === undefined) return false;
  try {
    const parsed: unknown = JSON.parse(lastApplied);
    return isRecord(parsed) && contentText(parsed) === contentText(manifest);
  } catch {
    return false;
  }
}

export interface VersionChoice {
  version: number;
  /** The version already holds this content. */
  reused: boolean;
  /** The highest existing version, if any (the source of `use-source-capacity`). */
  latest?: { object: KubeObject; version: number };
}

/**
 * Picks the version for a new deploy of `manifest` (bound artifacts in place, no Spinnaker annotations yet) with
 * content digest `digest`: the oldest existing version with the same content is reused; otherwise the highest
 * existing version + 1; with no versions, 0.
 */
export function chooseVersion(manifest: KubeObject, digest: string, existing: readonly KubeObject[], baseName: string): VersionChoice {
  const versions = versionsOldestFirst(existing, baseName);
  const latest = versions.reduce<VersionChoice['latest']>((best, v) => (!best || v.version > best.version ? v : best), undefined);
  const match = versions.find((v) => sameContent(v.object, digest, manifest));
  if (match) return { version: match.version, reused: true, latest };
  return { version: latest ? latest.version + 1 : 0, reused: false, latest };
}
