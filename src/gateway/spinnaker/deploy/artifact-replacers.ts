/**
 * Where artifacts appear in a manifest, defined once and used both ways: to bind artifacts into manifests on deploy
 * (an image `nginx:1.24` becomes the bound `nginx:1.25`, a ConfigMap volume `cfg` becomes `cfg-v003`) and to list
 * the artifacts a live object uses for the Manifest read API. The places are Clouddriver's: images of containers and
 * init containers in every pod template (`spec.template.spec`, at any depth, so CronJobs count), ConfigMap and Secret
 * references in volumes, projected volumes, `envFrom` and `env[].valueFrom`, the images of a bare Pod's containers,
 * and an HPA's `scaleTargetRef` to a Deployment or ReplicaSet.
 */
import type { Artifact, KubeObject } from './deploy-types.js';
import { isRecord } from './deploy-types.js';
import type { ReplacerSet } from './kind-traits.js';

/** One string field in a manifest that holds an artifact reference. */
interface Slot {
  holder: Record<string, unknown>;
  key: string;
}

interface Replacer {
  /** The artifact type this place holds. */
  type: string;
  /** The slots in an object (only those whose value is a string). */
  slots(object: Record<string, unknown>): Slot[];
  /** The artifact name a reference stands for (an image without tag or digest; other references are names). */
  nameOf(reference: string): string;
}

const identity = (reference: string): string => reference;

/**
 * An image reference without its digest (`@sha256:…`) or tag (`:1.25`). A colon before the last slash is a registry
 * port (`registry:5000/app`), not a tag.
 */
export function imageName(reference: string): string {
  const at = reference.indexOf('@');
  if (at >= 0) return reference.slice(0, at);
  const colon = reference.lastIndexOf(':');
  return colon > reference.lastIndexOf('/') ? reference.slice(0, colon) : reference;
}

const records = (value: unknown): Record<string, unknown>[] => (Array.isArray(value) ? value.filter(isRecord) : []);

function slot(holder: unknown, key: string): Slot[] {
  return isRecord(holder) && typeof holder[key] === 'string' ? [{ holder, key }] : [];
}

/** Every pod spec found as `<node>.spec.template.spec` anywhere in the object (root included). */
function podSpecs(object: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(object)) {
    for (const item of object) podSpecs(item, out);
  } else if (isRecord(object)) {
    const spec = object.spec;
    if (isRecord(spec) && isRecord(spec.template) && isRecord(spec.template.spec)) out.push(spec.template.spec);
    for (const value of Object.values(object)) podSpecs(value, out);
  }
  return out;
}

const containersOf = (podSpec: Record<string, unknown>) => [...records(podSpec.containers), ...records(podSpec.initContainers)];
const volumesOf = (object: Record<string, unknown>) => podSpecs(object).flatMap((p) => records(p.volumes));
const projectedSources = (object: Record<string, unknown>) =>
  volumesOf(object).flatMap((v) => (isRecord(v.projected) ? records(v.projected.sources) : []));
const envOf = (object: Record<string, unknown>) =>
  podSpecs(object)
    .flatMap(containersOf)
    .flatMap((c) => records(c.env));
const envFromOf = (object: Record<string, unknown>) =>
  podSpecs(object)
    .flatMap(containersOf)
    .flatMap((c) => records(c.envFrom));
const valueFrom = (env: Record<string, unknown>, ref: string) => (isRecord(env.valueFrom) ? env.valueFrom[ref] : undefined);

function scaleTargetOf(object: Record<string, unknown>, kinds: string[]): Slot[] {
  const target = isRecord(object.spec) ? object.spec.scaleTargetRef : undefined;
  return isRecord(target) && kinds.includes(String(target.kind)) ? slot(target, 'name') : [];
}

const POD_TEMPLATE_REPLACERS: readonly Replacer[] = [
  {
    type: 'docker/image',
    slots: (o) =>
      podSpecs(o)
        .flatMap(containersOf)
        .flatMap((c) => slot(c, 'image')),
    nameOf: imageName,
  },
  { type: 'kubernetes/configMap', slots: (o) => volumesOf(o).flatMap((v) => slot(v.configMap, 'name')), nameOf: identity },
  { type: 'kubernetes/secret', slots: (o) => volumesOf(o).flatMap((v) => slot(v.secret, 'secretName')), nameOf: identity },
  { type: 'kubernetes/configMap', slots: (o) => projectedSources(o).flatMap((s) => slot(s.configMap, 'name')), nameOf: identity },
  { type: 'kubernetes/secret', slots: (o) => projectedSources(o).flatMap((s) => slot(s.secret, 'name')), nameOf: identity },
  { type: 'kubernetes/configMap', slots: (o) => envFromOf(o).flatMap((e) => slot(e.configMapRef, 'name')), nameOf: identity },
  { type: 'kubernetes/secret', slots: (o) => envFromOf(o).flatMap((e) => slot(e.secretRef, 'name')), nameOf: identity },
  { type: 'kubernetes/configMap', slots: (o) => envOf(o).flatMap((e) => slot(valueFrom(e, 'configMapKeyRef'), 'name')), nameOf: identity },
  { type: 'kubernetes/secret', slots: (o) => envOf(o).flatMap((e) => slot(valueFrom(e, 'secretKeyRef'), 'name')), nameOf: identity },
];

/** A bare Pod: only its containers' images, matched on the whole reference (Clouddriver's Pod handler does so). */
const POD_REPLACERS: readonly Replacer[] = [
  {
    type: 'docker/image',
    slots: (o) => (isRecord(o.spec) ? records(o.spec.containers).flatMap((c) => slot(c, 'image')) : []),
    nameOf: identity,
  },
];

const HPA_REPLACERS: readonly Replacer[] = [
  { type: 'kubernetes/deployment', slots: (o) => scaleTargetOf(o, ['Deployment', 'deployment']), nameOf: identity },
  { type: 'kubernetes/replicaSet', slots: (o) => scaleTargetOf(o, ['ReplicaSet', 'replicaSet']), nameOf: identity },
];

const REPLACERS: Record<ReplacerSet, readonly Replacer[]> = {
  podTemplate: POD_TEMPLATE_REPLACERS,
  pod: POD_REPLACERS,
  hpa: HPA_REPLACERS,
  none: [],
};

/**
 * The artifacts referenced in an object, as `{type, name, reference}`, in replacer order without duplicates. The
 * object is not changed.
 */
export function findArtifacts(object: KubeObject, set: ReplacerSet): Artifact[] {
  const found = new Map<string, Artifact>();
  for (const replacer of REPLACERS[set]) {
    for (const { holder, key } of replacer.slots(object)) {
      const reference = holder[key] as string;
      const artifact: Artifact = { type: replacer.type, name: replacer.nameOf(reference), reference };
      found.set(JSON.stringify([artifact.type, artifact.name, artifact.reference]), artifact);
    }
  }
  return [...found.values()];
}

/** True when an artifact may bind into an object in `namespace` of `account`. */
function bindable(artifact: Artifact, namespace: string, account: string): boolean {
  if (typeof artifact.type !== 'string' || artifact.type === '') return false;
  if (!artifact.type.startsWith('kubernetes/')) return true;
  const artifactAccount = typeof artifact.metadata?.account === 'string' ? artifact.metadata.account : '';
  return (artifact.location ?? '') === namespace && (artifactAccount === '' || artifactAccount === account);
}

/**
 * Binds artifacts into `object` in place: every reference whose name equals an artifact's `name` (same type) is
 * replaced by the artifact's `reference`. Kubernetes artifacts bind only within their own namespace (`location`) and
 * account (an artifact without `metadata.account` matches any). Artifacts without a string `reference` never bind.
 * Returns the artifacts that replaced at least one reference, in the order given. The caller passes at most one
 * artifact per type and name (a second one could rebind what the first bound).
 */
export function replaceArtifacts(
  object: KubeObject,
  set: ReplacerSet,
  artifacts: readonly Artifact[],
  namespace: string,
  account: string,
): Artifact[] {
  const candidates = artifacts.filter((a) => bindable(a, namespace, account) && typeof a.reference === 'string');
  const bound = new Set<Artifact>();
  for (const replacer of REPLACERS[set]) {
    for (const artifact of candidates) {
      if (artifact.type !== replacer.type || artifact.name === undefined) continue;
      for (const { holder, key } of replacer.slots(object)) {
        if (replacer.nameOf(holder[key] as string) !== artifact.name) continue;
        holder[key] = artifact.reference;
        bound.add(artifact);
      }
    }
  }
  return candidates.filter((a) => bound.has(a));
}
