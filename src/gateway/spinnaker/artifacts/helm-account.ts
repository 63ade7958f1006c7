/**
 * `helm/chart` and `helm/index` accounts (Clouddriver's `HelmArtifactCredentials`), one chart repository each: every
 * call downloads `<repository>/index.yaml` (bounded like any fetch; Clouddriver does not cache it either).
 * `helm/index` answers the index itself; `helm/chart` answers the chart archive of `name` at `version` (blank: the
 * latest, helm-index.ts), trying the entry's URLs in order; the credentials go only to URLs on the repository's origin
 * (as helm sends them without `--pass-credentials`). `names` and `versions` serve Deck's Helm chart editor.
 */
import type { ArtifactAccount } from './artifact-account.js';
import type { HelmAccountConfig } from '../../config/artifacts-schema.js';
import { upstreamFailed } from './artifact-errors.js';
import type { ArtifactBody } from './artifact-spool.js';
import { createAccountAuth } from './account-auth.js';
import { type FetchLimits, fetchBounded } from './bounded-fetch.js';
import { chartUrls, chartVersions, parseHelmIndex, type HelmIndex } from './helm-index.js';
import { createTargetPolicy } from './target-policy.js';

async function readAll(body: ArtifactBody): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body.stream()) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** One Helm account; reads its credential files now. */
export function createHelmAccount(config: HelmAccountConfig, limits: FetchLimits): ArtifactAccount {
  const auth = createAccountAuth(config.name, config);
  const policy = createTargetPolicy(config.allowedPrivateNetworks);
  const repository = config.repository.replace(/\/+$/, '');
  const fetchIndex = async (): Promise<ArtifactBody> => {
    const { headers, secrets } = await auth.material();
    return fetchBounded({ url: `${repository}/index.yaml`, headers, secrets, policy, what: `index.yaml of ${repository}` }, limits);
  };
  const readIndex = async (): Promise<HelmIndex> => parseHelmIndex((await readAll(await fetchIndex())).toString('utf8'), repository);
  return {
    name: config.name,
    types: ['helm/chart', 'helm/index'],
    type: 'artifacts-helm',
    handles: (type) => type === 'helm/chart' || type === 'helm/index',
    async download(artifact) {
      if (artifact.type === 'helm/index') return fetchIndex();
      const { version, urls } = chartUrls(await readIndex(), artifact.name, artifact.version, repository);
      const { headers, secrets } = await auth.material();
      let last: unknown;
      const origin = new URL(repository).origin;
      for (const url of urls) {
        // As helm without --pass-credentials: the repository's credentials go to the repository's origin only.
        const sameOrigin = URL.canParse(url) && new URL(url).origin === origin;
        try {
          return await fetchBounded(
            { url, headers: sameOrigin ? headers : {}, secrets, policy, what: `chart ${artifact.name} ${version}` },
            limits,
          );
        } catch (err) {
          last = err;
        }
      }
      throw last ?? upstreamFailed('Unable to download the contents of artifact');
    },
    names: async () => [...(await readIndex()).keys()],
    versions: async (chart) => chartVersions(await readIndex(), chart),
  };
}
