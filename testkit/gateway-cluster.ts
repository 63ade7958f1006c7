/**
 * A multi-process harness for gateway-replica tests: N `outpost gateway` processes sharing one fresh Postgres
 * database, an in-process sandbox Kubernetes API server, a round-robin balancer in front of the gateways' gRPC ports
 * (the Kubernetes Service agents dial), and `outpost agent` processes behind it. Every process can be killed -9,
 * stopped and continued, so tests exercise what in-process systems cannot: a replica that dies without closing
 * anything, or one frozen mid-flight while its lease runs out.
 *
 * Every gateway binds ephemeral ports (port 0) at each start and the harness reads them from the banner it prints: a
 * port picked free beforehand and released could be taken by another process before the child binds it
 * (EADDRINUSE on a loaded machine), all the more so across a restart. Clients find a gateway through
 * `gateway(name)` and agents through the balancer, which forwards to the current ports.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';
import { startBalancer, type Balancer } from './balancer.js';
import { agentConfig, gatewayConfig, writeYaml, type AgentAccount, type ConfigObject } from './cluster-config.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { processState, readLog, spawnOutpost, waitForProcess, type OutpostProcess } from './outpost-process.js';

/** Options of {@link startGatewayCluster}. */
export interface GatewayClusterOptions {
  /** Number of gateway processes, named `gw-1` … `gw-N` (also their replica ids). Default 3. */
  gateways?: number;
  /** Sandbox options, over `{ seed: 'demo' }`. */
  sandbox?: SandboxOptions;
  /**
   * Deep-merged into every gateway's YAML config (nested objects merge, arrays and scalars replace). Keys are not
   * checked here: the gateway process validates them, and a key it rejects makes the start fail with its log.
   */
  gatewayConfig?: ConfigObject;
  /** Log level of gateways and agents. Default `info`; agents need `info` or lower (their readiness is a log line). */
  logLevel?: string;
  /**
   * How long each gateway may take to answer `GET /health` with 200, and each agent to be welcomed. Default 120 s: a
   * bound on a hang, and a loaded machine starts processes (TypeScript through tsx) slowly.
   */
  startTimeoutMs?: number;
  /** Postgres server URL the cluster's database is created on (default OUTPOST_TEST_POSTGRES). */
  postgresServer?: string;
}

/** Options of {@link GatewayCluster.startAgent}. */
interface ClusterAgentOptions {
  /** The agent's one account (default `{ name: 'sandbox' }`, every kind, the sandbox's admin user). */
  account?: AgentAccount;
  /** Several accounts instead of `account`. */
  accounts?: AgentAccount[];
  /** Deep-merged into the agent's YAML config (see `agentConfig` in ./cluster-config.ts for the defaults). */
  agentConfig?: ConfigObject;
  /** Resolve once the agent logged 'welcomed by the gateway' (default), or as soon as it is spawned. */
  waitForWelcome?: boolean;
  /** host:port the agent dials instead of the balancer (a proxy in front of it, say). */
  grpcAddress?: string;
}

/** Where one gateway process listens: the ephemeral ports of its latest start (a restart binds new ones). */
interface ClusterGateway {
  /** Process name and replica id: `gw-1` … */
  readonly name: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** `http://127.0.0.1:<httpPort>`: Connect JSON and REST. */
  readonly httpUrl: string;
  /** `http://127.0.0.1:<grpcPort>`: gRPC over h2c (agents reach it through the balancer instead). */
  readonly grpcUrl: string;
}

/** Signals tests send to a gateway or agent process. */
type ClusterSignal = 'SIGKILL' | 'SIGTERM' | 'SIGSTOP' | 'SIGCONT';

/** A running cluster. Always `close()` it (in `after`/`finally`): it kills the children and drops the database. */
export interface GatewayCluster {
  /** Temp dir holding configs (`gw-1.yaml`), logs (`gw-1.log`, `<agent id>.log`) and the kubeconfig. */
  readonly dir: string;
  readonly databaseUrl: string;
  /** Sandbox kubeconfig file: contexts `sandbox` (admin, current) and `sandbox-restricted`. */
  readonly kubeconfig: string;
  /** The sandbox API server, running in the test process. */
  readonly sandbox: Sandbox;
  /** The balancer in front of every gateway's gRPC port; agents dial `balancer.address`. */
  readonly balancer: Balancer;
  /** `['gw-1', …]`. */
  readonly gatewayNames: readonly string[];
  /** Ports and URLs of a gateway's latest start (whether or not its process still runs). */
  gateway(name: string): ClusterGateway;
  /** Starts agent process `id` through the balancer; the id must be new and differ from the gateway names. */
  startAgent(id: string, options?: ClusterAgentOptions): Promise<void>;
  /**
   * Stops gateway `name` if it runs (SIGCONT, SIGTERM, SIGKILL after 10 s) and starts it again with the same config, on
   * new ephemeral ports (`gateway(name)` and the balancer follow).
   */
  restartGateway(name: string): Promise<void>;
  /** Stops agent `id` if it runs (like restartGateway) and starts it again with the same config; waits for the Welcome. */
  restartAgent(id: string): Promise<void>;
  /**
   * Sends `signal` to a running gateway or agent and waits for its effect: exit for SIGKILL and SIGTERM (SIGTERM to a
   * stopped process only queues it), stopped / running state in /proc for SIGSTOP / SIGCONT. Throws when not running.
   */
  kill(name: string, signal?: ClusterSignal): Promise<void>;
  /** Pid of the latest process started under `name` (also after it exited); undefined for unknown names. */
  pid(name: string): number | undefined;
  /** True while the process exists, also while SIGSTOPped. */
  isRunning(name: string): boolean;
  /** True between `kill(name, 'SIGSTOP')` and `kill(name, 'SIGCONT')` (or its death). */
  isStopped(name: string): boolean;
  /** Everything process `name` wrote to stdout and stderr, across restarts ('' when none yet). */
  logs(name: string): string;
  /** Runs a query on the cluster's database (`$1`-style params); one small pool kept until `close()`. */
  sql<T extends object = Record<string, any>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Kills every child (SIGCONT then SIGKILL), closes balancer and sandbox, drops the database, removes the temp dir
   * (kept and printed when OUTPOST_KEEP_TEST_DIR is set). Idempotent. */
  close(): Promise<void>;
}

/**
 * The ports of gateway `name` from what it printed once it listens, or undefined before: the banner `outpost gateway`
 * writes on stdout whatever the log level (`HTTP (Connect JSON, REST): URL`, `gRPC (agents, h2c): URL`).
 */
function listeningOf(name: string, log: string): ClusterGateway | undefined {
  const httpUrl = /HTTP \(Connect JSON, REST\):\s+(https?:\/\/\S+:\d+)\n/.exec(log)?.[1];
  const grpcUrl = /gRPC \(agents, h2c\):\s+(https?:\/\/\S+:\d+)\n/.exec(log)?.[1];
  if (httpUrl === undefined || grpcUrl === undefined) return undefined;
  return { name, httpPort: Number(new URL(httpUrl).port), grpcPort: Number(new URL(grpcUrl).port), httpUrl, grpcUrl };
}

interface Managed {
  kind: 'gateway' | 'agent';
  args: string[];
  logFile: string;
  proc?: OutpostProcess;
  stopped: boolean;
}

/**
 * Starts the cluster; needs Postgres (OUTPOST_TEST_POSTGRES, see ./databases.ts). Resolves once every gateway answers
 * `GET /health` with 200; on any failure it cleans up what it started and rethrows.
 *
 * Timing defaults (see ./cluster-config.ts): replicas heartbeat every 0.5 s and are dead after 2 s, agent streams
 * likewise; agents reconnect within 0.5 s. The sandbox runs in the test process: keep its event loop free (no long
 * synchronous work) or the agents' watches stall. Children are killed when the test process exits, but a test that
 * forgets `close()` leaks its database.
 */
export async function startGatewayCluster(options: GatewayClusterOptions = {}): Promise<GatewayCluster> {
  const count = options.gateways ?? 3;
  const logLevel = options.logLevel ?? 'info';
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-cluster-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const names = Array.from({ length: count }, (_, i) => `gw-${i + 1}`);
  const gateways = new Map<string, ClusterGateway>();
  const managed = new Map<string, Managed>();
  let database: TestDatabase | undefined;
  let sandbox: Sandbox | undefined;
  let balancer: Balancer | undefined;
  let client: postgres.Sql | undefined;
  let closing: Promise<void> | undefined;

  const get = (name: string): Managed => {
    const m = managed.get(name);
    if (!m) throw new Error(`no process named ${JSON.stringify(name)} in this cluster`);
    return m;
  };
  const running = (m: Managed) => m.proc?.running() === true;

  async function launch(name: string): Promise<void> {
    const m = get(name);
    m.stopped = false;
    const proc = spawnOutpost(m.args, m.logFile);
    m.proc = proc;
    if (m.kind === 'gateway') {
      // The gateway binds port 0: its ports are in the banner it prints once it listens.
      let bound: ClusterGateway | undefined;
      const listening = () => (bound = listeningOf(name, readLog(m.logFile, proc.logOffset))) !== undefined;
      await waitForProcess(proc, m.logFile, `gateway ${name} listening`, listening, timeoutMs);
      gateways.set(name, bound!);
      const url = `${bound!.httpUrl}/health`;
      const healthy = async () => (await fetch(url, { signal: AbortSignal.timeout(2000) })).status === 200;
      await waitForProcess(proc, m.logFile, `gateway ${name} health`, healthy, timeoutMs);
    }
  }

  async function waitForWelcome(id: string): Promise<void> {
    const m = get(id);
    const welcomed = () => readLog(m.logFile, m.proc!.logOffset).includes('welcomed by the gateway');
    try {
      await waitForProcess(m.proc!, m.logFile, `agent ${id} welcome`, welcomed, timeoutMs);
    } catch (err) {
      // The reason is often on the gateway side: add the last error lines of every gateway log.
      const gatewayErrors = names
        .map((name) => {
          const lines = readLog(get(name).logFile)
            .split('\n')
            .filter((l) => /"level":(50|60)/.test(l));
          return lines.length === 0 ? '' : `\n${name} (last of ${lines.length} errors): ${lines.at(-1)!.slice(0, 1500)}`;
        })
        .join('');
      (err as Error).message += `${gatewayErrors}\n(all logs in ${dir}; set OUTPOST_KEEP_TEST_DIR=1 to keep them)`;
      throw err;
    }
  }

  async function signal(name: string, sig: ClusterSignal): Promise<void> {
    const m = get(name);
    if (!running(m)) throw new Error(`${name} is not running`);
    const proc = m.proc!;
    proc.child.kill(sig);
    if (sig === 'SIGKILL') {
      await proc.exited();
    } else if (sig === 'SIGTERM') {
      if (m.stopped) return; // delivered on SIGCONT
      const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 30_000).unref());
      if ((await Promise.race([proc.exited(), timer])) === 'timeout') throw new Error(`${name} did not exit within 30 s of SIGTERM`);
    } else {
      const wantStopped = sig === 'SIGSTOP';
      const deadline = Date.now() + 2000;
      while (Date.now() < deadline && proc.running()) {
        const state = processState(proc.pid);
        if (state === undefined || (state === 'T') === wantStopped) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    m.stopped = sig === 'SIGSTOP' ? true : sig === 'SIGCONT' ? false : m.stopped;
  }

  async function stopForRestart(name: string): Promise<void> {
    const m = get(name);
    if (!running(m)) return;
    if (m.stopped) await signal(name, 'SIGCONT');
    m.proc!.child.kill('SIGTERM');
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000).unref());
    if ((await Promise.race([m.proc!.exited(), timer])) === 'timeout') await signal(name, 'SIGKILL');
  }

  async function close(): Promise<void> {
    const errors: unknown[] = [];
    const step = async (fn: () => Promise<unknown> | unknown) => {
      try {
        await fn();
      } catch (err) {
        errors.push(err);
      }
    };
    for (const m of managed.values()) {
      if (!running(m)) continue;
      await step(() => m.proc!.kill());
    }
    await step(() => balancer?.close());
    await step(() => client?.end({ timeout: 2 }));
    await step(() => sandbox?.close());
    await step(() => database?.drop());
    if (process.env.OUTPOST_KEEP_TEST_DIR) process.stderr.write(`gateway cluster: kept ${dir}\n`);
    else await step(() => rmSync(dir, { recursive: true, force: true }));
    if (errors.length > 0) throw new AggregateError(errors, `gateway cluster close: ${errors.map(String).join('; ')}`);
  }

  try {
    database = await createTestDatabase('postgres', options.postgresServer);
    sandbox = await startSandbox({ seed: 'demo', ...options.sandbox });
    await sandbox.writeKubeconfig(kubeconfig);
    for (const name of names) {
      const file = join(dir, `${name}.yaml`);
      writeYaml(file, gatewayConfig({ id: name, httpPort: 0, grpcPort: 0, databaseUrl: database!.url, logLevel }, options.gatewayConfig));
      managed.set(name, { kind: 'gateway', args: ['gateway', '--config', file], logFile: join(dir, `${name}.log`), stopped: false });
    }
    // The gRPC ports of the gateways running now (a stopped one included, as a Service without readiness probe
    // would): a dead gateway's old port may belong to another process by now.
    balancer = await startBalancer(() =>
      names.flatMap((n) => {
        const g = gateways.get(n);
        return g && running(get(n)) ? [g.grpcPort] : [];
      }),
    );
    await Promise.all(names.map(launch));
  } catch (err) {
    closing = close().catch(() => {});
    await closing;
    throw err;
  }

  const cluster: GatewayCluster = {
    dir,
    databaseUrl: database.url,
    kubeconfig,
    sandbox,
    balancer,
    gatewayNames: names,
    gateway(name) {
      const g = gateways.get(name);
      if (!g) throw new Error(`no gateway named ${JSON.stringify(name)} (have ${names.join(', ')})`);
      return g;
    },
    async startAgent(id, agentOptions = {}) {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) throw new Error(`agent id ${JSON.stringify(id)}: use letters, digits, ".", "_", "-"`);
      if (managed.has(id)) throw new Error(`${id} already exists in this cluster (restart an agent with restartAgent)`);
      const file = join(dir, `${id}.yaml`);
      const accounts = agentOptions.accounts ?? [agentOptions.account ?? {}];
      writeYaml(
        file,
        agentConfig({ id, grpc: agentOptions.grpcAddress ?? balancer!.address, kubeconfig, accounts, logLevel }, agentOptions.agentConfig),
      );
      managed.set(id, { kind: 'agent', args: ['agent', '--config', file], logFile: join(dir, `${id}.log`), stopped: false });
      await launch(id);
      if (agentOptions.waitForWelcome !== false) await waitForWelcome(id);
    },
    async restartGateway(name) {
      cluster.gateway(name);
      await stopForRestart(name);
      await launch(name);
    },
    async restartAgent(id) {
      if (get(id).kind !== 'agent') throw new Error(`${id} is not an agent`);
      await stopForRestart(id);
      await launch(id);
      await waitForWelcome(id);
    },
    kill: (name, sig = 'SIGKILL') => signal(name, sig),
    pid: (name) => managed.get(name)?.proc?.pid,
    isRunning: (name) => running(get(name)),
    isStopped: (name) => running(get(name)) && get(name).stopped,
    logs: (name) => readLog(get(name).logFile),
    async sql<T extends object>(text: string, params: unknown[] = []) {
      if (closing) throw new Error('the gateway cluster is closed');
      client ??= postgres(database!.url, { max: 2, onnotice: () => {} });
      return (await client.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as unknown as T[];
    },
    close() {
      closing ??= close();
      return closing;
    },
  };
  return cluster;
}
