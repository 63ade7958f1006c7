/**
 * Runs Outpost programs as child processes for benchmarks (each with its own event loop and RSS, as in production)
 * and samples their memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { readRss } from '../testkit/proc-stats.js';

export { readCpuSeconds, readRss } from '../testkit/proc-stats.js';

const bin = fileURLToPath(new URL('../bin/outpost.js', import.meta.url));

/** Log level of gateway and agent children: warn, or OUTPOST_BENCH_LOG_LEVEL (debug to investigate a run). */
const logLevel = () => process.env.OUTPOST_BENCH_LOG_LEVEL ?? 'warn';

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
export async function startOutpost(
  args: string[],
  ready: RegExp | null,
  timeoutMs = 120_000,
  env: Record<string, string> = {},
  nodeFlags: string[] = [],
): Promise<Child> {
  // OUTPOST_BENCH_PROFILE=DIR writes a V8 CPU profile of every child into DIR (open it in Chrome DevTools).
  const profile = process.env.OUTPOST_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.OUTPOST_BENCH_PROFILE}`] : [];
  // OUTPOST_BENCH_NODE_FLAGS: extra flags for node in every outpost child (V8 heap settings, for experiments).
  const flags = (process.env.OUTPOST_BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...flags, ...nodeFlags, ...profile, bin, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, OUTPOST_LOG_LEVEL: process.env.OUTPOST_LOG_LEVEL ?? 'warn', ...env },
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

/** Medians of `samples` readings 200 ms apart of a process's RSS and, when given, of `heap()` (bytes; heap NaN without it). */
export async function readMemory(
  pid: number | undefined,
  samples: number,
  heap?: () => Promise<number>,
): Promise<{ rss: number; heap: number }> {
  const rss: number[] = [];
  const heaps: number[] = [];
  for (let i = 0; i < samples; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    rss.push(readRss(pid));
    if (heap) heaps.push(await heap());
  }
  const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!);
  return { rss: median(rss), heap: median(heaps) };
}

/** The value of one unlabelled Prometheus sample (`name value`) in the text at `url`; NaN when absent. */
export async function scrapeMetric(url: string, name: string): Promise<number> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const text = await res.text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : NaN;
}

/**
 * A TCP port free right now on 127.0.0.1. Another process may take it before the child binds it: prefer port 0 and
 * reading the bound port from the child; {@link startAgent} retries with new ports when it happens.
 */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A gateway child (insecure, on its own ports). */
export interface BenchGateway {
  child: Child;
  httpPort: number;
  grpcPort: number;
  httpUrl: string;
}

/**
 * Starts `outpost gateway --insecure` on `databaseUrl` and ephemeral ports (read from the banner it prints); `env`
 * overrides config keys (OUTPOST_GATEWAY_*), `nodeFlags` are given to node (V8 settings such as --optimize-for-size).
 */
export async function startGateway(databaseUrl: string, env: Record<string, string> = {}, nodeFlags: string[] = []): Promise<BenchGateway> {
  const child = await startOutpost(
    ['gateway', '--http-port', '0', '--grpc-port', '0', '--database', databaseUrl, '--log-level', logLevel(), '--insecure'],
    /gRPC \(agents, h2c\):\s+\S+:\d+\n/,
    120_000,
    env,
    nodeFlags,
  );
  const http = /HTTP \(Connect JSON, REST\):\s+\S+:(\d+)/.exec(child.output());
  const grpc = /gRPC \(agents, h2c\):\s+\S+:(\d+)/.exec(child.output());
  if (!http || !grpc) throw new Error(`no ports in the gateway's banner: ${child.output().slice(-2000)}`);
  const [httpPort, grpcPort] = [Number(http[1]), Number(grpc[1])];
  return { child, httpPort, grpcPort, httpUrl: `http://127.0.0.1:${httpPort}` };
}

/** One account of a bench agent: its name, kubeconfig and extra YAML lines of the account entry (kinds…). */
export interface BenchAccount {
  name: string;
  kubeconfig: string;
  yaml?: string[];
}

/** How a bench agent's stream reaches the gateway: gRPC on its gRPC port, or WebSocket on its HTTP port. */
export type BenchTransport = 'grpc' | 'websocket';

/** The ports of a gateway an agent dials, and the transport it dials it with (the agent's default unless given). */
export interface AgentDial {
  grpcPort: number;
  /** The gateway's HTTP port: needed with `transport: 'websocket'`. */
  httpPort?: number;
  transport?: BenchTransport;
}

/** The `clouddriver:` lines of an agent config dialling `dial`. */
function clouddriverYaml(dial: AgentDial): string[] {
  const { transport } = dial;
  if (transport === 'websocket' && dial.httpPort === undefined) throw new Error('the WebSocket transport needs the gateway HTTP port');
  return [
    'clouddriver:',
    `  grpc: 127.0.0.1:${dial.grpcPort}`,
    '  insecure: true',
    ...(transport ? [`  transport: ${transport}`] : []),
    ...(transport === 'websocket' ? [`  websocket: 127.0.0.1:${dial.httpPort}`] : []),
  ];
}

/**
 * The transports of the agent streams the gateway at `httpUrl` holds (GET /armory/agents), so a scenario can prove
 * its agent used the transport it was asked for.
 */
export async function streamTransports(httpUrl: string): Promise<string[]> {
  const res = await fetch(`${httpUrl}/armory/agents`);
  if (!res.ok) throw new Error(`GET ${httpUrl}/armory/agents: HTTP ${res.status}`);
  return ((await res.json()) as { transport: string }[]).map((a) => a.transport);
}

/** An agent child with its admin and metrics ports. */
export interface BenchAgent {
  child: Child;
  adminUrl: string;
  metricsUrl: string;
  /** performance.now() just before the process was spawned. */
  startedAt: number;
}

/**
 * Writes an agent config for `accounts` into `dir` and starts `outpost agent` on it (admin and metrics on free ports);
 * resolves once both ports answer. The ports were free when picked, not reserved: should another process take one
 * first, the agent exits with EADDRINUSE and is started again on new ones.
 */
export async function startAgent(opts: AgentDial & { dir: string; agentId: string; accounts: BenchAccount[] }): Promise<BenchAgent> {
  for (let attempt = 1; ; attempt++) {
    const agent = await spawnAgent(opts);
    if (await answers(agent.child, [`${agent.adminUrl}/livez`, agent.metricsUrl])) return agent;
    if (attempt >= 5 || !/EADDRINUSE/.test(agent.child.output()))
      throw new Error(`agent ${opts.agentId} exited during start-up: ${agent.child.output().slice(-3000)}`);
  }
}

/** True once every URL answers (whatever the status); false when the child exits first. Throws after 120 s. */
async function answers(child: Child, urls: string[]): Promise<boolean> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.process.exitCode !== null || child.process.signalCode !== null) return false;
    const answered = await Promise.all(
      urls.map((url) =>
        fetch(url, { signal: AbortSignal.timeout(5000) }).then(
          () => true,
          () => false,
        ),
      ),
    );
    if (answered.every(Boolean)) return true;
    if (Date.now() > deadline) throw new Error(`no answer from ${urls.join(', ')} within 120 s: ${child.output().slice(-3000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function spawnAgent(opts: AgentDial & { dir: string; agentId: string; accounts: BenchAccount[] }): Promise<BenchAgent> {
  const [adminPort, metricsPort] = [await freePort(), await freePort()];
  const config = join(opts.dir, `${opts.agentId}.yaml`);
  writeFileSync(
    config,
    [
      ...clouddriverYaml(opts),
      'agent:',
      `  id: ${opts.agentId}`,
      'server:',
      `  port: ${adminPort}`,
      'prometheus:',
      `  port: ${metricsPort}`,
      'kubernetes:',
      '  accounts:',
      ...opts.accounts.flatMap((a) => [`    - name: ${a.name}`, `      kubeconfigFile: ${a.kubeconfig}`, ...(a.yaml ?? [])]),
      '',
    ].join('\n'),
  );
  const startedAt = performance.now();
  const child = await startOutpost(['agent', '--config', config, '--log-level', logLevel()], null);
  return { child, adminUrl: `http://127.0.0.1:${adminPort}`, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, startedAt };
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
 * config written into `dir`), streaming over `transport` (the agent's default unless given). Both are pushed onto `children` as soon
 * as they start, so the caller stops them.
 */
export async function startGatewayAndAgent(opts: {
  dir: string;
  kubeconfig: string;
  databaseUrl: string;
  children: Child[];
  agentId?: string;
  accountYaml?: string[];
  transport?: BenchTransport;
}): Promise<GatewayAndAgent> {
  const gateway = await startGateway(opts.databaseUrl);
  opts.children.push(gateway.child);
  const agent = await startAgent({
    dir: opts.dir,
    grpcPort: gateway.grpcPort,
    httpPort: gateway.httpPort,
    transport: opts.transport,
    agentId: opts.agentId ?? 'bench-agent',
    accounts: [{ name: 'bench', kubeconfig: opts.kubeconfig, yaml: opts.accountYaml ?? ['      kinds: [ConfigMap]'] }],
  });
  opts.children.push(agent.child);
  return { gateway: gateway.child, agent: agent.child, httpUrl: gateway.httpUrl, agentStartedAt: agent.startedAt };
}

/** A child running a bench TypeScript program that reports JSON lines on stdout (`{"event": …}`). */
export interface JsonChild {
  readonly process: ChildProcess;
  /** Every JSON line received so far. */
  readonly events: Record<string, unknown>[];
  /** Resolves with the first event (seen so far or later) matching `event`; rejects when the child exits first or on timeout. */
  waitFor(event: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/** Starts `node --import tsx FILE ARGS…` (FILE relative to bench/), parsing its JSON lines. */
export function startJsonChild(file: string, args: string[], env: Record<string, string> = {}): JsonChild {
  const script = fileURLToPath(new URL(file, import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const events: Record<string, unknown>[] = [];
  let partial = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        stderr = `${stderr + line}\n`.slice(-10_000);
      }
    }
    for (const l of listeners) l();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-10_000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    events,
    waitFor: (event, timeoutMs = 600_000) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = events.find((e) => e.event === event);
          const failed = events.find((e) => e.event === 'error');
          if (found || failed || child.exitCode !== null) {
            listeners.delete(check);
            clearTimeout(timer);
            if (found) resolve(found);
            else
              reject(
                new Error(
                  `${file} ${failed ? `failed: ${String(failed.error)}` : `exited with ${child.exitCode}`} before "${event}": ${stderr.slice(-2000)}`,
                ),
              );
          }
        };
        const timer = setTimeout(() => {
          listeners.delete(check);
          reject(new Error(`${file}: no "${event}" within ${timeoutMs / 1000} s: ${stderr.slice(-2000)}`));
        }, timeoutMs);
        listeners.add(check);
        void exited.then(check);
        check();
      }),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * Starts the agent swarm (bench/swarm/agent-swarm.ts): `agents` simulated agents named `PREFIX-N`, dialling `grpc` (a
 * gateway's gRPC URL, or several comma-separated: agent K dials the K-th modulo their count), `concurrency` at a time.
 */
export function startSwarm(grpc: string, prefix: string, agents: number, concurrency: number): JsonChild {
  return startJsonChild('./swarm/agent-swarm.ts', [
    '--grpc',
    grpc,
    '--agents',
    String(agents),
    '--prefix',
    prefix,
    '--concurrency',
    String(concurrency),
  ]);
}
