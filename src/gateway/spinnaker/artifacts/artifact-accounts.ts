/**
 * The artifact accounts of the gateway (Clouddriver's `ArtifactCredentialsRepository`): the built-in ones, then the
 * configured ones by type (http, Helm, GitHub, git), then `no-auth-http-account` when asked for and no http account
 * uses credentials. A fetch goes to the first account with the artifact's account name that handles its type.
 *
 * Artifact accounts are not Kubernetes accounts: the `accounts` patterns of a caller's authorization rule and
 * `X-SPINNAKER-ACCOUNTS` do not filter them (docs/spinnaker.md); every caller with the `spinnaker` role sees them all.
 */
import type { ArtifactAccount } from './artifact-account.js';
import type { ArtifactsConfig } from '../../config/artifacts-schema.js';
import { artifactNotFound } from './artifact-errors.js';
import type { FetchLimits } from './bounded-fetch.js';
import { createBindingOnlyAccounts, createEmbeddedAccount } from './built-in-accounts.js';
import { createGitHubAccount } from './github-account.js';
import { createGitRepoAccount } from './git-repo-account.js';
import { createHelmAccount } from './helm-account.js';
import { createHttpAccount } from './http-account.js';

/** See the module comment. */
export interface ArtifactAccounts {
  /** Every account, in Clouddriver's order: what `GET /artifacts/credentials` lists. */
  readonly all: readonly ArtifactAccount[];
  /** The first account named `name` that handles `type`; 404 otherwise (Clouddriver's `MissingCredentialsException`). */
  forType(name: string, type: string): ArtifactAccount;
}

/** The fetch bounds of the configuration. */
function fetchLimitsOf(config: ArtifactsConfig): FetchLimits {
  return {
    maxBytes: config.maxBytes,
    connectTimeoutMs: config.connectTimeoutSeconds * 1000,
    timeoutMs: config.timeoutSeconds * 1000,
    maxRedirects: config.maxRedirects,
  };
}

/**
 * Builds the accounts of `config`, reading every credential file now: a file that cannot be read fails the gateway's
 * start with a message naming the account (not the file's contents).
 */
export function createArtifactAccounts(config: ArtifactsConfig): ArtifactAccounts {
  const limits = fetchLimitsOf(config);
  const http = config.http.accounts.map((a) => createHttpAccount(a, limits));
  const all: ArtifactAccount[] = [
    createEmbeddedAccount(),
    ...createBindingOnlyAccounts(),
    ...http,
    ...config.helm.accounts.map((a) => createHelmAccount(a, limits)),
    ...config.github.accounts.map((a) => createGitHubAccount(a, limits)),
    ...config.gitRepo.accounts.map((a) => createGitRepoAccount(a, limits, config.gitRepo.cloneDir)),
  ];
  if (config.http.noAuthAccount && !http.some((a) => a.usesAuth)) {
    all.push(createHttpAccount({ name: 'no-auth-http-account', allowedPrivateNetworks: [] }, limits));
  }
  return {
    all,
    forType(name, type) {
      const account = all.find((a) => a.name === name && a.handles(type));
      if (!account) throw artifactNotFound(`Artifact credentials '${name}' cannot handle artifacts of type '${type}'`);
      return account;
    },
  };
}
