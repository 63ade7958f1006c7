/**
 * `http/file` accounts (Clouddriver's `HttpArtifactCredentials`): the artifact's `reference` is the URL, fetched with
 * the account's credentials (Basic or a token) within the gateway's bounds (bounded-fetch.ts). The optional
 * `no-auth-http-account` is the same thing without credentials and with no private network allowed.
 */
import type { ArtifactAccount } from './artifact-account.js';
import type { ArtifactAccountConfig } from '../../config/artifacts-schema.js';
import { badArtifact } from './artifact-errors.js';
import { createAccountAuth } from './account-auth.js';
import { type FetchLimits, fetchBounded } from './bounded-fetch.js';
import { createTargetPolicy } from './target-policy.js';

/** One `http/file` account; reads its credential files now (a missing one fails start-up). */
export function createHttpAccount(config: ArtifactAccountConfig, limits: FetchLimits): ArtifactAccount & { usesAuth: boolean } {
  const auth = createAccountAuth(config.name, config);
  const policy = createTargetPolicy(config.allowedPrivateNetworks);
  return {
    name: config.name,
    types: ['http/file'],
    type: 'artifacts-http',
    usesAuth: auth.usesAuth,
    handles: (type) => type === 'http/file',
    async download(artifact) {
      if (!artifact.reference) throw badArtifact('an http/file artifact needs its URL in reference');
      const { headers, secrets } = await auth.material();
      return fetchBounded({ url: artifact.reference, headers, secrets, policy }, limits);
    },
  };
}
