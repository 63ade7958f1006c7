/**
 * `outpost credential`: the exec credential plugin kubectl runs for a context written by `outpost kubeconfig --exec`.
 * Prints a client.authentication.k8s.io/v1 ExecCredential with the Outpost token on stdout — and nothing else there,
 * ever: errors go to stderr with exit 1 or 2, and kubectl shows them. The token is a file's or OUTPOST_TOKEN, or, with
 * `--gateway`, the ID token `outpost login` cached for that gateway, renewed when due.
 */
import type { Command } from 'commander';
import { type ClientCommandDeps, type ClientContext, fail, resolveDeps } from '../../client/client-command.js';
import { checkGatewayUrl } from '../../client/client-credentials.js';
import { configureCommandOutput } from '../../client/command-output.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { buildExecCredential, checkExecInfo } from '../../client/exec-credential.js';
import { findToken, type TokenSource } from '../../client/kube-token.js';
import { loginCommand, loginTokenFor } from '../../client/login/login-token.js';

interface CredentialOptions {
  tokenFile?: string;
  gateway?: string;
  provider?: string;
}

const HELP = `
The token comes from one of:
  --gateway URL    the ID token "outpost login --gateway URL" cached (with several providers signed in to that
                   gateway: --provider NAME, or OUTPOST_PROVIDER), renewed with its refresh token when it expires;
                   not signed in: exit 2 with the login command to run
  --token-file F   the file F (read at every run, so a renewed file is picked up)
  (neither)        the OUTPOST_TOKEN environment variable (kubectl passes its own environment to the plugin)
When it is a JWT, its exp claim becomes status.expirationTimestamp and kubectl runs the plugin again after it; an
expired JWT is refused.

kubectl runs it through a kubeconfig entry that "outpost kubeconfig --exec" writes:
  users:
  - name: outpost-ACCOUNT
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: /path/to/outpost/bin/outpost.js
        args: [credential, --token-file, /home/me/.outpost/token]     # --exec --token-file
        # args: [credential, --gateway, https://outpost.example.com]  # --exec --oidc
        interactiveMode: Never
`;

async function tokenOf(opts: CredentialOptions, ctx: ClientContext, now: () => Date): Promise<TokenSource> {
  if (opts.gateway === undefined) {
    if (opts.provider !== undefined) throw new CliError('--provider needs --gateway URL: the gateway whose sign-in to use', ExitCode.USAGE);
    const found = findToken(opts.tokenFile, ctx.env);
    if (!found) {
      throw new CliError(
        'no token: pass --token-file FILE or set OUTPOST_TOKEN in the environment kubectl runs in; ' +
          'or pass --gateway URL to serve the sign-in of outpost login',
        ExitCode.USAGE,
      );
    }
    return found;
  }
  if (opts.tokenFile !== undefined) throw new CliError('--gateway and --token-file exclude each other: give one', ExitCode.USAGE);
  const gateway = checkGatewayUrl(opts.gateway);
  const login = await loginTokenFor(ctx.env, gateway, opts.provider ?? (ctx.env.OUTPOST_PROVIDER || undefined), now);
  if (!login) throw new CliError(`not signed in to ${gateway}: run ${loginCommand(gateway)}`, ExitCode.USAGE);
  return login;
}

async function run(opts: CredentialOptions, ctx: ClientContext, now: () => Date): Promise<void> {
  checkExecInfo(ctx.env.KUBERNETES_EXEC_INFO);
  const found = await tokenOf(opts, ctx, now);
  const credential = buildExecCredential(found.token);
  const expires = credential.status.expirationTimestamp;
  if (expires !== undefined && Date.parse(expires) <= now().getTime()) {
    throw new CliError(`the token from ${found.origin} expired at ${expires} (its JWT exp claim): get a new one`, ExitCode.FAILED);
  }
  ctx.io.stdout(`${JSON.stringify(credential)}\n`);
}

/** Registers `credential`. `now` is the clock expired JWTs and due renewals are judged by (tests). */
export function registerCredentialCommand(program: Command, deps?: ClientCommandDeps & { now?: () => Date }): void {
  const ctx = resolveDeps(deps);
  const now = deps?.now ?? (() => new Date());
  const cmd = program
    .command('credential')
    .description('kubectl exec credential plugin: print an ExecCredential with the Outpost token (see outpost kubeconfig --exec)')
    .option('--token-file <file>', 'file holding the Outpost token (default: the OUTPOST_TOKEN environment variable)')
    .option('--gateway <url>', 'serve the ID token "outpost login --gateway URL" cached, renewed when due')
    .option('--provider <name>', 'with --gateway: the provider, when several are signed in (env OUTPOST_PROVIDER)')
    .addHelpText('after', HELP);
  configureCommandOutput(cmd, ctx).action(async (opts: CredentialOptions) => {
    try {
      await run(opts, ctx, now);
      ctx.exit(ExitCode.OK);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      fail(ctx, err.exitCode, err.message);
    }
  });
}
