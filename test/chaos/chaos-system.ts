/**
 * Everything the chaos suite runs: a private Postgres server (so it can be restarted), three gateway processes on it,
 * the sandbox cluster, and two agent processes serving the same account (one caches, one stands by), each dialling
 * the gateways' balancer through a fault proxy of its own that records every byte it forwards.
 */
import { openDatabase, type Database } from '../../src/db/database.js';
import { startGatewayCluster, type GatewayCluster } from '../../testkit/gateway-cluster.js';
import { startTcpProxy, type TcpProxy } from '../../testkit/tcp-proxy.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

/** The running system. */
export interface ChaosSystem {
  readonly cluster: GatewayCluster;
  readonly postgres: PrivatePostgres;
  /** The cache database (the suite's own connection, for comparisons). */
  readonly db: Database;
  /** Agent ids, each with the proxy in front of its gateway connection. */
  readonly agents: readonly string[];
  readonly proxies: ReadonlyMap<string, TcpProxy>;
  readonly account: string;
  readonly namespace: string;
  close(): Promise<void>;
}

/** Options of {@link startChaosSystem}. */
export interface ChaosSystemOptions {
  gateways?: number;
  agents?: number;
  logLevel?: string;
}

/** Starts the system; on failure stops what it started. */
export async function startChaosSystem(options: ChaosSystemOptions = {}): Promise<ChaosSystem> {
  const account = 'chaos';
  const namespace = 'chaos';
  const postgres = await startPrivatePostgres();
  let cluster: GatewayCluster | undefined;
  let db: Database | undefined;
  const proxies = new Map<string, TcpProxy>();
  try {
    cluster = await startGatewayCluster({
      gateways: options.gateways ?? 3,
      postgresServer: postgres.url,
      logLevel: options.logLevel ?? 'info',
      sandbox: { seed: 'none' },
      gatewayConfig: {
        replicas: { leaseSeconds: 3, standbyCheckIntervalSeconds: 0.2 },
        operations: { agentWaitSeconds: 10 },
      },
    });
    cluster.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    db = await openDatabase(cluster.databaseUrl, { maxConnections: 2 });
    const agents = Array.from({ length: options.agents ?? 2 }, (_, i) => `agent-${i + 1}`);
    for (const id of agents) {
      const proxy = await startTcpProxy(cluster.balancer.port);
      proxies.set(id, proxy);
      await cluster.startAgent(id, {
        grpcAddress: proxy.address,
        account: { name: account, namespaces: [namespace], kinds: ['ConfigMap', 'Secret'] },
      });
    }
    const system: ChaosSystem = {
      cluster,
      postgres,
      db,
      agents,
      proxies,
      account,
      namespace,
      async close() {
        await db?.close().catch(() => {});
        await cluster?.close().catch(() => {});
        for (const p of proxies.values()) await p.close();
        await postgres.close();
      },
    };
    return system;
  } catch (err) {
    await db?.close().catch(() => {});
    await cluster?.close().catch(() => {});
    for (const p of proxies.values()) await p.close();
    await postgres.close();
    throw err;
  }
}
