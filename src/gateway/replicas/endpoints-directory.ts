/**
 * Discovery in Kubernetes: an informer (list, then watch; no polling) over the Endpoints of the gateway's namespace.
 * Endpoints whose name starts with `replicas.endpointsPrefix` describe gateway replicas; every address of a subset that
 * has the port named `replicas.portName` is one replica (`addresses` ready, `notReadyAddresses` not). An address seen
 * under several Endpoints (say a main and a read-only Service) is listed once, ready when any lists it ready.
 * Needs get/list/watch on endpoints in that namespace.
 */
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig, makeInformer, type V1Endpoints } from '@kubernetes/client-node';
import type { Logger } from '../../shared/logger.js';
import type { GatewayReplicasConfig } from '../config/schema.js';
import type { Replica, ReplicaDirectory } from './replica-directory.js';
import { createReplicaList } from './replica-list.js';

const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
const RESTART_DELAY_MS = 1000;

/** Options of {@link createEndpointsDirectory}. */
export interface EndpointsDirectoryOptions {
  config: Pick<GatewayReplicasConfig, 'namespace' | 'endpointsPrefix' | 'portName' | 'kubeconfigFile' | 'context'>;
  /** Scheme of the replica URLs (replicas share the gateway's TLS setting). */
  scheme: 'http' | 'https';
  logger: Logger;
}

/** Loads the kubeconfig and resolves the namespace now, so a mis-configured gateway fails at start-up. */
export function createEndpointsDirectory(options: EndpointsDirectoryOptions): ReplicaDirectory {
  const { config, logger } = options;
  const kc = loadKubeConfig(config);
  const namespace = resolveNamespace(config, kc);
  const core = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer<V1Endpoints>(kc, `/api/v1/namespaces/${namespace}/endpoints`, () =>
    core.listNamespacedEndpoints({ namespace }),
  );
  const list = createReplicaList();
  /** When each Endpoints object was last seen changing (its replicas' `lastUpdated`). */
  const seenAt = new Map<string, Date>();
  let closed = false;
  let restartTimer: NodeJS.Timeout | undefined;

  const rebuild = () => {
    const byId = new Map<string, Replica>();
    for (const ep of informer.list()) {
      const name = ep.metadata?.name ?? '';
      if (!name.startsWith(config.endpointsPrefix)) continue;
      for (const r of replicasOf(ep, config.portName, options.scheme, seenAt.get(name) ?? new Date())) {
        const prev = byId.get(r.id);
        if (!prev) byId.set(r.id, r);
        else if (!prev.ready && r.ready) byId.set(r.id, r);
      }
    }
    list.set([...byId.values()], logger);
  };
  const touched = (ep: V1Endpoints) => {
    if (ep.metadata?.name) seenAt.set(ep.metadata.name, new Date());
    rebuild();
  };
  informer.on('add', touched);
  informer.on('update', touched);
  informer.on('delete', (ep) => {
    if (ep.metadata?.name) seenAt.delete(ep.metadata.name);
    rebuild();
  });
  informer.on('connect', () => rebuild());
  const restartLater = () => {
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      if (!closed)
        informer.start().catch((err) => {
          logger.warn({ err, namespace }, 'Endpoints watch could not start; retrying');
          restartLater();
        });
    }, RESTART_DELAY_MS);
    restartTimer.unref();
  };
  informer.on('error', (err) => {
    if (closed) return;
    // The informer stops on an error; the last known list stays while it restarts (with a fresh list).
    logger.warn({ err, namespace }, 'Endpoints watch failed; restarting');
    restartLater();
  });

  return {
    async start() {
      logger.info({ namespace, prefix: config.endpointsPrefix, portName: config.portName }, 'watching Endpoints for gateway replicas');
      try {
        await informer.start();
      } catch (err) {
        logger.warn({ err, namespace }, 'Endpoints watch could not start; retrying');
        restartLater();
      }
    },
    list: list.list,
    get: list.get,
    subscribe: list.subscribe,
    markDraining: async () => {},
    async close() {
      if (closed) return;
      closed = true;
      clearTimeout(restartTimer);
      await informer.stop().catch(() => {});
    },
  };
}

/** The replicas one Endpoints object describes: addresses of subsets that carry the named port. */
function replicasOf(ep: V1Endpoints, portName: string, scheme: 'http' | 'https', lastUpdated: Date): Replica[] {
  const out: Replica[] = [];
  for (const subset of ep.subsets ?? []) {
    const port = (subset.ports ?? []).find((p) => p.name === portName);
    if (!port || typeof port.port !== 'number') continue;
    const portScheme = port.appProtocol === 'https' ? 'https' : scheme;
    for (const [addresses, ready] of [
      [subset.addresses ?? [], true],
      [subset.notReadyAddresses ?? [], false],
    ] as const) {
      for (const a of addresses) {
        if (!a.ip) continue;
        const host = a.ip.includes(':') ? `[${a.ip}]` : a.ip;
        out.push({ id: a.targetRef?.name || a.ip, baseUrl: `${portScheme}://${host}:${port.port}`, lastUpdated, ready });
      }
    }
  }
  return out;
}

function loadKubeConfig(config: EndpointsDirectoryOptions['config']): KubeConfig {
  const kc = new KubeConfig();
  try {
    if (config.kubeconfigFile) {
      kc.loadFromFile(config.kubeconfigFile);
      if (config.context !== undefined) {
        if (kc.getContextObject(config.context) === null)
          throw new Error(`context "${config.context}" not found in ${config.kubeconfigFile}`);
        kc.setCurrentContext(config.context);
      }
    } else {
      if (!process.env.KUBERNETES_SERVICE_HOST) {
        throw new Error(
          'not running in a pod (KUBERNETES_SERVICE_HOST is not set): set replicas.kubeconfigFile, or use replicas.discovery: database',
        );
      }
      kc.loadFromCluster();
    }
  } catch (err) {
    throw new Error(`replicas.discovery kubernetes: ${(err as Error).message}`, { cause: err });
  }
  if (kc.getCurrentCluster() === null) throw new Error('replicas.discovery kubernetes: the kubeconfig has no current cluster');
  // client-node refuses plain http: servers unless skipTLSVerify is set (which means nothing without TLS).
  kc.clusters = kc.clusters.map((c) => (c.server.startsWith('http:') ? { ...c, skipTLSVerify: true } : c));
  return kc;
}

function resolveNamespace(config: EndpointsDirectoryOptions['config'], kc: KubeConfig): string {
  if (config.namespace) return config.namespace;
  try {
    const ns = readFileSync(SERVICE_ACCOUNT_NAMESPACE_FILE, 'utf8').trim();
    if (ns) return ns;
  } catch {
    // Out of cluster: fall back to the kubeconfig context's namespace.
  }
  const fromContext = kc.getContextObject(kc.getCurrentContext())?.namespace;
  if (fromContext) return fromContext;
  throw new Error(
    `replicas.discovery kubernetes: set replicas.namespace (${SERVICE_ACCOUNT_NAMESPACE_FILE} is not readable and the kubeconfig context names no namespace)`,
  );
}
