/**
 * `outpost login`: signs the person in with one of the gateway's OpenID Connect providers and caches the tokens, so
 * every client command and kubectl (through `outpost credential --gateway`) act as them. docs/sign-in.md, "The CLI
 * and kubectl", describes the provider's side; docs/cli.md the command.
 */
import { type Command, Option } from 'commander';
import { type ClientCommandDeps, fail, parseTimeout, resolveDeps } from '../../client/client-command.js';
import { checkGatewayUrl, resolveGatewayTls } from '../../client/client-credentials.js';
import { configureCommandOutput } from '../../client/command-output.js';
import { CliError, ExitCode } from '../../client/errors.js';
import { defaultGatewayUrl } from '../../client/operation-client.js';

interface LoginOptions {
  gateway: string;
  provider?: string;
  flow?: 'device' | 'loopback';
  browser: boolean;
  timeout?: number;
  caFile?: string;
  insecureSkipTlsVerify?: boolean;
}

const HELP = `
How it signs in:
  device     (the default when the provider offers it) prints a URL and a code: open the URL in a browser on any
             device, enter the code and sign in there; the command waits until you did, the code expired, or you
             denied it. Works over SSH and in containers.
  loopback   listens on 127.0.0.1 (a free port), prints the provider's sign-in URL and opens it in your browser
             (xdg-open, or open on macOS; --no-browser only prints it); the provider sends the browser back to
             http://127.0.0.1:PORT/callback and the command completes the sign-in (PKCE, state checked).

The gateway lists its providers at GET /auth/providers (no credentials needed): with one, it is used; with several,
--provider NAME (or OUTPOST_PROVIDER) picks one. The tokens are cached per gateway and provider in
$OUTPOST_CONFIG_DIR/logins, else $XDG_CONFIG_HOME/outpost/logins, else ~/.config/outpost/logins (directory mode 0700,
files 0600; a file others may read is refused). From then on every client command sends the ID token to this gateway
when no other credential is given (the last step of the order in "outpost get --help"), renewed with the refresh
token when it expires; "outpost kubeconfig --exec --oidc" makes kubectl use it too. "outpost logout" forgets it.

Examples:
  outpost login --gateway https://outpost.example.com
  outpost login --gateway https://outpost.example.com --provider corp --flow loopback
  outpost get pods -n web --gateway https://outpost.example.com
`;

/** Registers `login`. */
export function registerLoginCommand(program: Command, deps?: ClientCommandDeps): void {
  const ctx = resolveDeps(deps);
  const cmd = program
    .command('login')
    .description("sign in with the gateway's identity provider (OpenID Connect) and cache the tokens for the CLI and kubectl")
    .option('--gateway <url>', 'gateway HTTP(S) URL (env OUTPOST_GATEWAY)', defaultGatewayUrl(ctx.env))
    .option('--provider <name>', 'sign-in provider of the gateway; needed when it has several (env OUTPOST_PROVIDER)')
    .addOption(
      new Option('--flow <flow>', 'how to sign in (default: device when the provider offers it, else loopback)').choices([
        'device',
        'loopback',
      ]),
    )
    .option('--no-browser', 'loopback: only print the sign-in URL, do not start a browser')
    .option('--timeout <duration>', "give up after this long, e.g. 2m (default: the device code's lifetime; loopback 5m)", parseTimeout)
    .option('--ca-file <file>', 'PEM CA bundle that signed the gateway certificate, https only (env OUTPOST_CA_FILE)')
    .option('--insecure-skip-tls-verify', 'do not verify the gateway certificate (https; testing only)')
    .addHelpText('after', HELP);
  configureCommandOutput(cmd, ctx).action(async (opts: LoginOptions) => {
    try {
      const gatewayUrl = checkGatewayUrl(opts.gateway);
      const tls = resolveGatewayTls(gatewayUrl, opts, ctx.env);
      // Loaded on use: openid-client is for signing in, not for every command.
      const { signIn } = await import('../../client/login/sign-in.js');
      await signIn(ctx.env, ctx.io, {
        gatewayUrl,
        tls,
        provider: opts.provider ?? (ctx.env.OUTPOST_PROVIDER || undefined),
        flow: opts.flow,
        openBrowser: opts.browser,
        timeoutMs: opts.timeout,
      });
      ctx.exit(ExitCode.OK);
    } catch (err) {
      if (err instanceof CliError) fail(ctx, err.exitCode, err.message);
      else fail(ctx, ExitCode.FAILED, `the sign-in failed: ${(err as Error).message}`);
    }
  });
}
