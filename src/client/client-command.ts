/**
 * What every operation command shares: the common flags (`--account`, `-n`, `--gateway`, `--timeout`, `--id`,
 * `--no-wait`, and the credential flags of client-credentials.ts), exit code 2 for command-line errors, and the
 * credentials → account → submit → wait → print → exit-code flow.
 */
import { type Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import type { OperationRecord } from '../gen/outpost/api/v1/operation_service_pb.js';
import { addCredentialOptions, type CredentialOptions, type GatewayConnection, resolveGatewayConnection } from './client-credentials.js';
import { resolveAccount } from './default-account.js';
import { parseDuration, toProtoDuration } from './duration.js';
import { describeClientError, ExitCode } from './errors.js';
import { describeFailure, succeeded } from './format.js';
import { createProcessIo, type CliIo } from './io.js';
import { resolveKind, splitTarget, type ResolvedKind } from '../shared/kind-names.js';
import { createOperationClient, defaultGatewayUrl, type SubmitInit } from './operation-client.js';

/** Operations that only read: never stored by the gateway, so there is no id to come back to (`--no-wait`). */
const READ_CASES: ReadonlySet<string> = new Set(['get', 'list', 'logs', 'history']);
/** Injected by tests; the defaults are the real process. */
export interface ClientCommandDeps {
  io?: CliIo;
  env?: NodeJS.ProcessEnv;
  /** Receives the command's exit code (default: sets `process.exitCode` when non-zero). */
  exit?: (code: ExitCode) => void;
}

/** Resolved deps. */
export interface ClientContext {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  exit: (code: ExitCode) => void;
}

/** The common flags as commander parsed them. */
export interface ClientOptions extends CredentialOptions {
  /** Left out: the gateway's only account (default-account.ts). */
  account?: string;
  namespace?: string;
  gateway: string;
  /** Milliseconds. */
  timeout?: number;
  id?: string;
  wait: boolean;
}

/** Fills in the defaults of {@link ClientCommandDeps}. */
export function resolveDeps(deps: ClientCommandDeps = {}): ClientContext {
  return {
    io: deps.io ?? createProcessIo(),
    env: deps.env ?? process.env,
    exit: deps.exit ?? ((code) => void (code !== 0 && (process.exitCode = code))),
  };
}

/** Parses a `--timeout` DURATION (`30s`, `2m`) to milliseconds; commander shows the error for a bad or zero one. */
export function parseTimeout(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
  if (ms <= 0) throw new InvalidArgumentError(`must be greater than zero (got "${value}")`);
  return ms;
}

function parseId(value: string): string {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(value)) throw new InvalidArgumentError('must be 1–128 characters of A-Z a-z 0-9 . _ -');
  return value;
}

/**
 * Adds the common flags and makes command-line errors exit 2 with commander's message on the injected stderr.
 * `namespace: false` leaves out `-n` (for commands that take it themselves).
 */
export function configureClientCommand(cmd: Command, ctx: ClientContext, options: { namespace?: boolean } = {}): Command {
  cmd
    .addOption(
      new Option('--account <name>', 'account (cluster) to run against; may be left out when the gateway has exactly one').env(
        'OUTPOST_ACCOUNT',
      ),
    )
    .option('--gateway <url>', 'gateway HTTP(S) URL (Connect API; env OUTPOST_GATEWAY)', defaultGatewayUrl(ctx.env))
    .option('--timeout <duration>', 'how long the operation may take end to end, e.g. 30s, 2m (default 30s)', parseTimeout)
    .option('--id <id>', 'client-chosen operation id: retrying with the same id never runs the operation twice', parseId)
    .option('--no-wait', 'print the operation id once it is stored instead of waiting for the result (not for reads: they are not stored)');
  if (options.namespace !== false) cmd.option('-n, --namespace <namespace>', 'namespace (default: "default")');
  addCredentialOptions(cmd);
  cmd
    .showHelpAfterError(`See 'outpost ${cmd.name()} --help' for usage.`)
    .configureOutput({ writeOut: (s) => ctx.io.stdout(s), writeErr: (s) => ctx.io.stderr(s) })
    .exitOverride((err) => {
      if (err.exitCode === 0) throw err;
      throw new CommanderError(ExitCode.USAGE, err.code, err.message);
    });
  // `.env()` reads process.env; tests inject their own environment.
  if (ctx.env !== process.env && ctx.env.OUTPOST_ACCOUNT) cmd.setOptionValueWithSource('account', ctx.env.OUTPOST_ACCOUNT, 'env');
  return cmd;
}

/** Writes `error: <message>` and reports the exit code. */
export function fail(ctx: ClientContext, exitCode: ExitCode, message: string): void {
  ctx.io.stderr(`error: ${message}\n`);
  ctx.exit(exitCode);
}

/**
 * Parses the `KIND[/NAME] [NAME]` arguments every object command takes. On bad input it reports a usage error and
 * returns undefined: the caller must then return without doing anything.
 */
export function parseTargetOrFail(
  ctx: ClientContext,
  resource: string,
  nameArg: string | undefined,
): { kind: ResolvedKind; name: string } | undefined {
  try {
    const target = splitTarget(resource, nameArg);
    return { kind: resolveKind(target.kindText), name: target.name };
  } catch (err) {
    fail(ctx, ExitCode.USAGE, (err as Error).message);
    return undefined;
  }
}

/** A gateway connection with its credentials, and the account the command runs against. */
export interface OpenedGateway {
  connection: GatewayConnection;
  account: string;
}

/**
 * Resolves the command's credentials (client-credentials.ts) and its account (`--account`, else the gateway's only
 * one). Rejects with CliError (exit 2) for bad credentials or a missing account, or with the gateway's error; report
 * either with {@link describeClientError}. Call it once per command run (an exec credential plugin runs each time).
 */
export async function openGateway(ctx: ClientContext, options: ClientOptions): Promise<OpenedGateway> {
  const connection = await resolveGatewayConnection(options.gateway, options, ctx.env);
  return { connection, account: await resolveAccount(connection, options.account) };
}

/**
 * Submits one operation and reports it: with `--no-wait` prints the id; otherwise waits for the terminal record and
 * prints `render(record)` (success, exit 0) or the failure line (exit 1). `opened` is the command's gateway when it
 * already has one ({@link openGateway} runs otherwise). Gateway errors map through {@link describeClientError}.
 * Never throws.
 */
export async function runOperation(
  ctx: ClientContext,
  options: ClientOptions,
  spec: SubmitInit['spec'],
  render: (record: OperationRecord) => { stdout: string; stderr?: string } | string,
  opened?: OpenedGateway,
): Promise<void> {
  try {
    if (!options.wait && spec?.case !== undefined && READ_CASES.has(spec.case)) {
      fail(ctx, ExitCode.USAGE, `--no-wait does not apply to ${spec?.case}: a read is not stored, it is answered once it ended`);
      return;
    }
    const { connection, account } = opened ?? (await openGateway(ctx, options));
    const client = createOperationClient(connection);
    const request: SubmitInit = {
      account,
      id: options.id ?? '',
      timeout: options.timeout === undefined ? undefined : toProtoDuration(options.timeout),
      spec,
    };
    if (!options.wait) {
      const record = await client.submit(request);
      ctx.io.stdout(`${record.id}\n`);
      ctx.exit(ExitCode.OK);
      return;
    }
    const record = await client.submitAndWait(request);
    if (!succeeded(record)) {
      fail(ctx, ExitCode.FAILED, describeFailure(record));
      return;
    }
    const out = render(record);
    const { stdout, stderr } = typeof out === 'string' ? { stdout: out, stderr: '' } : out;
    if (stdout) ctx.io.stdout(stdout);
    if (stderr) ctx.io.stderr(stderr);
    ctx.exit(ExitCode.OK);
  } catch (err) {
    const { exitCode, message } = describeClientError(err, options.gateway);
    fail(ctx, exitCode, message);
  }
}
