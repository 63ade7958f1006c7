/**
 * Runs Outpost programs as child processes for benchmarks (each with its own event loop and RSS, as in production)
 * and samples their memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../bin/outpost.js', import.meta.url));

/** A child `outpost` process with its collected output. */
export interface Child {
  readonly process: ChildProcess;
  output(): string;
  /** Peak resident set size seen by {@link Child.sampleRss}, in bytes. */
  peakRss(): number;
  sampleRss(): void;
  stop(): Promise<void>;
}

/**
 * Starts `outpost ARGS…` and resolves once its output matches `ready` (or rejects on exit/timeout); with `ready`
 * null it resolves as soon as the process is spawned.
 */
export async function startOutpost(args: string[], ready: RegExp | null, timeoutMs = 120_000): Promise<Child> {
  // OUTPOST_BENCH_PROFILE=DIR writes a V8 CPU profile of every child into DIR (open it in Chrome DevTools).
  const profile = process.env.OUTPOST_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.OUTPOST_BENCH_PROFILE}`] : [];
  const child = spawn(process.execPath, [...profile, bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OUTPOST_LOG_LEVEL: process.env.OUTPOST_LOG_LEVEL ?? 'warn' },
  });
  let out = '';
  let peak = 0;
  const handle: Child = {
    process: child,
    output: () => out,
    peakRss: () => peak,
    sampleRss: () => {
      peak = Math.max(peak, readRss(child.pid));
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
  child.stdout!.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-100_000)));
  child.stderr!.on('data', (chunk: Buffer) => (out = (out + chunk.toString()).slice(-100_000)));
  if (ready === null) return handle;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${args[0]}: ${out.slice(-2000)}`)), timeoutMs);
    const onData = () => {
      if (ready.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code}: ${out.slice(-2000)}`));
    });
  });
  return handle;
}

/** Resident set size of a process in bytes (Linux /proc), 0 when unknown. */
export function readRss(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** A TCP port free right now on 127.0.0.1 (for child processes that need a fixed port). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A gateway child and an agent child streaming one account (`bench`) to it. */
export interface GatewayAndAgent {
  gateway: Child;
  agent: Child;
  httpUrl: string;
  /** performance.now() just before the agent process was spawned. */
  agentStartedAt: number;
}

/**
 * Starts `outpost gateway` on `databaseUrl` and an `outpost agent` for account `bench` reading `kubeconfig` (its
 * config written into `dir`). Both are pushed onto `children` as soon as they start, so the caller stops them.
 */
export async function startGatewayAndAgent(opts: {
  dir: string;
  kubeconfig: string;
  databaseUrl: string;
  children: Child[];
  agentId?: string;
  accountYaml?: string[];
}): Promise<GatewayAndAgent> {
  const [httpPort, grpcPort, adminPort] = [await freePort(), await freePort(), await freePort()];
  const gateway = await startOutpost(
    ['gateway', '--http-port', String(httpPort), '--grpc-port', String(grpcPort), '--database', opts.databaseUrl, '--log-level', 'warn', '--insecure'],
    /gRPC/,
  );
  opts.children.push(gateway);
  const config = join(opts.dir, 'agent.yaml');
  writeFileSync(
    config,
    [
      'clouddriver:',
      `  grpc: 127.0.0.1:${grpcPort}`,
      '  insecure: true',
      'agent:',
      `  id: ${opts.agentId ?? 'bench-agent'}`,
      'server:',
      `  port: ${adminPort}`,
      'kubernetes:',
      '  accounts:',
      '    - name: bench',
      `      kubeconfigFile: ${opts.kubeconfig}`,
      ...(opts.accountYaml ?? ['      kinds: [ConfigMap]']),
      '',
    ].join('\n'),
  );
  const agentStartedAt = performance.now();
  const agent = await startOutpost(['agent', '--config', config, '--log-level', 'warn'], null);
  opts.children.push(agent);
  return { gateway, agent, httpUrl: `http://127.0.0.1:${httpPort}`, agentStartedAt };
}
