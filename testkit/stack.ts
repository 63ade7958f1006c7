/**
 * Sandbox + gateway + agents in the test process, every piece real and talking over real sockets: the one way
 * end-to-end tests start the three parts together. Agents dial the gateway through a recording TCP proxy
 * (./tcp-proxy.ts), so a test can prove what crosses the wire or cut it. Several gateway *processes* behind a balancer
 * are ./gateway-cluster.ts; a gateway alone, ./test-gateway.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { loadAgentConfig, startAgent, type RunningAgent } from '../src/agent/index.js';
import { startGateway, type GatewayConfigInput, type GatewayDeps, type RunningGateway } from '../src/gateway/index.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';
import { createSilentLogger, type Logger } from '../src/shared/logger.js';
import { waitForAccounts } from './accounts-ready.js';
import { agentAccountEntry, deepMerge, type AgentAccount, type ConfigObject } from './cluster-config.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';
import { testGatewayConfig } from './test-gateway.js';

/** Options of {@link Stack.startAgent} (and of each entry of {@link StackOptions.agents}). */
interface StackAgentOptions {
  /** Agent id, default `agent-1`. Ids may repeat after {@link Stack.stopAgents}. */
  id?: string;
  /** The agent's one account (default `{ name: 'sandbox' }`: every kind, the sandbox's admin user). */
  account?: AgentAccount;
  /** Several accounts instead of `account`. */
  accounts?: AgentAccount[];
  /**
   * Deep-merged over the generated config (`clouddriver.grpc` = the proxy, insecure, admin port 0, the accounts):
   * reconnect settings, auth, zone… Arrays such as `kubernetes.accounts` replace, they do not merge.
   */
  config?: ConfigObject;
  /**
   * Write the config to this path and let the agent watch it (account changes apply without a restart; dynamic
   * kubeconfigs are resolved against its directory). Without it the config goes to a file of the stack's own.
   */
  configFile?: string;
  /** With `configFile`: how often the agent checks it (default: the agent's). */
  configPollMs?: number;
  /** This agent's logger (default: the stack's, as child `{ component: 'agent', id }`). */
  logger?: Logger;
}

/** Options of {@link startStack}. */
export interface StackOptions {
  /** Default `pglite`; `postgres` needs OUTPOST_TEST_POSTGRES (./databases.ts). */
  driver?: 'pglite' | 'postgres';
  /**
   * PGlite in the temp directory, which survives {@link Stack.restartGateway}; otherwise an in-memory PGlite (a copy
   * of a migrated template: about 1 s to open instead of about 5 s). Postgres always survives.
   */
  persistent?: boolean;
  /** Sandbox options, over `{ seed: 'demo' }`. */
  sandbox?: SandboxOptions;
  /**
   * Gateway settings over the test defaults of ./test-gateway.ts (id `gw-1`, 127.0.0.1, insecure), top-level sections
   * replaced whole. A function gets the stack's temp directory first, to write files the settings name (a JWT secret).
   */
  gateway?: GatewayConfigInput | ((dir: string) => GatewayConfigInput);
  /** Parts handed to `startGateway` besides the logger (a Fiat clock); also on {@link Stack.restartGateway}. */
  gatewayDeps?: Omit<GatewayDeps, 'logger'>;
  /** Agents started in order once the gateway runs; startStack then waits until every one of their accounts is ACTIVE. */
  agents?: StackAgentOptions[];
  /** Logger of sandbox, gateway and agents (as children by component); default silent. */
  logger?: Logger;
}

/** A running stack. Always `close()` it (in `after`/`finally`): it stops everything, drops the database, removes `dir`. */
export interface Stack {
  readonly sandbox: Sandbox;
  /** The current gateway (a new one after {@link Stack.restartGateway}). */
  readonly gateway: RunningGateway;
  /** Between the agents and the gateway's gRPC port; agents dial `proxy.address`. */
  readonly proxy: TcpProxy;
  /** Temp directory: kubeconfig, agent configs, the persistent PGlite. */
  readonly dir: string;
  /** The sandbox kubeconfig file: contexts `sandbox` (admin, current) and `sandbox-restricted`. */
  readonly kubeconfig: string;
  readonly database: TestDatabase;
  /** Agents started so far and not stopped, in start order. */
  readonly agents: readonly RunningAgent[];
  /** Starts an agent dialing the proxy; resolves once it runs (not necessarily connected). */
  startAgent(options?: StackAgentOptions): Promise<RunningAgent>;
  /** Stops every agent started so far (a clean stop; start new ones with startAgent). */
  stopAgents(): Promise<void>;
  /** Stops the gateway and starts a new one on the same database and ports (needs `persistent` on PGlite). */
  restartGateway(): Promise<RunningGateway>;
  close(): Promise<void>;
}

/**
 * Starts sandbox, gateway (on a fresh test database, ephemeral ports) and proxy, then `options.agents`. On a failure
 * part-way it stops what it started and rethrows. The sandbox runs in the test process: keep its event loop free.
 */
export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const logger = options.logger ?? createSilentLogger();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-stack-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const agents: RunningAgent[] = [];
  let configFiles = 0;
  let database: TestDatabase | undefined;
  let sandbox: Sandbox | undefined;
  let gateway: RunningGateway | undefined;
  let proxy: TcpProxy | undefined;

  const close = async () => {
    for (const agent of agents.splice(0)) await agent.close().catch(() => {});
    await proxy?.close();
    await gateway?.close().catch(() => {});
    await sandbox?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    const driver = options.driver ?? 'pglite';
    database = await createTestDatabase(driver);
    const dbUrl = driver === 'pglite' && options.persistent ? join(dir, 'db') : database.url;
    sandbox = await startSandbox({ seed: 'demo', ...options.sandbox, logger: logger.child({ component: 'sandbox' }) });
    await sandbox.writeKubeconfig(kubeconfig);
    const overrides = typeof options.gateway === 'function' ? options.gateway(dir) : (options.gateway ?? {});
    const gatewayLogger = logger.child({ component: 'gateway' });
    const configAt = (httpPort: number, grpcPort: number) => testGatewayConfig(dbUrl, { id: 'gw-1', ...overrides, httpPort, grpcPort });
    gateway = await startGateway(configAt(0, 0), { ...options.gatewayDeps, logger: gatewayLogger });
    const httpPort = Number(new URL(gateway.httpUrl).port);
    const grpcPort = Number(new URL(gateway.grpcUrl).port);
    // The proxy's target is fixed, so a restarted gateway must come back on the same ports.
    proxy = await startTcpProxy(grpcPort);

    const stack: Stack = {
      sandbox,
      get gateway() {
        return gateway!;
      },
      proxy,
      dir,
      kubeconfig,
      database,
      agents,
      async startAgent(agentOptions = {}) {
        const id = agentOptions.id ?? 'agent-1';
        const accounts = agentOptions.accounts ?? [agentOptions.account ?? {}];
        const generated: ConfigObject = {
          clouddriver: { grpc: proxy!.address, insecure: true },
          agent: { id },
          server: { port: 0 },
          kubernetes: { accounts: accounts.map((a) => agentAccountEntry(a, kubeconfig)) },
        };
        const file = agentOptions.configFile ?? join(dir, `${id}-${configFiles++}.yaml`);
        writeFileSync(file, stringify(deepMerge(generated, agentOptions.config)));
        const agent = await startAgent(loadAgentConfig(file, {}), {
          logger: agentOptions.logger ?? logger.child({ component: 'agent', id }),
          ...(agentOptions.configFile === undefined ? {} : { configFile: file, env: {}, configPollMs: agentOptions.configPollMs }),
        });
        agents.push(agent);
        return agent;
      },
      async stopAgents() {
        for (const agent of agents.splice(0)) await agent.close();
      },
      async restartGateway() {
        if (dbUrl === 'memory://')
          throw new Error('restartGateway needs startStack({ persistent: true }) on PGlite: an in-memory database ends with its gateway');
        await gateway!.close();
        gateway = await startGateway(configAt(httpPort, grpcPort), { ...options.gatewayDeps, logger: gatewayLogger });
        return gateway;
      },
      close,
    };
    for (const agent of options.agents ?? []) await stack.startAgent(agent);
    const names = (options.agents ?? []).flatMap((a) => (a.accounts ?? [a.account ?? {}]).map((account) => account.name ?? 'sandbox'));
    if (names.length > 0) await waitForAccounts(gateway.httpUrl, names);
    return stack;
  } catch (err) {
    await close().catch(() => {});
    throw err;
  }
}
