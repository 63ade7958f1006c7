/**
 * What the read commands (`accounts`, `operations`) share: `--gateway`, the credential flags (client-credentials.ts),
 * `-o` with its allowed values, commander's errors as exit 2 on the injected streams, and gateway errors reported like
 * the operation commands report them.
 */
import { Option, type Command } from 'commander';
import type { ClientContext } from './client-command.js';
import { addCredentialOptions, type CredentialOptions, type GatewayConnection, resolveGatewayConnection } from './client-credentials.js';
import { configureCommandOutput } from './command-output.js';
import { describeClientError } from './errors.js';
import { defaultGatewayUrl } from './operation-client.js';

/** The flags every read command has. */
export interface ReadOptions extends CredentialOptions {
  gateway: string;
  output?: string;
}

/**
 * Adds `--gateway`, `-o` (one of `outputs`) and the credential flags, and routes commander's output and errors through
 * `ctx`.
 */
export function configureReadCommand(cmd: Command, ctx: ClientContext, outputs: string[]): Command {
  cmd
    .option('--gateway <url>', 'gateway HTTP(S) URL (Connect API; env OUTPOST_GATEWAY)', defaultGatewayUrl(ctx.env))
    .addOption(new Option('-o, --output <format>', 'output format (default: a table)').choices(outputs));
  addCredentialOptions(cmd);
  return configureCommandOutput(cmd, ctx);
}

/** The read command's connection (client-credentials.ts); rejects with CliError (exit 2) like it. */
export function openReadGateway(ctx: ClientContext, opts: ReadOptions): Promise<GatewayConnection> {
  return resolveGatewayConnection(opts.gateway, opts, ctx.env);
}

/** Prints `error: <message>` for any error of a gateway call and reports its exit code. Never throws. */
export function reportReadError(ctx: ClientContext, err: unknown, gatewayUrl: string): void {
  const { exitCode, message } = describeClientError(err, gatewayUrl);
  ctx.io.stderr(`error: ${message}\n`);
  ctx.exit(exitCode);
}
