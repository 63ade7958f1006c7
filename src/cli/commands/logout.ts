/**
 * `outpost logout`: forgets what `outpost login` cached for a gateway (one provider or all) and revokes the refresh
 * token at the provider where it can, so the CLI and kubectl no longer act as the person.
 */
import type { Command } from 'commander';
import { type ClientCommandDeps, fail, resolveDeps } from '../../client/client-command.js';
import { checkGatewayUrl } from '../../client/client-credentials.js';
import { configureCommandOutput } from '../../client/command-output.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { defaultGatewayUrl } from '../../client/operation-client.js';

interface LogoutOptions {
  gateway: string;
  provider?: string;
  all?: boolean;
}

const HELP = `
Removes the cached tokens of the gateway's sign-in (the file in ~/.config/outpost/logins, or $OUTPOST_CONFIG_DIR or
$XDG_CONFIG_HOME) and, when the provider has a revocation endpoint, revokes the refresh token there first; when the
revocation fails a warning says so and the file is removed anyway. With several providers signed in to the gateway,
give --provider NAME or --all. Not being signed in is not an error.

Examples:
  outpost logout --gateway https://outpost.example.com
  outpost logout --gateway https://outpost.example.com --all
`;

/** Registers `logout`. */
export function registerLogoutCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('logout')
    .description('forget the sign-in "outpost login" cached for a gateway, revoking its refresh token at the provider')
    .option('--gateway <url>', 'gateway HTTP(S) URL (env OUTPOST_GATEWAY)', defaultGatewayUrl(ctx.env))
    .option('--provider <name>', 'the provider to sign out of, when several are signed in (env OUTPOST_PROVIDER)')
    .option('--all', 'sign out of every provider of the gateway')
    .addHelpText('after', HELP);
  configureCommandOutput(cmd, ctx).action(async (opts: LogoutOptions) => {
    try {
      const gatewayUrl = checkGatewayUrl(opts.gateway);
      const { signOut } = await import('../../client/login/sign-out.js');
      const provider = opts.provider ?? (opts.all ? undefined : ctx.env.OUTPOST_PROVIDER || undefined);
      await signOut(ctx.env, ctx.io, { gatewayUrl, provider, all: opts.all });
      ctx.exit(ExitCode.OK);
    } catch (err) {
      if (err instanceof CliError) fail(ctx, err.exitCode, err.message);
      else fail(ctx, ExitCode.FAILED, `the sign-out failed: ${(err as Error).message}`);
    }
  });
}
