/**
 * What the nginx and HAProxy harnesses share: a listening socket bound here on 127.0.0.1 (port 0 the first time, the
 * same port again on a restart) and handed to the proxy as its fd 3, so the proxy never picks a port itself and no
 * two tests can race for one; the proxy process with its output kept for error messages; and a stop that waits for
 * every process of it to exit. Every proxy still running when the test process exits is killed. Proxies stay in the
 * test's process group, so a Ctrl-C in the terminal (which runs no exit hook) stops them too.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventually, StopWaiting } from './eventually.js';

/** How long a stopping proxy gets before it and its children are killed; only bounds a hang. */
const STOP_TIMEOUT_MS = 30_000;

/** How long a restart retries binding its port while something else holds it; only bounds a hang. */
const REBIND_TIMEOUT_MS = 30_000;

/** Every proxy started here and not yet exited, for the exit hook. */
const alive = new Set<ChildProcess>();
let hooked = false;

/** The children of a live process (nginx's workers), from /proc; none when it cannot be read. */
function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/**
 * SIGKILLs a proxy that has not exited, and its children first: read while it is still alive, they are its own (a
 * worker outliving its master would keep the port).
 */
function killNow(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  for (const pid of [...childrenOf(child.pid), child.pid]) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

function hookExit(): void {
  if (hooked) return;
  hooked = true;
  // 'exit' handlers run synchronously: signal, never wait.
  process.on('exit', () => {
    for (const child of alive) killNow(child);
  });
}

/** A listening TCP socket bound here, to be inherited by a proxy. */
export interface BoundSocket {
  readonly port: number;
  /** The socket's file descriptor in this process (valid until {@link BoundSocket.close}). */
  readonly fd: number;
  /** Closes it here (the proxy keeps its own copy). */
  close(): Promise<void>;
}

/** Binds a listening socket on 127.0.0.1 and `port` (0: an ephemeral port). */
export async function bindSocket(port = 0): Promise<BoundSocket> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port, exclusive: true }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const fd = (server as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) {
    server.close();
    throw new Error('bindSocket: the listening socket has no file descriptor (not a Unix platform?)');
  }
  return { port: (server.address() as net.AddressInfo).port, fd, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/**
 * Binds `port` again after the proxy that held it exited, retrying while it is in use (another process may have taken
 * it in between; then this fails after a bounded wait rather than moving the proxy to another port).
 */
function rebindSocket(port: number): Promise<BoundSocket> {
  return eventually(`bind 127.0.0.1:${port} again`, () => bindSocket(port), { timeoutMs: REBIND_TIMEOUT_MS, intervalMs: 100 });
}

/** Checks a proxy configuration by running `command args…` with the socket as fd 3; throws with its output if it fails. */
function checkConfig(command: string, args: string[], socket: BoundSocket, env: Record<string, string> = {}): void {
  const result = spawnSync(command, args, {
    stdio: ['ignore', 'pipe', 'pipe', socket.fd],
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')}: exit ${result.status ?? result.signal ?? result.error?.message}\n${result.stdout}${result.stderr}`,
    );
}

/** A running proxy process. */
interface ProxyProcess {
  readonly child: ChildProcess;
  /** True until the process exited. */
  running(): boolean;
  /** The last 16 KB of its stdout and stderr. */
  output(): string;
  /**
   * SIGTERM, then waits until it exited (nginx's master exits after its workers); SIGKILLs it and its children if it
   * has not exited after 30 s.
   */
  stop(): Promise<void>;
}

/**
 * Spawns `command args…` with `socket` as its fd 3, then closes the socket here, so only the proxy accepts on it.
 * `env` is added to this process's environment.
 */
async function spawnProxy(command: string, args: string[], socket: BoundSocket, env: Record<string, string> = {}): Promise<ProxyProcess> {
  let out = '';
  const keep = (chunk: Buffer) => {
    out = (out + chunk.toString('utf8')).slice(-16_384);
  };
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe', socket.fd], env: { ...process.env, ...env } });
  const failed = new Promise<Error>((resolve) => child.once('error', resolve));
  await socket.close();
  if (child.pid === undefined) throw new Error(`could not start ${command}: ${(await failed).message}`);
  hookExit();
  alive.add(child);
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const running = () => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      alive.delete(child);
      resolve();
    });
  });
  return {
    child,
    running,
    output: () => out,
    stop: async () => {
      if (running()) child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(STOP_TIMEOUT_MS, false, { ref: false })]);
      if (!stopped) {
        killNow(child);
        await exited;
      }
    },
  };
}

/** How {@link runInheritedProxy} starts one proxy program and knows it is ready. */
export interface InheritedProxySpec {
  /** `nginx`, `haproxy`: in messages. */
  name: string;
  bin: string;
  args: string[];
  /** The arguments that only check the configuration (`-t -q …`, `-c -q …`), run before each start. */
  checkArgs: string[];
  env?: Record<string, string>;
  /** Its temporary directory, removed at stop (and when the first start fails). */
  dir: string;
  /** Removes what a previous start left (a pid file, a stats socket) before each start. */
  beforeStart(): void;
  /** What readiness means, for a timeout's message. */
  readyWhat: string;
  /** True once the started process is ready to accept. */
  ready(proc: ProxyProcess): boolean;
}

/** A proxy started by {@link runInheritedProxy}. */
export interface InheritedProxy {
  readonly port: number;
  output(): string;
  /** Stops it and starts it again on the same port (rebinding it, retried while taken). */
  restart(): Promise<void>;
  /** Stops it, waits for its processes, removes its directory. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Runs a proxy program on the listening `socket` (its fd 3): checks the configuration, spawns it, waits until
 * `spec.ready`; a first start that fails stops what it started and removes the directory.
 */
export async function runInheritedProxy(socket: BoundSocket, spec: InheritedProxySpec): Promise<InheritedProxy> {
  const port = socket.port;
  let current = socket;
  let proc: ProxyProcess | undefined;
  const launch = async () => {
    spec.beforeStart();
    checkConfig(spec.bin, [...spec.checkArgs, ...spec.args], current, spec.env);
    const started = await spawnProxy(spec.bin, spec.args, current, spec.env);
    proc = started;
    await eventually(spec.readyWhat, () => {
      if (!started.running())
        throw new StopWaiting(`${spec.name} exited (${started.child.exitCode ?? started.child.signalCode}):\n${started.output()}`);
      return spec.ready(started);
    });
  };
  try {
    await launch();
  } catch (error) {
    await proc?.stop();
    await current.close();
    rmSync(spec.dir, { recursive: true, force: true });
    throw error;
  }
  let stopped = false;
  return {
    port,
    output: () => proc?.output() ?? '',
    restart: async () => {
      if (stopped) throw new Error(`${spec.name}: restart after stop`);
      await proc?.stop();
      current = await rebindSocket(port);
      try {
        await launch();
      } catch (error) {
        await current.close();
        throw error;
      }
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await proc?.stop();
      rmSync(spec.dir, { recursive: true, force: true });
    },
  };
}
