/**
 * `github/file` accounts (Clouddriver's `GitHubArtifactCredentials`): the artifact's `reference` is a contents API URL
 * (`https://api.github.com/repos/{owner}/{repo}/contents/{path}`, or GitHub Enterprise's `/api/v3/…`), its `version`
 * the ref (branch, tag or commit; `master` when blank, as Clouddriver), sent as `?ref=`. The file comes back raw in
 * one request (`Accept: application/vnd.github.v3.raw`, Clouddriver's `useContentAPI`), with the account's token as
 * `Authorization: token …`.
 */
import type { ArtifactAccount } from './artifact-account.js';
import type { ArtifactAccountConfig } from './artifact-config.js';
import { badArtifact } from './artifact-errors.js';
import { createAccountAuth } from './account-auth.js';
import { type FetchLimits, fetchBounded } from './bounded-fetch.js';
import { createTargetPolicy } from './target-policy.js';

/** One `github/file` account; reads its credential files now. */
export function createGitHubAccount(config: ArtifactAccountConfig, limits: FetchLimits): ArtifactAccount {
  const auth = createAccountAuth(config.name, config, 'token');
  const policy = createTargetPolicy(config.allowedPrivateNetworks);
  return {
    name: config.name,
    types: ['github/file'],
    type: 'artifacts-github',
    handles: (type) => type === 'github/file',
    async download(artifact) {
      if (!artifact.reference) throw badArtifact('a github/file artifact needs its contents API URL in reference');
      let url: URL;
      try {
        url = new URL(artifact.reference);
      } catch {
        throw badArtifact('the reference of a github/file artifact is not a URL');
      }
      url.searchParams.set('ref', artifact.version || 'master');
      const { headers, secrets } = await auth.material();
      return fetchBounded(
        {
          url: url.toString(),
          headers: { accept: 'application/vnd.github.v3.raw', ...headers },
          secrets,
          policy,
          what: `${artifact.name || url.pathname} at ${artifact.version || 'master'}`,
        },
        limits,
      );
    },
  };
}
