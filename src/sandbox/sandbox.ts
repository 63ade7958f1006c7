/**
 * `startSandbox`: wires the store, controllers, auth, watches, faults and the HTTP(S) server into one running
 * Kubernetes API server for tests, benchmarks and demos.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { createSilentLogger } from '../shared/logger.js';
import { createAuthenticator } from './auth.js';
import { bootstrapStore } from './bootstrap.js';
import { createCertificateAuthority } from './certs.js';
import { createCrdController } from './controllers/crd.js';
import { createDeploymentController } from './controllers/deployment.js';
import { createDaemonSetController } from './controllers/daemonset.js';
import { createEndpointsController } from './controllers/endpoints.js';
import { createEventRecorder } from './controllers/event-recorder.js';
import { createJobController } from './controllers/job.js';
import { createGarbageCollector } from './controllers/garbage-collector.js';
import { createKubeletController } from './controllers/kubelet.js';
import { createReplicaSetController } from './controllers/replicaset.js';
import { startControllers, type ControllerRunner } from './controllers/runner.js';
import { createStatefulSetController } from './controllers/statefulset.js';
import { ApiError } from './errors.js';
import { createFaultController, type SandboxFaults } from './faults.js';
import { createRequestHandler } from './http/router.js';
import { createUpgradeHandler } from './http/upgrade.js';
import { createWatchHub } from './http/watch.js';
import { createKindRegistry } from './kinds.js';
import { renderKubeconfig } from './kubeconfig.js';
import { createAuthorizer } from './rbac.js';
import { applySeed, type SeedOption } from './seed.js';
import { createObjectStore, type ObjectStore } from './store.js';
import { DEFAULT_POD_READY_DELAY_MS, DEFAULT_POD_RUN_MS, DEFAULT_POD_START_DELAY_MS, paceProblem } from '../shared/sandbox-pace.js';
import type { KubeObject } from './types.js';

/** Options for {@link startSandbox}. */
export interface SandboxOptions {
  /** Port to listen on; default 0 (ephemeral). */
  port?: number;
  /** Address to bind; default '127.0.0.1'. */
  host?: string;
  /** Serve HTTPS with a freshly generated CA (`caPem` on the result). */
  tls?: boolean;
  /** Objects to create at start; default 'none'. */
  seed?: SeedOption;
  /** Events kept for watch resume; older resourceVersions get 410 (default 10000). */
  historyWindow?: number;
  /** Interval of BOOKMARK events on watches that allow them (default 5000). */
  bookmarkIntervalMs?: number;
  /**
   * Pods the pretend cluster holds at most (default 1000): a pod create past it is 403 Forbidden "exceeded quota", as
   * under a ResourceQuota, and the workload controllers record FailedCreate — so a workload scaled to two billion
   * replicas cannot fill the memory of the process the sandbox shares (with a gateway, in `outpost demo` and tests).
   */
  maxPods?: number;
  /** Controllers and the kubelet record v1 Events (default true). */
  events?: boolean;
  /** Events the controllers keep per namespace before deleting their oldest (default 500). */
  maxEventsPerNamespace?: number;
  /**
   * How long a new pod stays Pending before the pretend kubelet reports it Running, in ms (default 30). With
   * `podReadyDelayMs` it sets the pace of rollouts.
   */
  podStartDelayMs?: number;
  /**
   * How long a started pod stays Running but not Ready when it does not say otherwise (the
   * `sandbox.outpost.dev/ready-after-ms` annotation, never-ready…), in ms (default 0: Ready at once). Each step of a
   * rolling update waits for new pods to become Ready, so this makes a rollout last long enough to be watched.
   */
  podReadyDelayMs?: number;
  /** How long a pod that runs to completion (a Job's) runs when its annotations do not say (default 100). */
  podRunMs?: number;
  /** Interval of the heartbeat lines a followed (`follow=true`) pod log gets while the pod runs (default 1000). */
  logFollowIntervalMs?: number;
  logger?: Logger;
}

/** In-process access to the objects (bypasses HTTP and auth): for tests and seeds. Objects are plain JSON. */
export interface SandboxStore {
  /** Creates an object; fills uid, resourceVersion, creationTimestamp, generation. Throws ApiError (409, 404, 422…). */
  create(obj: object): KubeObject;
  /** Replaces an object; 409 ApiError on a stale metadata.resourceVersion when one is set. */
  update(obj: object): KubeObject;
  /** Deletes (background propagation); returns the deleted object, or undefined when there was none. */
  remove(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  get(apiVersion: string, kind: string, namespace: string | undefined, name: string): KubeObject | undefined;
  list(apiVersion: string, kind: string, namespace?: string): KubeObject[];
  /** The current cluster-wide resourceVersion. */
  readonly resourceVersion: number;
}

/** A running sandbox. */
export interface Sandbox {
  /** `http(s)://127.0.0.1:PORT`. */
  readonly url: string;
  readonly adminToken: string;
  readonly restrictedToken: string;
  /** The CA that signed the server certificate (TLS only). */
  readonly caPem?: string;
  /** A client-node KubeConfig for this sandbox as the given user (default admin). */
  kubeConfig(user?: 'admin' | 'restricted'): KubeConfig;
  /** Writes a kubeconfig file with contexts `sandbox` (admin, current) and `sandbox-restricted`, creating its directory. */
  writeKubeconfig(path: string): Promise<void>;
  readonly store: SandboxStore;
  readonly faults: SandboxFaults;
  /** Watches open now (a client's cancel shows as this count going down). */
  openWatches(): number;
  close(): Promise<void>;
}

function publicStore(store: ObjectStore): SandboxStore {
  const info = (apiVersion: unknown, kind: unknown) => store.kindOf(apiVersion, kind);
  return {
    create(obj) {
      const o = obj as Record<string, unknown>;
      return store.create(info(o.apiVersion, o.kind), o);
    },
    update(obj) {
      const o = obj as Record<string, unknown>;
      return store.update(info(o.apiVersion, o.kind), o);
    },
    remove(apiVersion, kind, namespace, name) {
      try {
        return store.delete(info(apiVersion, kind), namespace, name, { propagationPolicy: 'Background' }).obj;
      } catch (err) {
        if (err instanceof ApiError && err.code === 404) return undefined;
        throw err;
      }
    },
    get: (apiVersion, kind, namespace, name) => store.get(info(apiVersion, kind), namespace, name),
    list: (apiVersion, kind, namespace) => store.list(info(apiVersion, kind), namespace),
    get resourceVersion() {
      return store.resourceVersion;
    },
  };
}

/** Starts a sandbox API server; resolves once it is listening. Call `close()` to stop it (tests must). */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const logger = options.logger ?? createSilentLogger();
  const timings = {
    startDelayMs: options.podStartDelayMs ?? DEFAULT_POD_START_DELAY_MS,
    readyDelayMs: options.podReadyDelayMs ?? DEFAULT_POD_READY_DELAY_MS,
    defaultRunMs: options.podRunMs ?? DEFAULT_POD_RUN_MS,
  };
  for (const [option, value] of [
    ['podStartDelayMs', timings.startDelayMs],
    ['podReadyDelayMs', timings.readyDelayMs],
    ['podRunMs', timings.defaultRunMs],
  ] as const) {
    const problem = paceProblem(value);
    if (problem) throw new RangeError(`startSandbox: ${option} ${problem} (got ${String(value)})`);
  }
  const host = options.host ?? '127.0.0.1';
  const registry = createKindRegistry();
  const store = createObjectStore(registry, options.historyWindow ?? 10000, options.maxPods);
  const authenticator = createAuthenticator();
  const authorizer = createAuthorizer(store);
  const watches = createWatchHub(store, { bookmarkIntervalMs: options.bookmarkIntervalMs ?? 5000, logger });
  const faults = createFaultController(store, watches);
  const events = createEventRecorder(store, { enabled: options.events ?? true, maxPerNamespace: options.maxEventsPerNamespace });
  let runner: ControllerRunner | undefined;
  runner = startControllers(
    store,
    [
      createCrdController(store, logger),
      createDeploymentController(store, () => runner!, events),
      createReplicaSetController(store, events, () => runner!),
      createStatefulSetController(store, events),
      createDaemonSetController(store, events),
      createJobController(store, events),
      createKubeletController(store, () => runner!, timings, events),
      createEndpointsController(store),
      createGarbageCollector(store),
    ],
    logger,
  );
  bootstrapStore(store);
  applySeed(store, options.seed ?? 'none');

  const routerContext = {
    store,
    authenticator,
    authorizer,
    watches,
    faults,
    logger,
    logFollowIntervalMs: options.logFollowIntervalMs ?? 1000,
  };
  const handler = createRequestHandler(routerContext);
  const upgrades = createUpgradeHandler(routerContext, handler);
  let caPem: string | undefined;
  let server: Server;
  if (options.tls) {
    const ca = await createCertificateAuthority();
    caPem = ca.caPem;
    server = createHttpsServer({ cert: ca.certPem, key: ca.keyPem }, handler);
  } else {
    server = createHttpServer(handler);
  }
  server.on('upgrade', upgrades.handle);
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
    else socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  const url = `${options.tls ? 'https' : 'http'}://${urlHost}:${port}`;
  logger.info({ url }, 'sandbox API server listening');

  const users = [
    { name: 'admin', token: authenticator.adminToken },
    { name: 'restricted', token: authenticator.restrictedToken },
  ];
  let closed = false;
  return {
    url,
    adminToken: authenticator.adminToken,
    restrictedToken: authenticator.restrictedToken,
    caPem,
    kubeConfig(user = 'admin') {
      const kc = new KubeConfig();
      const token = user === 'admin' ? authenticator.adminToken : authenticator.restrictedToken;
      kc.loadFromOptions({
        clusters: [
          {
            name: 'sandbox',
            server: url,
            skipTLSVerify: !options.tls,
            ...(caPem ? { caData: Buffer.from(caPem).toString('base64') } : {}),
          },
        ],
        users: [{ name: user, token }],
        contexts: [{ name: user === 'admin' ? 'sandbox' : 'sandbox-restricted', cluster: 'sandbox', user }],
        currentContext: user === 'admin' ? 'sandbox' : 'sandbox-restricted',
      });
      return kc;
    },
    async writeKubeconfig(path) {
      const text = renderKubeconfig({ server: url, caPem, users, currentUser: 'admin' });
      await mkdir(dirname(path), { recursive: true }); // as kubectl does for its own file
      await writeFile(path, text, { mode: 0o600 });
    },
    store: publicStore(store),
    faults,
    openWatches: () => watches.openCount,
    async close() {
      if (closed) return;
      closed = true;
      runner?.stop();
      faults.dispose();
      watches.closeAll();
      upgrades.closeAll();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
