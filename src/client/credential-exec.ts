/**
 * `--credential-exec`: runs a kubectl-style exec credential plugin (such as `outpost credential --token-file F`) and
 * takes the token of the client.authentication.k8s.io/v1 ExecCredential it prints. The command runs without a shell:
 * the value is split at whitespace, with no quoting, or — for arguments that hold spaces — written as a JSON array of
 * strings. A shell would make the value's meaning depend on quoting and expansion rules the user cannot see in
 * `--help`, and would run whatever else the string holds.
 */
import { spawn } from 'node:child_process';
import { CliError, ExitCode } from './errors.js';
import { EXEC_CREDENTIAL_API_VERSION } from './exec-credential.js';
import { checkToken } from './kube-token.js';

/** How long the plugin may run. */
const EXEC_TIMEOUT_MS = 60_000;

/** Most stdout/stderr bytes kept from the plugin. */
const MAX_OUTPUT_BYTES = 1024 * 1024;

/**
 * The argv of a `--credential-exec` value: a JSON array of strings when it starts with `[`, else its words split at
 * whitespace. Throws CliError (exit 2) for an empty value or a malformed array; `origin` names the value in messages.
 */
export function splitCommand(value: string, origin: string): string[] {
  const text = value.trim();
  if (text.startsWith('[')) {
    let argv: unknown;
    try {
      argv = JSON.parse(text);
    } catch (err) {
      throw new CliError(`${origin} starts with "[" but is not a JSON array (${(err as Error).message})`, ExitCode.USAGE);
    }
    if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string') || argv[0] === '') {
      throw new CliError(`${origin} must be a non-empty JSON array of strings, e.g. ["outpost","credential"]`, ExitCode.USAGE);
    }
    return argv as string[];
  }
  const argv = text.split(/\s+/).filter((w) => w !== '');
  if (argv.length === 0)
    throw new CliError(`${origin} is empty: expected a command, e.g. "outpost credential --token-file F"`, ExitCode.USAGE);
  return argv;
}

/** What {@link runCredentialExec} needs besides the command. */
export interface CredentialExecDeps {
  env: NodeJS.ProcessEnv;
  now?: () => Date;
}

/**
 * Runs `argv` as kubectl runs an exec plugin (`KUBERNETES_EXEC_INFO` set, stdin closed) and returns the token of the
 * ExecCredential on its stdout. Throws CliError (exit 2, nothing was sent) naming the command — never the token — when
 * it cannot start, exits non-zero (with the last line of its stderr), prints no ExecCredential, prints one without a
 * token, or one whose `status.expirationTimestamp` has passed.
 */
export async function runCredentialExec(argv: string[], deps: CredentialExecDeps): Promise<string> {
  const name = `the credential command "${argv.join(' ')}"`;
  const execInfo = JSON.stringify({ apiVersion: EXEC_CREDENTIAL_API_VERSION, kind: 'ExecCredential', spec: { interactive: false } });
  const { code, signal, stdout, stderr, error } = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
    error?: NodeJS.ErrnoException;
  }>((resolve) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let size = 0;
    const keep = (into: Buffer[]) => (chunk: Buffer) => {
      if ((size += chunk.length) <= MAX_OUTPUT_BYTES) into.push(chunk);
    };
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { ...deps.env, KUBERNETES_EXEC_INFO: execInfo },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: EXEC_TIMEOUT_MS,
    });
    child.stdout.on('data', keep(out));
    child.stderr.on('data', keep(err));
    const text = (b: Buffer[]) => Buffer.concat(b).toString('utf8');
    child.on('error', (e) => resolve({ code: null, signal: null, stdout: '', stderr: text(err), error: e }));
    child.on('close', (c, s) => resolve({ code: c, signal: s, stdout: text(out), stderr: text(err) }));
  });
  if (error) throw new CliError(`${name} could not run (${error.code ?? error.message})`, ExitCode.USAGE);
  if (code !== 0) {
    const last = stderr.trim().split('\n').at(-1)?.trim();
    const how = signal
      ? `was stopped by ${signal}${signal === 'SIGTERM' ? ` (it may have run past ${EXEC_TIMEOUT_MS / 1000}s)` : ''}`
      : `exited ${code}`;
    throw new CliError(`${name} ${how}${last ? `: ${last}` : ''}`, ExitCode.USAGE);
  }
  return tokenOfCredential(stdout, name, (deps.now ?? (() => new Date()))());
}

/** The checked token of the ExecCredential `stdout` holds; `name` names the command in errors. */
export function tokenOfCredential(stdout: string, name: string, now: Date): string {
  let credential: unknown;
  try {
    credential = JSON.parse(stdout);
  } catch {
    throw new CliError(`${name} did not print an ExecCredential (its output is not JSON)`, ExitCode.USAGE);
  }
  const object = typeof credential === 'object' && credential !== null ? (credential as Record<string, unknown>) : {};
  if (object.kind !== 'ExecCredential' || object.apiVersion !== EXEC_CREDENTIAL_API_VERSION) {
    throw new CliError(
      `${name} did not print an ExecCredential of apiVersion ${EXEC_CREDENTIAL_API_VERSION} (got kind ${JSON.stringify(object.kind ?? null)}, ` +
        `apiVersion ${JSON.stringify(object.apiVersion ?? null)})`,
      ExitCode.USAGE,
    );
  }
  const status = typeof object.status === 'object' && object.status !== null ? (object.status as Record<string, unknown>) : {};
  if (typeof status.token !== 'string' || status.token.trim() === '') {
    throw new CliError(`${name} printed an ExecCredential without status.token`, ExitCode.USAGE);
  }
  const expires = status.expirationTimestamp;
  if (expires !== undefined) {
    const at = typeof expires === 'string' ? Date.parse(expires) : Number.NaN;
    if (Number.isNaN(at)) throw new CliError(`${name} printed an unreadable status.expirationTimestamp`, ExitCode.USAGE);
    if (at <= now.getTime()) throw new CliError(`${name} printed a credential that expired at ${expires}`, ExitCode.USAGE);
  }
  return checkToken(status.token.trim(), `the token ${name} printed`);
}
