/**
 * `outpost` child processes for multi-process tests: each writes stdout and stderr straight into a log file (the
 * child never blocks on a pipe the test stopped reading, and the file survives the process), and every child still
 * alive when the test process exits is killed, so none outlives the test.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually, StopWaiting } from './eventually.js';

const bin = fileURLToPath(new URL('../bin/outpost.js', import.meta.url));

/** Every child started here and not yet exited, for the exit hook. */
const alive = new Set<ChildProcess>();
let hooked = false;

function killAllNow(): void {
  for (const child of alive) {
    try {
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' handlers must be synchronous: signals are, waiting is not possible. A test process killed by a signal it
  // does not handle runs no handler; children share its process group, so a terminal's Ctrl-C still reaches them.
  process.on('exit', killAllNow);
}

/** One spawned `outpost` process. */
export interface OutpostProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** The log file's size when this process was spawned (where its output starts; the file is appended to). */
  readonly logOffset: number;
  /** True until the process exited (a SIGSTOPped process is still running). */
  running(): boolean;
  /** Resolves once the process exited (at once when it already has). */
  exited(): Promise<void>;
  /** SIGKILL (SIGCONT first, in case it is stopped) and wait for the exit; at once when it already exited. */
  kill(): Promise<void>;
}

/**
 * Spawns `node bin/outpost.js ARGS…` with stdout and stderr appended to `logFile`. `OUTPOST_GATEWAY_*`,
 * `OUTPOST_AGENT_*` and `OUTPOST_LOG_LEVEL` are removed from the inherited environment so only the config file
 * decides (pass `env` to set some on purpose). `nodeFlags` go to node before the script (a CPU profile, V8 settings);
 * `cwd` is the working directory (default: the test's).
 */
export function spawnOutpost(
  args: string[],
  logFile: string,
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
  cwd?: string,
): OutpostProcess {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^OUTPOST_(GATEWAY_|AGENT_|LOG_LEVEL$)/.test(key)));
  const logOffset = statSync(logFile, { throwIfNoEntry: false })?.size ?? 0;
  const fd = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [...nodeFlags, bin, ...args], { stdio: ['ignore', fd, fd], env: { ...inherited, ...env }, cwd });
  } finally {
    closeSync(fd); // the child holds its own copy
  }
  if (child.pid === undefined) throw new Error(`could not spawn outpost ${args.join(' ')}`);
  hookExit();
  alive.add(child);
  const exit = new Promise<void>((resolve) => {
    child.once('exit', () => {
      alive.delete(child);
      resolve();
    });
  });
  child.once('error', () => alive.delete(child));
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    pid: child.pid,
    logOffset,
    running,
    exited: () => exit,
    kill: async () => {
      if (!running()) return;
      child.kill('SIGCONT');
      child.kill('SIGKILL');
      await exit;
    },
  };
}

/** The log file from `offset` on ('' when it does not exist). */
export function readLog(logFile: string, offset = 0): string {
  try {
    return readFileSync(logFile).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

/**
 * Waits (./eventually.ts, every 50 ms) until `check` returns true; a `check` that throws counts as false. Rejects at
 * once when `proc` exits first, or after `timeoutMs`, in both cases with the tail of its log. `what` names the wait
 * in errors.
 */
export async function waitForProcess(
  proc: OutpostProcess,
  logFile: string,
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const tail = () => readLog(logFile, proc.logOffset).slice(-3000);
  const ready = async () => {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return true;
    if (!proc.running())
      throw new StopWaiting(`${what}: the process exited (${proc.child.exitCode ?? proc.child.signalCode}) first; log:\n${tail()}`);
    return false;
  };
  try {
    await eventually(what, ready, { timeoutMs, intervalMs: 50 });
  } catch (err) {
    if (!(err instanceof StopWaiting)) (err as Error).message += `; log:\n${tail()}`;
    throw err;
  }
}

/**
 * The scheduler state letter of a process from /proc (`T` stopped, `S` sleeping, `R` running, `Z` zombie), or
 * undefined when unknown (no /proc, or no such process).
 */
export function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return undefined;
  }
}

/**
 * Starts `outpost gateway` with `config` (written as JSON into `dir`, logging to `dir`/gateway.log) and waits for its
 * "gateway listening" log line (so `config` must not set logLevel above info); resolves with the process and the URLs it
 * bound (set httpPort/grpcPort 0). The caller kills the process.
 */
export async function startGatewayProcess(
  dir: string,
  config: Record<string, unknown>,
): Promise<{ gateway: OutpostProcess; log: string; httpUrl: string; grpcUrl: string }> {
  const file = join(dir, 'gateway.json');
  const log = join(dir, 'gateway.log');
  writeFileSync(file, JSON.stringify(config));
  const gateway = spawnOutpost(['gateway', '--config', file], log);
  let urls: { httpUrl: string; grpcUrl: string } | undefined;
  await waitForProcess(
    gateway,
    log,
    'gateway listening',
    () => {
      const line = readLog(log, gateway.logOffset)
        .split('\n')
        .find((l) => l.includes('"gateway listening"'));
      if (line) urls = JSON.parse(line) as { httpUrl: string; grpcUrl: string };
      return urls !== undefined;
    },
    60_000,
  );
  return { gateway, log, httpUrl: urls!.httpUrl, grpcUrl: urls!.grpcUrl };
}
