/**
 * The artifacts a live object uses, as the Manifest read API reports them (`artifacts` of
 * `GET /manifests/{account}/{location}/{kind name}`): images, ConfigMaps and Secrets a workload references, a Pod's
 * images, an HPA's scale target. Same places as binding uses on deploy (artifact-replacers.ts).
 */
import { findArtifacts } from './artifact-replacers.js';
import type { Artifact, KubeObject } from './deploy-types.js';
import { kindTraits, type ReplacerSet } from './kind-traits.js';

/**
 * The artifacts found in `object`, each `{type, name, reference}`: `docker/image` with `name` = the image without
 * tag or digest and `reference` = the image as written (a bare Pod's images are reported with `name` = the whole
 * reference, as Clouddriver does), `kubernetes/configMap` / `kubernetes/secret` with name = reference = the name
 * referenced (a versioned name such as `cfg-v002` stays versioned). Kinds that reference nothing give `[]`.
 * `account` is accepted for the caller's convenience; Clouddriver puts no account on these artifacts, so neither
 * does this.
 */
export function listArtifacts(object: KubeObject, _account: string): Artifact[] {
  let set: ReplacerSet;
  try {
    set = kindTraits(String(object.apiVersion ?? ''), String(object.kind ?? '')).replacers;
  } catch {
    set = 'none';
  }
  return findArtifacts(object, set);
}
