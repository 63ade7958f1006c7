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
import { startGatewayAndAgent, startJsonChild, type Child } from '../processes.js';
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
    /** Through two bare relay processes (baseline: the process hops without Outpost). */
    relay: Summary;
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
const SIDES: readonly Side[] = ['direct', 'relay', 'gateway'];

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

/** The sides a request can take: straight to the cluster, through two bare relay processes, through the gateway. */
export type Side = 'direct' | 'relay' | 'gateway';

/**
 * Runs `measure(side)` for each of `sides` `rounds` times, in forward order on even rounds and backward on odd ones
 * (ABBA), so drift hits every side alike; returns each side's samples after `warmup` rounds.
 */
export async function interleave<S extends string>(
  sides: readonly S[],
  warmup: number,
  rounds: number,
  measure: (side: S) => Promise<number>,
): Promise<Record<S, number[]>> {
  const out = Object.fromEntries(sides.map((side) => [side, [] as number[]])) as Record<S, number[]>;
  for (let i = 0; i < warmup + rounds; i++) {
    const order = i % 2 === 0 ? sides : [...sides].reverse();
    const round = new Map<S, number>();
    for (const side of order) round.set(side, await measure(side));
    if (i >= warmup) for (const side of sides) out[side].push(round.get(side)!);
  }
  return out;
}

/** Starts two relay-proxy processes in a row in front of `target`; the first one's URL is the relay side's base. */
async function startRelays(target: string, caFile: string, children: { stop(): Promise<void> }[]): Promise<string> {
  let next = target;
  for (let i = 0; i < 2; i++) {
    const relay = startJsonChild('./baselines/relay-proxy.ts', ['--target', next, '--ca', caFile]);
    children.push(relay);
    const { port } = (await relay.waitFor('listening', 60_000)) as { port: number };
    next = `http://127.0.0.1:${port}`;
  }
  return next;
}

/** Runs the scenario once with fresh processes and database. */
export async function runKubeProxy(params: KubeProxyParams): Promise<KubeProxyResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-kube-proxy-'));
  const sandbox = await startSandbox({ seed: 'demo', tls: true, logger: createSilentLogger() });
  const children: { stop(): Promise<void> }[] = [];
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
      children: children as Child[],
      agentId: 'bench-kube-proxy',
      accountYaml: ['      namespaces: [kbench-idle]', '      kinds: [ConfigMap]'],
    });
    const direct: KubeTarget = {
      base: sandbox.url,
      headers: { authorization: `Bearer ${sandbox.adminToken}`, 'impersonate-user': USER },
      ca: sandbox.caPem,
    };
    const gateway: KubeTarget = { base: `${httpUrl}/k8s/${ACCOUNT}`, headers: {} };
    const caFile = join(dir, 'sandbox-ca.pem');
    writeFileSync(caFile, sandbox.caPem!);
    const relay: KubeTarget = { base: await startRelays(sandbox.url, caFile, children), headers: direct.headers };
    const targets = { direct, relay, gateway };
    await waitReady(gateway);

    // 1a. The request of `kubectl get pods -n demo`, without the process.
    const clients = { direct: keepAliveClient(direct), relay: keepAliveClient(relay), gateway: keepAliveClient(gateway) };
    let gets: Record<Side, number[]>;
    try {
      gets = await interleave(SIDES, params.warmup, params.requests, (side) => clients[side].get(PATH));
    } finally {
      for (const client of Object.values(clients)) client.close();
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
      const runs = await interleave(['direct', 'gateway'] as const, params.kubectlWarmup, params.kubectlRuns, (side) =>
        timeProcess(bin, [...args[side], 'get', 'pods', '-n', 'demo']),
      );
      kubectl = { bin, version: kubectlVersion(bin), direct: summarize(runs.direct), gateway: summarize(runs.gateway) };
    }

    // 2. Watch change latency.
    const watch = await measureWatches({
      store: sandbox.store,
      namespace: WATCH_NAMESPACE,
      targets,
      changes: params.watchChanges,
      spacingMs: params.watchSpacingMs,
    });
    return {
      path: PATH,
      get: {
        direct: d,
        relay: summarize(gets.relay),
        gateway: g,
        overhead: { p50: g.p50 - d.p50, p90: g.p90 - d.p90, p99: g.p99 - d.p99 },
        paired: summarize(gets.gateway.map((ms, i) => ms - gets.direct[i]!)),
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
