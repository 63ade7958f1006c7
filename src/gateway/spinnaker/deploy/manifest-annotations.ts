/**
 * What a deploy writes on each object's metadata and on its pod template's metadata (`spec.template.metadata`, only
 * when the manifest already has one): the artifact annotations (`artifact.spinnaker.io/type|name|location|version`),
 * the moniker annotations (`moniker.spinnaker.io/application|cluster|stack|detail|sequence`), never overwriting a key
 * the manifest already has, and the labels `app.kubernetes.io/name` (kept when present),
 * `app.kubernetes.io/managed-by: spinnaker` and `moniker.spinnaker.io/sequence` (both overwritten). The
 * `traffic.spinnaker.io/load-balancers` annotation (metadata only) records the Services a workload is attached to.
 */
import type { Artifact, KubeObject } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';

export const ANNOTATIONS = {
  artifactType: 'artifact.spinnaker.io/type',
  artifactName: 'artifact.spinnaker.io/name',
  artifactLocation: 'artifact.spinnaker.io/location',
  artifactVersion: 'artifact.spinnaker.io/version',
  application: 'moniker.spinnaker.io/application',
  cluster: 'moniker.spinnaker.io/cluster',
  stack: 'moniker.spinnaker.io/stack',
  detail: 'moniker.spinnaker.io/detail',
  sequence: 'moniker.spinnaker.io/sequence',
  loadBalancers: 'traffic.spinnaker.io/load-balancers',
} as const;

const LABELS = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  sequence: 'moniker.spinnaker.io/sequence',
} as const;

/** A Spinnaker moniker as the deploy description carries it (`sequence` is set for versioned objects). */
export interface Moniker {
  app?: string;
  cluster?: string;
  stack?: string;
  detail?: string;
  sequence?: number;
}

/** `spec.template.metadata` when the manifest has one. */
export function templateMetadata(manifest: KubeObject): Record<string, unknown> | undefined {
  const spec = manifest.spec;
  if (!isRecord(spec) || !isRecord(spec.template)) return undefined;
  return isRecord(spec.template.metadata) ? spec.template.metadata : undefined;
}

/** The string map under `key` of a metadata object, created when absent. */
export function stringMap(metadata: Record<string, unknown>, key: 'annotations' | 'labels'): Record<string, string> {
  if (!isRecord(metadata[key])) metadata[key] = {};
  return metadata[key] as Record<string, string>;
}

function store(map: Record<string, string>, key: string, value: string | number | undefined): void {
  if (value === undefined || value === null || Object.hasOwn(map, key)) return;
  map[key] = String(value);
}

/** The metadata objects a deploy writes to: the object's own and its pod template's, when present. */
function metadatas(manifest: KubeObject): Record<string, unknown>[] {
  const template = templateMetadata(manifest);
  return template ? [manifest.metadata, template] : [manifest.metadata];
}

/** Adds the artifact annotations (type, name, location, version) where absent. */
export function annotateArtifact(manifest: KubeObject, artifact: Artifact): void {
  for (const metadata of metadatas(manifest)) {
    const annotations = stringMap(metadata, 'annotations');
    store(annotations, ANNOTATIONS.artifactType, artifact.type);
    store(annotations, ANNOTATIONS.artifactName, artifact.name);
    store(annotations, ANNOTATIONS.artifactLocation, artifact.location);
    store(annotations, ANNOTATIONS.artifactVersion, artifact.version);
  }
}

/** Adds the moniker annotations where absent and the app labels (template labels unless `skipTemplateLabels`). */
export function applyMoniker(manifest: KubeObject, moniker: Moniker, skipTemplateLabels: boolean): void {
  for (const metadata of metadatas(manifest)) {
    const annotations = stringMap(metadata, 'annotations');
    store(annotations, ANNOTATIONS.cluster, moniker.cluster);
    store(annotations, ANNOTATIONS.application, moniker.app);
    store(annotations, ANNOTATIONS.stack, moniker.stack);
    store(annotations, ANNOTATIONS.detail, moniker.detail);
    store(annotations, ANNOTATIONS.sequence, moniker.sequence);
  }
  const template = templateMetadata(manifest);
  const labelled = template && !skipTemplateLabels ? [manifest.metadata, template] : [manifest.metadata];
  for (const metadata of labelled) {
    const labels = stringMap(metadata, 'labels');
    store(labels, LABELS.name, moniker.app);
    labels[LABELS.managedBy] = 'spinnaker';
    if (moniker.sequence !== undefined) labels[LABELS.sequence] = String(moniker.sequence);
  }
}

/** The load balancers (`"service web"`) named by an object's traffic annotation; [] when absent or unreadable. */
export function loadBalancersOf(manifest: KubeObject): string[] {
  const text = manifest.metadata.annotations?.[ANNOTATIONS.loadBalancers];
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
}

/**
 * Records `services` in the traffic annotation. An object that already names the same list keeps it; one that
 * names a different list is an error (the manifest and the stage disagree about which Services get traffic).
 */
export function setTrafficAnnotation(manifest: KubeObject, services: readonly string[]): void {
  if (services.length === 0) return;
  const annotations = stringMap(manifest.metadata, 'annotations');
  if (Object.hasOwn(annotations, ANNOTATIONS.loadBalancers)) {
    const current = loadBalancersOf(manifest);
    if (JSON.stringify(current) === JSON.stringify(services)) return;
    throw new DeployPlanError(
      `Manifest already has ${ANNOTATIONS.loadBalancers} annotation set to ${JSON.stringify(current)}. ` +
        `Failed attempting to set it to ${JSON.stringify(services)}.`,
    );
  }
  annotations[ANNOTATIONS.loadBalancers] = JSON.stringify(services);
}
