/**
 * Starts the whole system in-process for end-to-end tests: a sandbox cluster, a gateway on a test database and agents
 * whose gRPC traffic goes through a recording TCP proxy. Every piece is real and talks over real sockets.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadAgentConfig, startAgent, type RunningAgent } from '../src/agent/index.js';
import { loadGatewayConfig, startGateway, type RunningGateway } from '../src/gateway/index.js';
import { startSandbox, type Sandbox, type SandboxOptions } from '../src/sandbox/index.js';
import { createSilentLogger, type Logger } from '../src/shared/logger.js';
import { createTestDatabase, type TestDatabase } from './databases.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

/** Extra agent settings for one account, written into the agent's YAML config. */
export interface AgentAccountOptions {
  name?: string;
  user?: 'admin' | 'restricted';
  namespaces?: string[];
  kinds?: string[];
  omitKinds?: string[];
}

/** A running system; `close()` stops everything and removes temporary files and databases. */
export interface TestSystem {
  readonly sandbox: Sandbox;
  readonly gateway: RunningGateway;
  readonly proxy: TcpProxy;
  readonly dir: string;
  readonly database: TestDatabase;
  /** Starts an agent (id `agent-1` by default) for one account through the proxy. */
  startAgent(account?: AgentAccountOptions, id?: string): Promise<RunningAgent>;
  /** Stops every agent started so far (a clean stop; start new ones with startAgent). */
  stopAgents(): Promise<void>;
  /** Stops the gateway and starts a new one on the same database and ports. */
  restartGateway(): Promise<RunningGateway>;
  close(): Promise<void>;
}

/** Options for {@link startTestSystem}. */
export interface TestSystemOptions {
  driver: 'pglite' | 'postgres';
  /**
   * PGlite in a temp directory, which survives {@link TestSystem.restartGateway}; otherwise an in-memory PGlite
   * (a copy of a migrated template: about 1 s to open instead of about 5 s). Postgres always survives.
   */
  persistent?: boolean;
  sandbox?: SandboxOptions;
  logger?: Logger;
}

/** Starts sandbox + gateway (+ proxy); agents are started by the test. */
export async function startTestSystem(options: TestSystemOptions): Promise<TestSystem> {
  const logger = options.logger ?? createSilentLogger();
  const dir = mkdtempSync(join(tmpdir(), 'outpost-e2e-'));
  const database = await createTestDatabase(options.driver);
  const dbUrl = options.driver === 'pglite' && options.persistent ? join(dir, 'db') : database.url;
  const sandbox = await startSandbox({ seed: 'demo', ...options.sandbox, logger: logger.child({ component: 'sandbox' }) });
  const kubeconfig = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  const gatewayConfig = (httpPort: number, grpcPort: number) =>
    loadGatewayConfig({ env: {}, overrides: { httpPort, grpcPort, host: '127.0.0.1', database: dbUrl, id: 'gw-1', insecure: true } });
  let gateway = await startGateway(gatewayConfig(0, 0), { logger: logger.child({ component: 'gateway' }) });
  const grpcPort = Number(new URL(gateway.grpcUrl).port);
  const httpPort = Number(new URL(gateway.httpUrl).port);
  // The proxy's target is fixed, so a restarted gateway must come back on the same ports.
  const proxy = await startTcpProxy(grpcPort);
  const agents: RunningAgent[] = [];
  const system: TestSystem = {
    sandbox,
    get gateway() {
      return gateway;
    },
    proxy,
    dir,
    database,
    async startAgent(account = {}, id = 'agent-1') {
      const path = join(dir, `${id}-${agents.length}.yaml`);
      const lines = [
        'clouddriver:',
        `  grpc: ${proxy.address}`,
        '  insecure: true',
        'agent:',
        `  id: ${id}`,
        'server:',
        '  port: 0',
        'kubernetes:',
        '  accounts:',
        `    - name: ${account.name ?? 'sandbox'}`,
        `      kubeconfigFile: ${kubeconfig}`,
      ];
      if (account.user === 'restricted') lines.push('      context: sandbox-restricted');
      if (account.namespaces) lines.push(`      namespaces: ${JSON.stringify(account.namespaces)}`);
      if (account.kinds) lines.push(`      kinds: ${JSON.stringify(account.kinds)}`);
      if (account.omitKinds) lines.push(`      omitKinds: ${JSON.stringify(account.omitKinds)}`);
      writeFileSync(path, `${lines.join('\n')}\n`);
      const agent = await startAgent(loadAgentConfig(path, {}), { logger: logger.child({ component: 'agent', id }) });
      agents.push(agent);
      return agent;
    },
    async stopAgents() {
      for (const agent of agents.splice(0)) await agent.close();
    },
    async restartGateway() {
      if (dbUrl === 'memory://')
        throw new Error(
          'restartGateway needs startTestSystem({ persistent: true }) on PGlite: an in-memory database ends with its gateway',
        );
      await gateway.close();
      gateway = await startGateway(gatewayConfig(httpPort, grpcPort), { logger: logger.child({ component: 'gateway' }) });
      return gateway;
    },
    async close() {
      for (const agent of agents) await agent.close().catch(() => {});
      await proxy.close();
      await gateway.close().catch(() => {});
      await sandbox.close();
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return system;
}
