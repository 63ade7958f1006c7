/**
 * Several gateway replicas for the forwarding and failover benchmarks: `outpost gateway` children sharing one fresh
 * Postgres database, each with its own YAML config and log file in a temp dir (kept, and its path printed, when a
 * scenario fails), plus `outpost agent` children and a few helpers to read the shared state. Every child is killed
 * by {@link ReplicaSet.close}, and by an exit hook if the bench runner dies first.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { stringify } from 'yaml';
import { startOutpost, type Child } from './processes.js';
import { deepMerge, type ConfigObject } from '../testkit/cluster-config.js';
import { createTestDatabase, type TestDatabase } from '../testkit/databases.js';
import { spawnOutpost, type OutpostProcess } from '../testkit/outpost-process.js';

export type { ConfigObject };

/** A V8 CPU profile of every child into OUTPOST_BENCH_PROFILE when set (open it in Chrome DevTools). */
const profileFlags = () => (process.env.OUTPOST_BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.OUTPOST_BENCH_PROFILE}`] : []);

/** An `outpost` child of the set, writing into its log file (only its config decides, no OUTPOST_* of the runner). */
const spawnLogged = (args: string[], logFile: string): OutpostProcess => spawnOutpost(args, logFile, {}, profileFlags());

/**
 * Where one gateway replica listens (the same ports across restarts). Its first start binds ephemeral ports (port 0:
 * a port picked free and released could be taken before the child binds it); a restart binds the same ones again.
 */
interface ReplicaInfo {
  readonly name: string;
  readonly httpPort: number;
  readonly grpcPort: number;
  /** `http://127.0.0.1:<httpPort>`: Connect and REST. */
  readonly httpUrl: string;
  readonly logFile: string;
}

/** Options of {@link startReplicaSet}. */
export interface ReplicaSetOptions {
  postgresUrl: string;
  /** Replica ids, e.g. `['gw-1', 'gw-2']`. */
  gateways: string[];
  /** Deep-merged over the base gateway config (id, 127.0.0.1, ports, database, insecure, log level). */
  gatewayConfig: ConfigObject;
  /** Gateway and agent log level (the logs are only read by people). */
  logLevel: string;
  /** Temp dir name prefix. */
  prefix: string;
  /** Extra `outpost sandbox` arguments (`--tls`, so kubectl sends its token). */
  sandboxArgs?: string[];
}

/** A running set of replicas with a sandbox. Always `close()` it. */
export interface ReplicaSet {
  readonly dir: string;
  readonly kubeconfig: string;
  readonly databaseUrl: string;
  replica(name: string): ReplicaInfo;
  /** Starts (or restarts after a kill) gateway `name`; resolves once `GET /health` answers 200. */
  startGateway(name: string): Promise<void>;
  /** kill -9 of gateway `name`; resolves once it exited. */
  killGateway(name: string): Promise<void>;
  isRunning(name: string): boolean;
  /** Starts agent `id` for account `account` (namespace demo, ConfigMaps) dialing `grpc`; `extra` merged over its config. */
  startAgent(id: string, account: string, grpc: string, extra?: ConfigObject): void;
  /** Query on the shared database. */
  sql<T extends object = Record<string, unknown>>(text: string, params?: unknown[]): Promise<T[]>;
  /** Throws (with the log path) when a child that should run has exited. */
  checkAlive(): void;
  /**
   * Kills every child, drops the database; removes the temp dir unless `keepLogs` (or OUTPOST_BENCH_KEEP_LOGS is set),
   * in which case its path is printed.
   * Never throws (errors are printed).
   */
  close(keepLogs: boolean): Promise<void>;
}

/** The size of a log file (0 when it does not exist yet). */
function logSize(file: string): number {
  try {
    return readFileSync(file).length;
  } catch {
    return 0;
  }
}

/** A log file from byte `offset` on ('' when none). */
function logSince(file: string, offset: number): string {
  try {
    return readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    return '';
  }
}

/** The ports in the banner `outpost gateway` prints on stdout once it listens (whatever its log level). */
function bannerPorts(output: string): { httpPort: number; grpcPort: number } | undefined {
  const http = /HTTP \(Connect JSON, REST\):\s+https?:\/\/[^\s:]+:(\d+)/.exec(output);
  const grpc = /gRPC \(agents, h2c\):\s+https?:\/\/[^\s:]+:(\d+)/.exec(output);
  return http && grpc ? { httpPort: Number(http[1]), grpcPort: Number(grpc[1]) } : undefined;
}

/** The last lines of a log file ('' when none). */
function logTail(file: string, chars = 3000): string {
  try {
    return readFileSync(file, 'utf8').slice(-chars);
  } catch {
    return '';
  }
}

/**
 * Creates the database and temp dir, starts the sandbox (`outpost sandbox --seed demo`) and every gateway. On failure
 * it cleans up what it started (keeping the logs) and rethrows.
 */
export async function startReplicaSet(options: ReplicaSetOptions): Promise<ReplicaSet> {
  const dir = mkdtempSync(join(tmpdir(), options.prefix));
  const kubeconfig = join(dir, 'kubeconfig');
  type Replica = { -readonly [K in keyof ReplicaInfo]: ReplicaInfo[K] } & {
    configFile: string;
    config: ConfigObject;
    proc?: OutpostProcess;
  };
  const replicas = new Map<string, Replica>();
  const agents: { id: string; logFile: string; proc: OutpostProcess }[] = [];
  let database: TestDatabase | undefined;
  let sandbox: Child | undefined;
  let client: postgres.Sql | undefined;
  let closed = false;

  const get = (name: string) => {
    const r = replicas.get(name);
    if (!r) throw new Error(`no gateway named ${name}`);
    return r;
  };

  const set: ReplicaSet = {
    dir,
    kubeconfig,
    get databaseUrl() {
      return database!.url;
    },
    replica: (name) => get(name),
    async startGateway(name) {
      const r = get(name);
      if (r.proc?.running()) throw new Error(`${name} is already running`);
      // A bound on a hang: a loaded machine starts processes slowly.
      const deadline = Date.now() + 120_000;
      let offset = logSize(r.logFile);
      let proc = spawnLogged(['gateway', '--config', r.configFile], r.logFile);
      r.proc = proc;
      for (;;) {
        if (r.httpPort === 0) {
          // The first start: the ports it bound are in its banner; restarts bind them again.
          const banner = bannerPorts(logSince(r.logFile, offset));
          if (banner) {
            Object.assign(r, banner, { httpUrl: `http://127.0.0.1:${banner.httpPort}` });
            writeFileSync(r.configFile, stringify({ ...r.config, ...banner }));
          }
        }
        const status =
          r.httpPort === 0
            ? 0
            : await fetch(`${r.httpUrl}/health`, { signal: AbortSignal.timeout(2000) }).then(
                (res) => res.status,
                () => 0,
              );
        if (status === 200) return;
        if (!proc.running()) {
          // A restart binds the ports its clients know: one still held by another socket (a connection that took it
          // as its local port while the replica was down) is retried until it is let go, bounded by the deadline.
          if (/EADDRINUSE/.test(logSince(r.logFile, offset)) && r.httpPort !== 0 && Date.now() < deadline) {
            await sleep(500);
            offset = logSize(r.logFile);
            proc = spawnLogged(['gateway', '--config', r.configFile], r.logFile);
            r.proc = proc;
            continue;
          }
          throw new Error(`gateway ${name} exited during start-up; log ${r.logFile}:\n${logTail(r.logFile)}`);
        }
        if (Date.now() > deadline) throw new Error(`gateway ${name} not healthy within 120 s; log ${r.logFile}:\n${logTail(r.logFile)}`);
        await sleep(50);
      }
    },
    async killGateway(name) {
      const proc = get(name).proc;
      if (!proc?.running()) throw new Error(`${name} is not running`);
      await proc.kill();
    },
    isRunning: (name) => get(name).proc?.running() === true,
    startAgent(id, account, grpc, extra) {
      const configFile = join(dir, `${id}.yaml`);
      const config = deepMerge(
        {
          clouddriver: { grpc, insecure: true },
          agent: { id },
          server: { port: 0 },
          logging: { level: options.logLevel },
          kubernetes: { accounts: [{ name: account, kubeconfigFile: kubeconfig, namespaces: ['demo'], kinds: ['ConfigMap'] }] },
        },
        extra,
      );
      writeFileSync(configFile, stringify(config));
      const logFile = join(dir, `${id}.log`);
      agents.push({ id, logFile, proc: spawnLogged(['agent', '--config', configFile], logFile) });
    },
    async sql<T extends object>(text: string, params: unknown[] = []) {
      client ??= postgres(database!.url, { max: 2, onnotice: () => {} });
      return (await client.unsafe(text, params as postgres.ParameterOrJSON<never>[])) as unknown as T[];
    },
    checkAlive() {
      for (const a of agents) {
        if (!a.proc.running()) throw new Error(`agent ${a.id} exited; log ${a.logFile}:\n${logTail(a.logFile)}`);
      }
      if (sandbox && sandbox.process.exitCode !== null) throw new Error(`the sandbox exited: ${sandbox.output().slice(-2000)}`);
    },
    async close(keepLogs) {
      if (closed) return;
      closed = true;
      const step = async (what: string, fn: () => Promise<unknown> | unknown) => {
        try {
          await fn();
        } catch (err) {
          console.error(`bench: cleanup (${what}) failed: ${(err as Error).message}`);
        }
      };
      for (const a of agents) await step(`agent ${a.id}`, () => a.proc.kill());
      for (const r of replicas.values()) await step(`gateway ${r.name}`, () => r.proc?.kill());
      await step('sandbox', () => sandbox?.stop());
      await step('sql client', () => client?.end({ timeout: 2 }));
      await step('database', () => database?.drop());
      if (keepLogs || process.env.OUTPOST_BENCH_KEEP_LOGS) console.error(`bench: logs of the gateway and agent children kept in ${dir}`);
      else await step('temp dir', () => rmSync(dir, { recursive: true, force: true }));
    },
  };

  try {
    database = await createTestDatabase('postgres', options.postgresUrl);
    for (const name of options.gateways) {
      const configFile = join(dir, `${name}.yaml`);
      const config = deepMerge(
        { id: name, host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: database.url, logLevel: options.logLevel, insecure: true },
        options.gatewayConfig,
      );
      writeFileSync(configFile, stringify(config));
      replicas.set(name, { name, httpPort: 0, grpcPort: 0, httpUrl: '', logFile: join(dir, `${name}.log`), configFile, config });
    }
    sandbox = await startOutpost(
      ['sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig, '--seed', 'demo', ...(options.sandboxArgs ?? [])],
      /127\.0\.0\.1:\d+/,
    );
    await Promise.all(options.gateways.map((name) => set.startGateway(name)));
  } catch (err) {
    await set.close(true);
    throw err;
  }
  return set;
}

/** One account as ListAccounts (Connect JSON) reports it. */
export interface AccountView {
  name: string;
  state?: string;
  agentId?: string;
  gatewayId?: string;
}

/** Account `name` as gateway `httpUrl` lists it (undefined when unknown or the gateway does not answer). */
export async function readAccount(httpUrl: string, name: string): Promise<AccountView | undefined> {
  try {
    const res = await fetch(`${httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
      signal: AbortSignal.timeout(3000),
    });
    if (!res.ok) return undefined;
    const body = (await res.json()) as { accounts?: AccountView[] };
    return (body.accounts ?? []).find((a) => a.name === name);
  } catch {
    return undefined;
  }
}
