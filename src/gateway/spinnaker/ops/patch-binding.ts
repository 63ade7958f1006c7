/**
 * Artifact binding into strategic and merge patch bodies, as Clouddriver's patch operation does: the description's
 * `allArtifacts` and `requiredArtifacts` bind into the body with the target kind's replacers (images in a pod
 * template, ConfigMap and Secret references…), in the target's namespace and account.
 */
import { replaceArtifacts } from '../deploy/artifact-replacers.js';
import { isRecord, type Artifact, type KubeObject } from '../deploy/deploy-types.js';
import { kindTraits } from '../deploy/kind-traits.js';
import { parseResourceName } from '../../status/kind-names.js';
import { accountOf, namespaceOfLocation, stringField, type Description } from './description-fields.js';
import type { PatchBinder } from './patch-manifest.js';

const artifactsOf = (value: unknown): Artifact[] =>
  Array.isArray(value) ? value.filter((a): a is Artifact => isRecord(a) && typeof a.type === 'string') : [];

/** Binds into a copy of `body`; returns it with the artifacts that bound. */
export const bindPatchArtifacts: PatchBinder = (body, description: Description) => {
  const target = parseResourceName(stringField(description, 'manifestName') ?? '');
  const registered = target?.kind.registered;
  const copy = structuredClone(body);
  if (!registered) return { body: copy, bound: [] };
  const apiVersion = registered.group ? `${registered.group}/v1` : 'v1';
  const set = kindTraits(apiVersion, registered.kind).replacers;
  const seen = new Set<string>();
  const artifacts = [...artifactsOf(description.allArtifacts), ...artifactsOf(description.requiredArtifacts)].filter((a) => {
    const key = JSON.stringify([a.type, a.name ?? null]);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  const namespace = namespaceOfLocation(stringField(description, 'location'));
  const object = { ...copy, apiVersion, kind: registered.kind, metadata: isRecord(copy.metadata) ? copy.metadata : {} } as KubeObject;
  const bound = replaceArtifacts(object, set, artifacts, namespace, accountOf(description));
  return { body: copy, bound: bound as Record<string, unknown>[] };
};
