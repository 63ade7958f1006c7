/**
 * Scenario — kubectl through the gateway against kubectl straight to the cluster, side by side in one run on the same
 * sandbox (TLS, in this process): a gateway (insecure, its caller impersonated as `outpost:anonymous`) and an agent
 * whose account points at the sandbox. Each side sends the same requests as the same Kubernetes user — the direct
 * side with the sandbox's admin token and `Impersonate-User: outpost:anonymous`, as the agent does — so the sandbox
 * does the same work for both, and the difference is the proxy path (gateway → agent stream → agent → sandbox).
 *
 * 1. `kubectl get` latency: `GET /api/v1/namespaces/demo/pods` (Accept: application/json) on one kept-alive
 *    HTTP/1.1 connection per side, alternated ABBA; then real `kubectl get pods -n demo` processes, alternated too.
 * 2. Watch latency: a `?watch=1` on ConfigMaps of one namespace through each side, open at once; the scenario
 *    updates a ConfigMap in the sandbox's store N times, spaced, and times write → event on each watch.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { findKubectl, keepAliveClient, kubectlVersion, timeProcess, type KubeTarget } from '../kube-clients.js';
import { summarize } from '../machine.js';
import { startGatewayAndAgent, type Child } from '../processes.js';
import { measureWatches, type WatchResult } from './kube-proxy-watch.js';

/** Parameters of one run. */
export interface KubeProxyParams {
  postgresUrl: string;
  /** Measured GETs per side, and unmeasured ones first (connections, JIT). */
  requests: number;
  warmup: number;
  /** Measured `kubectl get` processes per side, and unmeasured ones first (kubectl's discovery cache). */
  kubectlRuns: number;
  kubectlWarmup: number;
  /** ConfigMap updates the two watches receive, and the pause between them. */
  watchChanges: number;
  watchSpacingMs: number;
}

type Summary = ReturnType<typeof summarize>;

/** Figures of one run (milliseconds). */
export interface KubeProxyResult {
  /** The GET each side sent. */
  path: string;
  get: {
    direct: Summary;
    gateway: Summary;
    /** gateway − direct, percentile by percentile. */
    overhead: { p50: number; p90: number; p99: number };
    /** gateway − direct within each round (the two GETs sent back to back). */
    paired: Summary;
  };
  /** Absent when no kubectl binary was found. */
  kubectl?: { bin: string; version: string; direct: Summary; gateway: Summary };
  watch: WatchResult;
}

const ACCOUNT = 'bench';
const USER = 'outpost:anonymous';
const PATH = '/api/v1/namespaces/demo/pods';
const WATCH_NAMESPACE = 'kbench';

/** RBAC for the impersonated user: read pods, read and watch ConfigMaps, anywhere. */
function grantReader(store: Awaited<ReturnType<typeof startSandbox>>['store']): void {
  store.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'kbench-reader' },
    rules: [{ apiGroups: [''], resources: ['pods', 'configmaps'], verbs: ['get', 'list', 'watch'] }],
  });
  store.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'kbench-reader' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'kbench-reader' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
  });
}

/** A kubeconfig for the gateway's /k8s/ACCOUNT over plain http (no credentials: the insecure gateway admits it). */
function gatewayKubeconfig(path: string, server: string): void {
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      `clusters: [{name: outpost, cluster: {server: "${server}"}}]`,
      'users: [{name: caller, user: {}}]',
      'contexts: [{name: outpost, context: {cluster: outpost, user: caller}}]',
      'current-context: outpost',
      '',
    ].join('\n'),
  );
}

/** Waits until a GET through the gateway succeeds (the agent's stream is up and serves the account). */
async function waitReady(gateway: KubeTarget): Promise<void> {
  const client = keepAliveClient(gateway);
  const deadline = Date.now() + 90_000;
  try {
    for (;;) {
      try {
        await client.get(PATH);
        return;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`the gateway never served ${PATH}: ${(err as Error).message}`);
        await sleep(200);
      }
    }
  } finally {
    client.close();
  }
}

/** Runs `measure(side)` for both sides `rounds` times in ABBA order; returns the measured samples (after `warmup`). */
export async function interleave(
  warmup: number,
  rounds: number,
  measure: (side: 'direct' | 'gateway') => Promise<number>,
): Promise<{ direct: number[]; gateway: number[]; paired: number[] }> {
  const out = { direct: [] as number[], gateway: [] as number[], paired: [] as number[] };
  for (let i = 0; i < warmup + rounds; i++) {
    const order = i % 2 === 0 ? (['direct', 'gateway'] as const) : (['gateway', 'direct'] as const);
    const round: Record<string, number> = {};
    for (const side of order) round[side] = await measure(side);
    if (i < warmup) continue;
    out.direct.push(round.direct!);
    out.gateway.push(round.gateway!);
    out.paired.push(round.gateway! - round.direct!);
  }
  return out;
}

/** Runs the scenario once with fresh processes and database. */
export async function runKubeProxy(params: KubeProxyParams): Promise<KubeProxyResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-kube-proxy-'));
  const sandbox = await startSandbox({ seed: 'demo', tls: true, logger: createSilentLogger() });
  const children: Child[] = [];
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    grantReader(sandbox.store);
    for (const name of [WATCH_NAMESPACE, 'kbench-idle']) sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    // The agent caches one empty namespace only: its own watches add no traffic to what is measured.
    const { httpUrl } = await startGatewayAndAgent({
      dir,
      kubeconfig,
      databaseUrl: database.url,
      children,
      agentId: 'bench-kube-proxy',
      accountYaml: ['      namespaces: [kbench-idle]', '      kinds: [ConfigMap]'],
    });
    const direct: KubeTarget = {
      base: sandbox.url,
      headers: { authorization: `Bearer ${sandbox.adminToken}`, 'impersonate-user': USER },
      ca: sandbox.caPem,
    };
    const gateway: KubeTarget = { base: `${httpUrl}/k8s/${ACCOUNT}`, headers: {} };
    await waitReady(gateway);

    // 1a. The request of `kubectl get pods -n demo`, without the process.
    const clients = { direct: keepAliveClient(direct), gateway: keepAliveClient(gateway) };
    let gets: Awaited<ReturnType<typeof interleave>>;
    try {
      gets = await interleave(params.warmup, params.requests, (side) => clients[side].get(PATH));
    } finally {
      clients.direct.close();
      clients.gateway.close();
    }
    const d = summarize(gets.direct);
    const g = summarize(gets.gateway);

    // 1b. Real kubectl processes, each with its own discovery cache.
    let kubectl: KubeProxyResult['kubectl'];
    const bin = findKubectl();
    if (bin) {
      const gatewayConfig = join(dir, 'gateway-kubeconfig');
      gatewayKubeconfig(gatewayConfig, gateway.base);
      const args = {
        direct: ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache-direct'), '--as', USER],
        gateway: ['--kubeconfig', gatewayConfig, '--cache-dir', join(dir, 'cache-gateway')],
      };
      const runs = await interleave(params.kubectlWarmup, params.kubectlRuns, (side) =>
        timeProcess(bin, [...args[side], 'get', 'pods', '-n', 'demo']),
      );
      kubectl = { bin, version: kubectlVersion(bin), direct: summarize(runs.direct), gateway: summarize(runs.gateway) };
    }

    // 2. Watch change latency.
    const watch = await measureWatches({
      store: sandbox.store,
      namespace: WATCH_NAMESPACE,
      direct,
      gateway,
      changes: params.watchChanges,
      spacingMs: params.watchSpacingMs,
    });
    return {
      path: PATH,
      get: {
        direct: d,
        gateway: g,
        overhead: { p50: g.p50 - d.p50, p90: g.p90 - d.p90, p99: g.p99 - d.p99 },
        paired: summarize(gets.paired),
      },
      ...(kubectl ? { kubectl } : {}),
      watch,
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await sandbox.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}
