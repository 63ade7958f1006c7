/**
 * The three kubeconfig entries `outpost kubeconfig` writes for one account — cluster, user and context — from the
 * checked command-line input. Pure: reading files and the kubeconfig itself happen elsewhere.
 */
import { isValidAccountName } from '../shared/account-name.js';
import { CliError, ExitCode } from './errors.js';
import { EXEC_CREDENTIAL_API_VERSION } from './exec-credential.js';
import type { NamedEntry } from './kubeconfig-document.js';

/** How kubectl authenticates to the gateway. */
export type KubeCredential =
  /** The token itself, in the kubeconfig. */
  | { type: 'token'; token: string }
  /**
   * `outpost credential` run by kubectl: with `gateway`, the ID token `outpost login` cached for it (of `provider`
   * when named); else `tokenFile` (absolute) or, when absent, OUTPOST_TOKEN in kubectl's environment.
   */
  | { type: 'exec'; command: string; tokenFile?: string; gateway?: string; provider?: string }
  /** No credentials (a gateway that needs none): an empty user entry. */
  | { type: 'none' };

/** Everything the entries are made of. */
export interface KubeconfigEntriesInput {
  account: string;
  /** `<gateway>/k8s/<account>`, from {@link gatewayServerUrl}. */
  server: string;
  /** Context name (default `outpost-<account>`). */
  contextName?: string;
  credential: KubeCredential;
  /** Absolute path of a PEM CA bundle for an https gateway. */
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
  namespace?: string;
}

/** The cluster, user and context entries. */
export interface KubeconfigEntries {
  cluster: NamedEntry;
  user: NamedEntry;
  context: NamedEntry;
}

/** `outpost-<account>`: the name of the account's cluster and user entries (and its context by default). */
export function entryName(account: string): string {
  return `outpost-${account}`;
}

/** Throws CliError (exit 2) unless `account` follows the gateway's account-name rule. */
export function checkAccountName(account: string): string {
  if (!isValidAccountName(account)) {
    throw new CliError(
      `invalid account name "${account}": lowercase letters, digits, '-', '.' and '_', starting and ending with a letter or digit, at most 253 characters`,
      ExitCode.USAGE,
    );
  }
  return account;
}

/**
 * The API server URL kubectl is given: the gateway's HTTP URL (any path prefix kept, trailing slashes dropped) plus
 * `/k8s/<account>` with the account URL-encoded. Throws CliError (exit 2) for a URL that is not plain http(s).
 */
export function gatewayServerUrl(gateway: string, account: string): string {
  let url: URL;
  try {
    url = new URL(gateway);
  } catch {
    throw new CliError(`invalid --gateway URL "${gateway}" (expected http(s)://host[:port])`, ExitCode.USAGE);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new CliError(`invalid --gateway URL "${gateway}" (expected http:// or https://)`, ExitCode.USAGE);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new CliError(
      `invalid --gateway URL "${gateway}" (no user, query or fragment: only http(s)://host[:port][/path])`,
      ExitCode.USAGE,
    );
  }
  const base = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return `${base}/k8s/${encodeURIComponent(account)}`;
}

/** Builds the entries. */
export function buildKubeconfigEntries(input: KubeconfigEntriesInput): KubeconfigEntries {
  const name = entryName(input.account);
  const cluster: Record<string, unknown> = { server: input.server };
  if (input.caFile) cluster['certificate-authority'] = input.caFile;
  if (input.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  const context: Record<string, unknown> = { cluster: name, user: name };
  if (input.namespace) context.namespace = input.namespace;
  return {
    cluster: { name, cluster },
    user: { name, user: userOf(input.credential) },
    context: { name: input.contextName ?? name, context },
  };
}

/** The plugin's arguments: `credential` and where its token comes from. */
function execArgs(credential: Extract<KubeCredential, { type: 'exec' }>): string[] {
  if (credential.gateway !== undefined) {
    return [
      'credential',
      '--gateway',
      credential.gateway,
      ...(credential.provider === undefined ? [] : ['--provider', credential.provider]),
    ];
  }
  return credential.tokenFile ? ['credential', '--token-file', credential.tokenFile] : ['credential'];
}

function userOf(credential: KubeCredential): Record<string, unknown> {
  if (credential.type === 'token') return { token: credential.token };
  if (credential.type === 'none') return {};
  return {
    exec: {
      apiVersion: EXEC_CREDENTIAL_API_VERSION,
      command: credential.command,
      args: execArgs(credential),
      interactiveMode: 'Never',
      provideClusterInfo: false,
      installHint:
        'kubectl runs "outpost credential" (the Outpost CLI) for the token; re-run "outpost kubeconfig --exec" where it is installed',
    },
  };
}
