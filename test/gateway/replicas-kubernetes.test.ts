/**
 * Replica discovery through Kubernetes Endpoints (`replicas.discovery: kubernetes`) against the sandbox API server:
 * the gateway's /armory/clouddrivers follows Endpoints added, changed (addresses becoming not ready) and removed
 * through the API, and ignores Endpoints with another name prefix or without the named port.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CoreV1Api, type V1Endpoints } from '@kubernetes/client-node';
import { loadGatewayConfig, startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { createEndpointsDirectory } from '../../src/gateway/replicas/endpoints-directory.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'spinnaker';

let sb: Sandbox;
let dir: string;
let kubeconfigFile: string;

before(async () => {
  sb = await startSandbox({ bookmarkIntervalMs: 200 });
  sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  dir = mkdtempSync(join(tmpdir(), 'outpost-replicas-kube-'));
  kubeconfigFile = join(dir, 'kubeconfig');
  await sb.writeKubeconfig(kubeconfigFile);
});

after(async () => {
  await sb?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Instance {
  id: string;
  baseUrl: string;
  lastUpdated: string;
  ready: boolean;
}

type Address = { ip: string; pod?: string };

function endpoints(name: string, ready: Address[], notReady: Address[], ports: { name: string; port: number }[]): V1Endpoints {
  const addr = (a: Address) => ({ ip: a.ip, ...(a.pod ? { targetRef: { kind: 'Pod', namespace: NS, name: a.pod } } : {}) });
  return {
    apiVersion: 'v1',
    kind: 'Endpoints',
    metadata: { name, namespace: NS },
    subsets: [{ addresses: ready.map(addr), notReadyAddresses: notReady.map(addr), ports: ports.map((p) => ({ ...p, protocol: 'TCP' })) }],
  };
}

async function listing(gateway: RunningGateway): Promise<string[]> {
  const res = await fetch(`${gateway.httpUrl}/armory/clouddrivers`);
  assert.equal(res.status, 200);
  const body = (await res.json()) as Instance[];
  for (const r of body) assert.ok(!Number.isNaN(Date.parse(r.lastUpdated)), `${r.id} has a lastUpdated time`);
  return body.map((r) => `${r.id} ${r.baseUrl} ${r.ready ? 'ready' : 'not-ready'}`);
}

describe('replica discovery: Kubernetes Endpoints', () => {
  test('the list follows Endpoints added, made not ready and removed; other prefixes and ports are ignored', {
    timeout: 120_000,
  }, async () => {
    const core = sb.kubeConfig().makeApiClient(CoreV1Api);
    const config = loadGatewayConfig({
      env: {},
      overrides: {
        id: 'gw-self',
        host: '127.0.0.1',
        httpPort: 0,
        grpcPort: 0,
        database: 'memory://',
        insecure: true,
        replicas: { discovery: 'kubernetes', kubeconfigFile, context: 'sandbox', namespace: NS },
      },
    });
    const gw = await startGateway(config, { logger: createSilentLogger() });
    const self = `gw-self ${gw.httpUrl} ready`;
    const expect = async (lines: string[]) => {
      const want = [...lines, self].sort();
      await eventually('the expected listing', async () => JSON.stringify(await listing(gw)) === JSON.stringify(want), {
        timeoutMs: 30_000,
      }).catch(async (err) => {
        assert.deepEqual(await listing(gw), want, (err as Error).message);
      });
    };
    try {
      // Before any Endpoints: only this replica.
      assert.deepEqual(await listing(gw), [self]);

      const http = [
        { name: 'http', port: 7002 },
        { name: 'grpc', port: 9091 },
      ];
      await core.createNamespacedEndpoints({
        namespace: NS,
        body: endpoints(
          'spin-clouddriver',
          [{ ip: '10.0.0.1', pod: 'clouddriver-0' }, { ip: '10.0.0.2' }],
          [{ ip: '10.0.0.3', pod: 'clouddriver-2' }],
          http,
        ),
      });
      await core.createNamespacedEndpoints({
        namespace: NS,
        body: endpoints('spin-clouddriver-ro', [{ ip: '10.0.1.1', pod: 'ro-0' }], [], [{ name: 'http', port: 7003 }]),
      });
      // Ignored: another prefix, and the right prefix without the named port.
      await core.createNamespacedEndpoints({
        namespace: NS,
        body: endpoints('spin-gate', [{ ip: '10.0.2.1', pod: 'gate-0' }], [], [{ name: 'http', port: 8084 }]),
      });
      await core.createNamespacedEndpoints({
        namespace: NS,
        body: endpoints('spin-clouddriver-metrics', [{ ip: '10.0.3.1', pod: 'm-0' }], [], [{ name: 'metrics', port: 9090 }]),
      });
      await expect([
        '10.0.0.2 http://10.0.0.2:7002 ready',
        'clouddriver-0 http://10.0.0.1:7002 ready',
        'clouddriver-2 http://10.0.0.3:7002 not-ready',
        'ro-0 http://10.0.1.1:7003 ready',
      ]);
      const one = await fetch(`${gw.httpUrl}/armory/clouddrivers/clouddriver-2`);
      assert.equal(one.status, 200);
      assert.equal(((await one.json()) as Instance).baseUrl, 'http://10.0.0.3:7002');
      assert.equal((await fetch(`${gw.httpUrl}/armory/clouddrivers/gate-0`)).status, 404);

      // Readiness: clouddriver-0 fails its probe, clouddriver-2 passes.
      await core.replaceNamespacedEndpoints({
        name: 'spin-clouddriver',
        namespace: NS,
        body: endpoints(
          'spin-clouddriver',
          [{ ip: '10.0.0.2' }, { ip: '10.0.0.3', pod: 'clouddriver-2' }],
          [{ ip: '10.0.0.1', pod: 'clouddriver-0' }],
          http,
        ),
      });
      await expect([
        '10.0.0.2 http://10.0.0.2:7002 ready',
        'clouddriver-0 http://10.0.0.1:7002 not-ready',
        'clouddriver-2 http://10.0.0.3:7002 ready',
        'ro-0 http://10.0.1.1:7003 ready',
      ]);

      // Removals.
      await core.deleteNamespacedEndpoints({ name: 'spin-clouddriver-ro', namespace: NS });
      await expect([
        '10.0.0.2 http://10.0.0.2:7002 ready',
        'clouddriver-0 http://10.0.0.1:7002 not-ready',
        'clouddriver-2 http://10.0.0.3:7002 ready',
      ]);
      await core.deleteNamespacedEndpoints({ name: 'spin-clouddriver', namespace: NS });
      await expect([]);
    } finally {
      await gw.close();
      for (const name of ['spin-clouddriver', 'spin-clouddriver-ro', 'spin-gate', 'spin-clouddriver-metrics'])
        sb.store.remove('v1', 'Endpoints', NS, name);
    }
  });

  test('a custom prefix and port name; the directory notifies subscribers on changes', { timeout: 120_000 }, async () => {
    const directory = createEndpointsDirectory({
      config: { namespace: NS, endpointsPrefix: 'outpost-gw', portName: 'web', kubeconfigFile, context: 'sandbox' },
      scheme: 'https',
      logger: createSilentLogger(),
    });
    const changes: string[] = [];
    directory.subscribe((list) => changes.push(list.map((r) => `${r.id}:${r.ready}`).join()));
    await directory.start();
    try {
      sb.store.create(endpoints('outpost-gw', [{ ip: 'fd00::5', pod: 'gw-5' }], [], [{ name: 'web', port: 8443 }]));
      sb.store.create(endpoints('spin-clouddriver', [{ ip: '10.0.0.1', pod: 'clouddriver-0' }], [], [{ name: 'http', port: 7002 }]));
      await eventually('gw-5 listed', async () => directory.get('gw-5') !== undefined, { timeoutMs: 30_000 });
      assert.deepEqual(
        directory.list().map((r) => [r.id, r.baseUrl, r.ready]),
        [['gw-5', 'https://[fd00::5]:8443', true]],
      );
      sb.store.remove('v1', 'Endpoints', NS, 'outpost-gw');
      await eventually('an empty listing', async () => directory.list().length === 0, { timeoutMs: 30_000 });
      assert.deepEqual(changes, ['gw-5:true', '']);
    } finally {
      await directory.close();
      sb.store.remove('v1', 'Endpoints', NS, 'spin-clouddriver');
    }
  });

  test('the list keeps following after dropped watches, failed re-watches and expired history', { timeout: 120_000 }, async () => {
    const directory = createEndpointsDirectory({
      config: { namespace: NS, endpointsPrefix: 'spin-clouddriver', portName: 'http', kubeconfigFile, context: 'sandbox' },
      scheme: 'http',
      logger: createSilentLogger(),
    });
    const ids = () =>
      directory
        .list()
        .map((r) => `${r.id}:${r.ready}`)
        .join();
    await directory.start();
    try {
      sb.store.create(endpoints('spin-clouddriver', [{ ip: '10.0.0.1', pod: 'c-0' }], [], [{ name: 'http', port: 7002 }]));
      await eventually('c-0 listed ready', async () => ids() === 'c-0:true', { timeoutMs: 30_000 });

      // The watch ends and the next two re-watches fail with 500: the informer errors, the directory restarts it.
      sb.faults.failNextWatches(2, 500);
      sb.faults.closeWatches();
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(ids(), 'c-0:true', 'the last known list stays while the watch is down');
      sb.store.update(endpoints('spin-clouddriver', [], [{ ip: '10.0.0.1', pod: 'c-0' }], [{ name: 'http', port: 7002 }]));
      await eventually('c-0 listed not ready', async () => ids() === 'c-0:false', { timeoutMs: 30_000 });

      // History expires while an object is removed and another added: the re-list sees both.
      sb.faults.expireHistory();
      sb.store.remove('v1', 'Endpoints', NS, 'spin-clouddriver');
      sb.store.create(endpoints('spin-clouddriver-2', [{ ip: '10.0.0.9', pod: 'c-9' }], [], [{ name: 'http', port: 7002 }]));
      await eventually('only c-9 listed, ready', async () => ids() === 'c-9:true', { timeoutMs: 30_000 });
    } finally {
      await directory.close();
      sb.store.remove('v1', 'Endpoints', NS, 'spin-clouddriver');
      sb.store.remove('v1', 'Endpoints', NS, 'spin-clouddriver-2');
    }
  });

  test('kubernetes mode outside a pod without a kubeconfig refuses to start, saying what to set', { timeout: 120_000 }, async () => {
    const config = loadGatewayConfig({
      env: {},
      overrides: {
        id: 'gw-k',
        host: '127.0.0.1',
        httpPort: 0,
        grpcPort: 0,
        database: 'memory://',
        insecure: true,
        replicas: { discovery: 'kubernetes' },
      },
    });
    const saved = process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      await assert.rejects(startGateway(config, { logger: createSilentLogger() }), /replicas\.kubeconfigFile/);
    } finally {
      if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
    }
    assert.throws(
      () =>
        createEndpointsDirectory({
          config: { endpointsPrefix: 'x', portName: 'http', kubeconfigFile, context: 'nope' },
          scheme: 'http',
          logger: createSilentLogger(),
        }),
      /context "nope" not found/,
    );
  });
});
