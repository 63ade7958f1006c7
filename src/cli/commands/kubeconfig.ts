/**
 * `outpost kubeconfig --account A`: points kubectl at the gateway's Kubernetes API proxy (`<gateway>/k8s/A`) by
 * writing — or merging into — a kubeconfig a cluster, a user and a context named `outpost-A`. Everything else in the
 * file stays as it was; an existing `outpost-A` is replaced. docs/kubectl.md shows it in use.
 */
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { type ClientCommandDeps, type ClientContext, fail, resolveDeps } from '../../client/client-command.js';
import { checkGatewayUrl, readCaFile } from '../../client/client-credentials.js';
import { configureCommandOutput } from '../../client/command-output.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { findToken, jwtExpiry, readTokenFile, rfc3339 } from '../../client/kube-token.js';
import { parseKubeconfig, emptyKubeconfig, renderKubeconfig, setCurrentContext, upsertEntry } from '../../client/kubeconfig-document.js';
import {
  buildKubeconfigEntries,
  checkAccountName,
  entryName,
  gatewayServerUrl,
  type KubeCredential,
} from '../../client/kubeconfig-entries.js';
import { defaultKubeconfigPath, readKubeconfigText, writeKubeconfigAtomically } from '../../client/kubeconfig-file.js';
import { checkProviderName, gatewayKey } from '../../client/login/login-store.js';
import { loginCommand, pickLogin } from '../../client/login/login-token.js';
import { defaultGatewayUrl } from '../../client/operation-client.js';
import { outpostEntryPath } from '../../client/outpost-entry.js';

interface KubeconfigOptions {
  account: string;
  gateway: string;
  kubeconfig?: string;
  context?: string;
  tokenFile?: string;
  exec?: boolean;
  oidc?: boolean;
  provider?: string;
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
  namespace?: string;
  setCurrent?: boolean;
}

const HELP = `
Credentials (the gateway accepts its own bearer tokens on /k8s/; the token needs the role "kube"):
  default          the token itself is stored in the kubeconfig (user.token), read now from --token-file F, else
                   from the OUTPOST_TOKEN environment variable; with neither, the context has no credentials (for a
                   gateway that needs none, such as the demo's) and a note on stderr says so
  --exec           nothing secret is stored: kubectl runs "outpost credential" each time it starts (and again
                   when a JWT expired), which reads the token then, from --token-file F (its absolute path is
                   stored) or, without it, from OUTPOST_TOKEN in kubectl's environment
  --exec --oidc    kubectl acts as the person signed in with "outpost login --gateway URL": the plugin serves the
                   cached ID token, renewed with its refresh token when it expires (--provider NAME when several
                   providers are signed in); the gateway impersonates that person and their groups in the cluster

The kubeconfig written is --kubeconfig, else the first path of KUBECONFIG, else ~/.kube/config. Entries named
outpost-ACCOUNT (cluster, user, context) are added or replaced; everything else is kept. Written atomically, mode 0600.

Examples:
  OUTPOST_TOKEN=... outpost kubeconfig --account prod-eu --gateway https://outpost.example.com --set-current
  outpost kubeconfig --account prod-eu --gateway https://outpost.example.com --exec --token-file ~/.outpost/token
  outpost login --gateway https://outpost.example.com
  outpost kubeconfig --account prod-eu --gateway https://outpost.example.com --exec --oidc
  kubectl --context outpost-prod-eu get pods -A
`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

function checkNamespace(namespace: string): string {
  if (namespace.length > 63 || !DNS_LABEL.test(namespace)) {
    throw new CliError(`invalid --namespace "${namespace}" (a DNS label: lowercase letters, digits and '-')`, ExitCode.USAGE);
  }
  return namespace;
}

function checkContextName(name: string): string {
  if (name.trim() === '' || /[\s\p{Cc}]/u.test(name)) throw new CliError(`invalid --context "${name}" (no spaces)`, ExitCode.USAGE);
  return name;
}

/**
 * The credential to store; notes for stderr. Without any token source the context gets no credentials (a gateway that
 * needs none, such as the demo's), and a note says so. Throws CliError (exit 2) for an unreadable or malformed token.
 */
function credentialOf(opts: KubeconfigOptions, ctx: ClientContext, notes: string[]): KubeCredential {
  const tokenFile = opts.tokenFile === undefined ? undefined : resolve(opts.tokenFile);
  if (opts.oidc) return signInCredential(opts, ctx, notes);
  if (opts.provider !== undefined) throw new CliError('--provider goes with --exec --oidc', ExitCode.USAGE);
  if (opts.exec) {
    if (tokenFile !== undefined) {
      readTokenFile(tokenFile); // refuse a missing or empty file now rather than at kubectl's first call
      return { type: 'exec', command: outpostEntryPath(), tokenFile };
    }
    if (ctx.env.OUTPOST_TOKEN === undefined) notes.push('note: without --token-file, kubectl must run with OUTPOST_TOKEN set');
    return { type: 'exec', command: outpostEntryPath() };
  }
  const found = findToken(tokenFile, ctx.env);
  if (!found) {
    notes.push(
      'note: no token (OUTPOST_TOKEN or --token-file FILE): the context sends no credentials, which suits a gateway ' +
        'that needs none; for one that does, run again with a token (or --exec)',
    );
    return { type: 'none' };
  }
  const expiry = jwtExpiry(found.token);
  if (expiry) {
    const when = rfc3339(expiry);
    notes.push(
      expiry.getTime() <= Date.now()
        ? `warning: the token is a JWT that expired at ${when}: the gateway will refuse it`
        : `note: the token is a JWT that expires at ${when}; with --exec --token-file, kubectl picks up a renewed file by itself`,
    );
  }
  return { type: 'token', token: found.token };
}

/**
 * The exec entry of `--exec --oidc`: `outpost credential --gateway URL [--provider P]`. Not being signed in yet is a
 * note (kubectl will say to run outpost login); several providers signed in and none named is refused (exit 2).
 */
function signInCredential(opts: KubeconfigOptions, ctx: ClientContext, notes: string[]): KubeCredential {
  if (!opts.exec) {
    throw new CliError(
      '--oidc needs --exec: kubectl must run "outpost credential" to renew the ID token, which expires soon',
      ExitCode.USAGE,
    );
  }
  if (opts.tokenFile !== undefined) throw new CliError('--oidc and --token-file exclude each other: give one', ExitCode.USAGE);
  const provider = opts.provider === undefined ? undefined : checkProviderName(opts.provider);
  const gateway = gatewayKey(checkGatewayUrl(opts.gateway));
  try {
    if (!pickLogin(ctx.env, gateway, provider))
      notes.push(`note: not signed in to ${gateway} yet: run ${loginCommand(gateway)} before kubectl`);
  } catch (err) {
    // A named provider without a login is fine for now: kubectl will say to sign in. Several and none named is not.
    if (!(err instanceof CliError) || provider === undefined) throw err;
    notes.push(`note: ${err.message} before kubectl`);
  }
  return { type: 'exec', command: outpostEntryPath(), gateway, ...(provider === undefined ? {} : { provider }) };
}

function run(opts: KubeconfigOptions, ctx: ClientContext): void {
  const notes: string[] = [];
  const account = checkAccountName(opts.account);
  const server = gatewayServerUrl(opts.gateway, account);
  const https = server.startsWith('https:');
  if (opts.caFile !== undefined && opts.insecureSkipTlsVerify) {
    throw new CliError('--ca-file and --insecure-skip-tls-verify exclude each other', ExitCode.USAGE);
  }
  if (!https && (opts.caFile !== undefined || opts.insecureSkipTlsVerify)) {
    throw new CliError('--ca-file and --insecure-skip-tls-verify need an https:// gateway', ExitCode.USAGE);
  }
  const caFile = opts.caFile === undefined ? undefined : readCaFile(opts.caFile).path;
  const namespace = opts.namespace === undefined ? undefined : checkNamespace(opts.namespace);
  const contextName = checkContextName(opts.context ?? entryName(account));
  const credential = credentialOf(opts, ctx, notes);
  if (!https && credential.type !== 'none') {
    // client-go reads a kubeconfig user's credentials only for a TLS transport
    notes.push(
      `warning: kubectl sends no credentials over plain http: its requests to ${server} will be anonymous; use the gateway's https:// URL`,
    );
  }
  const path = opts.kubeconfig === undefined ? defaultKubeconfigPath(ctx.env) : resolve(opts.kubeconfig);
  const text = readKubeconfigText(path);
  const doc = text === undefined ? emptyKubeconfig() : parseKubeconfig(text, path);
  const entries = buildKubeconfigEntries({
    account,
    server,
    contextName,
    credential,
    caFile,
    insecureSkipTlsVerify: opts.insecureSkipTlsVerify,
    namespace,
  });
  upsertEntry(doc, 'clusters', entries.cluster);
  upsertEntry(doc, 'users', entries.user);
  upsertEntry(doc, 'contexts', entries.context);
  if (opts.setCurrent) setCurrentContext(doc, contextName);
  const written = writeKubeconfigAtomically(path, renderKubeconfig(doc, text));
  for (const note of notes) ctx.io.stderr(`${note}\n`);
  ctx.io.stdout(`context "${contextName}" written to ${written} (server ${server})\n`);
  if (opts.setCurrent) ctx.io.stdout(`current-context is now "${contextName}"\n`);
}

/** Registers `kubeconfig`. */
export function registerKubeconfigCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('kubeconfig')
    .description("write a kubectl context for an account that goes through the gateway's /k8s/ proxy")
    .addOption(new Option('--account <name>', 'account (cluster) kubectl reaches').env('OUTPOST_ACCOUNT').makeOptionMandatory())
    .option('--gateway <url>', 'gateway HTTP(S) URL as kubectl reaches it (OUTPOST_GATEWAY)', defaultGatewayUrl(ctx.env))
    .option('--kubeconfig <file>', 'kubeconfig to write or merge into (default: first path of KUBECONFIG, else ~/.kube/config)')
    .option('--context <name>', 'context name (default: outpost-ACCOUNT)')
    .option('--token-file <file>', 'file holding the Outpost token (default: the OUTPOST_TOKEN environment variable)')
    .option('--exec', 'store an exec credential plugin entry ("outpost credential") instead of the token')
    .option('--oidc', 'with --exec: kubectl uses the sign-in of "outpost login --gateway URL" (renewed as needed)')
    .option('--provider <name>', 'with --exec --oidc: the sign-in provider, when several are signed in to the gateway')
    .option('--ca-file <file>', 'PEM CA bundle that signed the gateway certificate (https)')
    .option('--insecure-skip-tls-verify', 'do not verify the gateway certificate (https; testing only)')
    .option('-n, --namespace <namespace>', "the context's default namespace")
    .option('--set-current', 'also make it the current context')
    .addHelpText('after', HELP);
  configureCommandOutput(cmd, ctx).action((opts: KubeconfigOptions) => {
    try {
      run(opts, ctx);
      ctx.exit(ExitCode.OK);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      fail(ctx, err.exitCode, err.message);
    }
  });
  // `.env()` reads process.env; tests inject their own environment.
  if (ctx.env !== process.env && ctx.env.OUTPOST_ACCOUNT) cmd.setOptionValueWithSource('account', ctx.env.OUTPOST_ACCOUNT, 'env');
}
