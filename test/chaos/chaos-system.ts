/**
 * Everything the chaos suite runs: a private Postgres server (so it can be restarted), three gateway processes on it,
 * the sandbox cluster, and two agent processes serving the same account (one caches, one stands by). The agents take
 * different transports (AGENT_SETUPS): `agent-1` a WebSocket to the gateways' HTTP ports, `agent-2` gRPC to their
 * gRPC ports, each through a balancer in front of those ports (as a Kubernetes Service). Each agent dials through a
 * real forward proxy of its own (tinyproxy, HTTP CONNECT with basic auth, `clouddriver.proxy`), whose tunnel goes to
 * a fault proxy of its own that can cut, blackhole or delay the link and records every byte it forwards:
 * agent → tinyproxy → fault proxy → balancer → gateways.
 */
import { openDatabase, type Database } from '../../src/db/database.js';
import { startBalancer, type Balancer } from '../../testkit/balancer.js';
import { startGatewayCluster, type GatewayCluster } from '../../testkit/gateway-cluster.js';
import { startTcpProxy, type TcpProxy } from '../../testkit/tcp-proxy.js';
import { startTinyproxy, type Tinyproxy } from '../../testkit/tinyproxy.js';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres.js';

/** The transports an agent stream can take. */
type ChaosTransport = 'grpc' | 'websocket';

/** Agent `i` (from 0) takes `AGENT_SETUPS[i % length]`: the first agent started (which caches first) is the WebSocket one. */
const AGENT_SETUPS: readonly { transport: ChaosTransport }[] = [{ transport: 'websocket' }, { transport: 'grpc' }];

/** Credentials the agents give their forward proxies (tinyproxy accepts only [A-Za-z0-9._-]). */
const PROXY_AUTH = { user: 'chaos-agent', password: 'chaos-proxy-pass' };

/** The running system. */
export interface ChaosSystem {
  readonly cluster: GatewayCluster;
  readonly postgres: PrivatePostgres;
  /** The cache database (the suite's own connection, for comparisons). */
  readonly db: Database;
  /** Agent ids, each with the proxy in front of its gateway connection. */
  readonly agents: readonly string[];
  /** The fault proxy of each agent (between its forward proxy and the balancer). */
  readonly proxies: ReadonlyMap<string, TcpProxy>;
  /** The forward proxy (tinyproxy) each agent dials through. */
  readonly forwardProxies: ReadonlyMap<string, Tinyproxy>;
  /** The transport each agent is configured with. */
  readonly transports: ReadonlyMap<string, ChaosTransport>;
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
  let httpBalancer: Balancer | undefined;
  const proxies = new Map<string, TcpProxy>();
  const forwardProxies = new Map<string, Tinyproxy>();
  const transports = new Map<string, ChaosTransport>();
  const stop = async () => {
    await db?.close().catch(() => {});
    await cluster?.close().catch(() => {});
    await httpBalancer?.close();
    for (const p of proxies.values()) await p.close();
    for (const p of forwardProxies.values()) await p.stop();
    await postgres.close();
  };
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
    const c = cluster;
    // The cluster's balancer fronts the gRPC ports; the WebSocket endpoint is on the HTTP ports, behind this one.
    httpBalancer = await startBalancer(() => c.gatewayNames.flatMap((g) => (c.isRunning(g) ? [c.gateway(g).httpPort] : [])));
    c.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    db = await openDatabase(c.databaseUrl, { maxConnections: 2 });
    const agents = Array.from({ length: options.agents ?? 2 }, (_, i) => `agent-${i + 1}`);
    for (const [i, id] of agents.entries()) {
      const { transport } = AGENT_SETUPS[i % AGENT_SETUPS.length]!;
      const proxy = await startTcpProxy(transport === 'websocket' ? httpBalancer.port : c.balancer.port);
      proxies.set(id, proxy);
      const forward = await startTinyproxy({ auth: PROXY_AUTH });
      forwardProxies.set(id, forward);
      transports.set(id, transport);
      await c.startAgent(id, {
        grpcAddress: proxy.address,
        account: { name: account, namespaces: [namespace], kinds: ['ConfigMap', 'Secret'] },
        agentConfig: {
          clouddriver: {
            transport,
            ...(transport === 'websocket' ? { websocket: proxy.address } : {}),
            proxy: `http://${PROXY_AUTH.user}:${PROXY_AUTH.password}@127.0.0.1:${forward.port}`,
          },
        },
      });
    }
    return { cluster: c, postgres, db, agents, proxies, forwardProxies, transports, account, namespace, close: stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
