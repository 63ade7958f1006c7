/**
 * `outpost credential`: the exec credential plugin kubectl runs for a context written by `outpost kubeconfig --exec`.
 * Prints a client.authentication.k8s.io/v1 ExecCredential with the Outpost token on stdout — and nothing else there,
 * ever: errors go to stderr with exit 1 or 2, and kubectl shows them.
 */
import type { Command } from 'commander';
import { type ClientCommandDeps, type ClientContext, fail, resolveDeps } from '../../client/client-command.js';
import { configureCommandOutput } from '../../client/command-output.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { buildExecCredential, checkExecInfo } from '../../client/exec-credential.js';
import { findToken } from '../../client/kube-token.js';

interface CredentialOptions {
  tokenFile?: string;
}

const HELP = `
The token comes from --token-file FILE (read at every run, so a renewed file is picked up), else from the
OUTPOST_TOKEN environment variable (kubectl passes its own environment to the plugin). When it is a JWT, its exp
claim becomes status.expirationTimestamp and kubectl runs the plugin again after it; an expired JWT is refused.

kubectl runs it through a kubeconfig entry that "outpost kubeconfig --exec" writes:
  users:
  - name: outpost-ACCOUNT
    user:
      exec:
        apiVersion: client.authentication.k8s.io/v1
        command: /path/to/outpost/bin/outpost.js
        args: [credential, --token-file, /home/me/.outpost/token]
        interactiveMode: Never
`;

function run(opts: CredentialOptions, ctx: ClientContext, now: Date): void {
  checkExecInfo(ctx.env.KUBERNETES_EXEC_INFO);
  const found = findToken(opts.tokenFile, ctx.env);
  if (!found)
    throw new CliError('no token: pass --token-file FILE or set OUTPOST_TOKEN in the environment kubectl runs in', ExitCode.USAGE);
  const credential = buildExecCredential(found.token);
  const expires = credential.status.expirationTimestamp;
  if (expires !== undefined && Date.parse(expires) <= now.getTime()) {
    throw new CliError(`the token from ${found.origin} expired at ${expires} (its JWT exp claim): get a new one`, ExitCode.FAILED);
  }
  ctx.io.stdout(`${JSON.stringify(credential)}\n`);
}

/** Registers `credential`. `now` is the clock expired JWTs are judged by (tests). */
export function registerCredentialCommand(program: Command, deps?: ClientCommandDeps & { now?: () => Date }): void {
  const ctx = resolveDeps(deps);
  const now = deps?.now ?? (() => new Date());
  const cmd = program
    .command('credential')
    .description('kubectl exec credential plugin: print an ExecCredential with the Outpost token (see outpost kubeconfig --exec)')
    .option('--token-file <file>', 'file holding the Outpost token (default: the OUTPOST_TOKEN environment variable)')
    .addHelpText('after', HELP);
  configureCommandOutput(cmd, ctx).action((opts: CredentialOptions) => {
    try {
      run(opts, ctx, now());
      ctx.exit(ExitCode.OK);
    } catch (err) {
      if (!(err instanceof CliError)) throw err;
      fail(ctx, err.exitCode, err.message);
    }
  });
}
