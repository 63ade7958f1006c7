/**
 * `github/file` accounts (Clouddriver's `GitHubArtifactCredentials`): the artifact's `reference` is a contents API URL
 * (`https://api.github.com/repos/{owner}/{repo}/contents/{path}`, or GitHub Enterprise's `/api/v3/…`), its `version`
 * the ref (branch, tag or commit; `master` when blank, as Clouddriver), sent as `?ref=`, with the account's token as
 * `Authorization: token …`. Two modes, as Clouddriver's `useContentAPI`:
 *
 * - false (Clouddriver's default): the contents API answers the file's JSON metadata, and the file is downloaded from
 *   its `download_url` — the token goes there only when it is on the API's origin (GitHub Enterprise's `/raw/…`);
 *   github.com's `raw.githubusercontent.com` carries its own short-lived token in the URL for private repositories;
 * - true: the file comes back raw in one request (`Accept: application/vnd.github.v3.raw`).
 *
 * Both requests go through the same bounds and target policy (bounded-fetch.ts).
 */
import type { ArtifactAccount } from './artifact-account.js';
import type { GitHubAccountConfig } from '../../config/artifacts-schema.js';
import { badArtifact, upstreamFailed } from './artifact-errors.js';
import type { ArtifactBody } from './artifact-spool.js';
import { createAccountAuth } from './account-auth.js';
import { type FetchLimits, fetchBounded } from './bounded-fetch.js';
import { createTargetPolicy } from './target-policy.js';

/** Reads a (bounded) body to text. */
async function textOf(body: ArtifactBody): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of body.stream()) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks).toString('utf8');
}

/** The `download_url` of a contents API answer; a 502 naming the artifact when there is none. */
function downloadUrlOf(text: string, what: string): URL {
  let metadata: unknown;
  try {
    metadata = JSON.parse(text);
  } catch {
    throw upstreamFailed(`the contents API answered ${what} with something that is not JSON metadata`);
  }
  const url = (metadata as { download_url?: unknown } | null)?.download_url;
  if (typeof url !== 'string' || url === '')
    throw upstreamFailed(
      `Failed to retrieve your github artifact's download URL (${what}): the contents API answered no download_url ` +
        '(a directory, a submodule, or incorrect auth)',
    );
  try {
    return new URL(url);
  } catch {
    throw upstreamFailed(`the download_url of ${what} is not a URL`);
  }
}

/** One `github/file` account; reads its credential files now. */
export function createGitHubAccount(config: GitHubAccountConfig, limits: FetchLimits): ArtifactAccount {
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
      const what = `${artifact.name || url.pathname} at ${artifact.version || 'master'}`;
      if (config.useContentAPI) {
        return fetchBounded(
          { url: url.toString(), headers: { accept: 'application/vnd.github.v3.raw', ...headers }, secrets, policy, what },
          limits,
        );
      }
      const metadata = await fetchBounded(
        {
          url: url.toString(),
          headers: { accept: 'application/vnd.github.v3+json', ...headers },
          secrets,
          policy,
          what: `metadata of ${what}`,
        },
        limits,
      );
      const download = downloadUrlOf(await textOf(metadata), what);
      const sameOrigin = download.origin === url.origin;
      return fetchBounded(
        {
          url: download.toString(),
          headers: sameOrigin ? headers : {},
          secrets,
          policy,
          what: `${what} from ${download.origin}${download.pathname}`,
        },
        limits,
      );
    },
  };
}
