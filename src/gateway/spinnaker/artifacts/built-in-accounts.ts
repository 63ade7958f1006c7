/**
 * The artifact accounts every Clouddriver with the Kubernetes provider has, whatever its configuration (contract
 * §4.4, §4.5): `embedded-artifact` decodes `embedded/base64` (Bake (Manifest) output, inline artifacts) and is the
 * account of every `embedded/` and `remote/` type; `custom-artifact` and `kubernetes` exist only so that Deck can
 * bind `custom/object` and `kubernetes/*` artifacts — fetching them is the error Clouddriver gives (500).
 */
import { HttpError } from '../../http/errors.js';
import type { ArtifactAccount } from './artifact-account.js';
import { badArtifact } from './artifact-errors.js';
import { bodyOf } from './artifact-spool.js';

/** Standard or URL-safe base64, padded or not, line breaks allowed (Java's strict decoder is stricter; leniency is harmless). */
function decodeBase64(reference: string): Buffer {
  const compact = reference.replace(/[\r\n\t ]/g, '');
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(compact) || compact.replace(/=+$/, '').length % 4 === 1) {
    throw badArtifact('the reference of an embedded/base64 artifact is not valid base64');
  }
  return Buffer.from(compact, compact.includes('-') || compact.includes('_') ? 'base64url' : 'base64');
}

/** `embedded-artifact`. */
export function createEmbeddedAccount(): ArtifactAccount {
  return {
    name: 'embedded-artifact',
    types: ['embedded/base64', 'remote/base64'],
    type: 'artifacts-embedded',
    handles: (type) => type.startsWith('embedded/') || type.startsWith('remote/'),
    async download(artifact) {
      if (artifact.type === 'embedded/base64') return bodyOf(decodeBase64(artifact.reference));
      if (artifact.type === 'remote/base64') {
        throw badArtifact("remote/base64 artifacts live in Spinnaker's artifact store, which Outpost does not read; send embedded/base64");
      }
      throw badArtifact(`embedded-artifact cannot fetch ${artifact.type} artifacts, only embedded/base64`);
    },
  };
}

/** An account whose artifacts are only bound, never fetched. */
function bindingOnly(name: string, type: string, types: string[], message: string): ArtifactAccount {
  return {
    name,
    types,
    type,
    handles: (t) => types.includes(t),
    download: () => Promise.reject(new HttpError(500, 'Internal Server Error', message)),
  };
}

/** `custom-artifact` and `kubernetes`, in the order Clouddriver lists them. */
export function createBindingOnlyAccounts(): ArtifactAccount[] {
  return [
    bindingOnly(
      'custom-artifact',
      'artifacts-custom',
      ['custom/object'],
      'Custom references are passed on to cloud platforms to handle or process',
    ),
    bindingOnly(
      'kubernetes',
      'artifacts-kubernetes',
      ['kubernetes/configMap', 'kubernetes/deployment', 'kubernetes/replicaSet', 'kubernetes/secret'],
      'Kubernetes artifacts are bound into manifests at deploy time; they cannot be downloaded',
    ),
  ];
}
