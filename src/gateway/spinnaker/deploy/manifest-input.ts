/**
 * The manifests of a deploy as Clouddriver receives them: null entries skipped, `kind: List` items expanded in
 * place, each one checked (an object with `apiVersion`, `kind` and `metadata.name` or `metadata.generateName`),
 * moved to `namespaceOverride` when its kind is namespaced, and sorted into deploy order (stable, by the kind's
 * deploy priority). Inputs are copied, never changed.
 */
import type { KubeObject } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import { kindTraits, type KindTraits } from './kind-traits.js';

/** One manifest to deploy, with the position it came from for error messages (`manifests[2].items[0]`). */
export interface InputManifest {
  manifest: KubeObject;
  where: string;
  traits: KindTraits;
}

const describe = (value: unknown) => (Array.isArray(value) ? 'a list' : value === null ? 'null' : `a ${typeof value}`);

function isStringMap(value: unknown): boolean {
  return isRecord(value) && Object.values(value).every((v) => typeof v === 'string');
}

function checked(value: unknown, where: string): KubeObject {
  if (!isRecord(value)) throw new DeployPlanError(`${where} is not an object (it is ${describe(value)})`);
  if (typeof value.kind !== 'string' || value.kind === '') throw new DeployPlanError(`${where} has no kind`);
  if (typeof value.apiVersion !== 'string' || value.apiVersion === '') {
    throw new DeployPlanError(`${where} (kind ${value.kind}) has no apiVersion`);
  }
  const metadata = value.metadata;
  if (!isRecord(metadata)) throw new DeployPlanError(`${where} (kind ${value.kind}) has no metadata`);
  const named =
    (typeof metadata.name === 'string' && metadata.name !== '') ||
    (typeof metadata.generateName === 'string' && metadata.generateName !== '');
  if (!named) throw new DeployPlanError(`${where} (kind ${value.kind}) has no metadata.name`);
  for (const key of ['annotations', 'labels'] as const) {
    if (metadata[key] !== undefined && metadata[key] !== null && !isStringMap(metadata[key])) {
      throw new DeployPlanError(
        `${where} (${value.kind} ${String(metadata.name ?? metadata.generateName)}): metadata.${key} must map names to strings`,
      );
    }
  }
  const copy = structuredClone(value) as KubeObject;
  if (copy.metadata.annotations === null) delete copy.metadata.annotations;
  if (copy.metadata.labels === null) delete copy.metadata.labels;
  return copy;
}

/** The raw manifests with Lists expanded and nulls skipped, each checked and copied. */
function expand(raw: readonly unknown[]): { manifest: KubeObject; where: string }[] {
  const out: { manifest: KubeObject; where: string }[] = [];
  raw.forEach((item, i) => {
    if (item === null || item === undefined) return;
    const where = `manifests[${i}]`;
    if (isRecord(item) && typeof item.kind === 'string' && item.kind.toLowerCase() === 'list') {
      const items = item.items;
      if (items === undefined || items === null) return;
      if (!Array.isArray(items)) throw new DeployPlanError(`${where} is a List whose items are not a list`);
      items.forEach((entry, j) => {
        if (entry === null || entry === undefined) return;
        const at = `${where}.items[${j}]`;
        if (isRecord(entry) && typeof entry.kind === 'string' && entry.kind.toLowerCase() === 'list') {
          throw new DeployPlanError(`${at} is a List inside a List; put its items in the outer List`);
        }
        out.push({ manifest: checked(entry, at), where: at });
      });
      return;
    }
    out.push({ manifest: checked(item, where), where });
  });
  return out;
}

/**
 * Validates, expands, re-namespaces and orders the manifests of a deploy. Throws DeployPlanError naming the item
 * (`manifests[1].items[0] has no kind`) for anything that is not a deployable object, and when nothing is left.
 */
export function prepareManifests(
  raw: readonly unknown[],
  namespaceOverride: string,
  isNamespaced: (apiVersion: string, kind: string) => boolean,
): InputManifest[] {
  const expanded = expand(raw);
  if (expanded.length === 0) throw new DeployPlanError('No manifests to deploy: the stage has no manifests');
  const prepared = expanded.map(({ manifest, where }) => {
    let traits: KindTraits;
    try {
      traits = kindTraits(manifest.apiVersion, manifest.kind);
    } catch (e) {
      throw new DeployPlanError(`${where}: ${(e as Error).message}`);
    }
    if (namespaceOverride !== '' && isNamespaced(manifest.apiVersion, manifest.kind)) {
      manifest.metadata.namespace = namespaceOverride;
    }
    return { manifest, where, traits };
  });
  return prepared
    .map((m, index) => ({ m, index }))
    .sort((a, b) => a.m.traits.deployPriority - b.m.traits.deployPriority || a.index - b.index)
    .map(({ m }) => m);
}
