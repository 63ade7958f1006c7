/**
 * Scenario — operations round trip: sandbox + gateway (Postgres) + agent as child processes; a client in this process
 * submits cheap operations with `wait: true` at concurrency 1, 10 and 100. Per operation, the client-observed round
 * trip minus the agent's `kubernetes_duration` is Outpost's overhead. Two kinds, two scenarios:
 * - `operations`: an empty merge patch of a ConfigMap, a stored operation (HTTP to the gateway, insert, dispatch down
 *   the agent stream, result back, the terminal update). Results files from before reads stopped being stored measured
 *   `get` here, when a get was stored too: their rows keep the name "operations (get)".
 * - `reads`: a `get`, which the gateway runs in memory and never stores (src/gateway/operations/read-runner.ts).
 * The concurrency-100 phase gives the maximum rate one gateway replica sustains. Baseline in the same run: after each
 * level, a `get` of the same ConfigMap straight to the sandbox by a bare @kubernetes/client-node client at the same
 * concurrency for the same seconds — the ceiling this machine allows for a request of the cluster.
 */
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { figureRow, type Row } from '../rows.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOperationClient, type OperationClient } from '../../src/client/operation-client.js';
import { fromProtoDuration } from '../../src/client/duration.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { summarize } from '../machine.js';
import { startGatewayAndAgent, startOutpost, type Child } from '../processes.js';
import { eventually, StopWaiting } from '../../testkit/eventually.js';

/** Parameters of one run. */
export interface OperationsParams {
  postgresUrl: string;
  /** Concurrency levels, each measured for `seconds` (the last one also gives the maximum rate). */
  concurrency: number[];
  seconds: number;
  /** Unmeasured operations per level before measuring (connections, JIT, prepared statements). */
  warmupSeconds: number;
  /** `patch`: a stored operation (the `operations` scenario); `get`: a read, never stored (the `reads` scenario). */
  spec: OperationKind;
}

/** What the scenario submits. */
type OperationKind = 'patch' | 'get';

/** Figures of one concurrency level (milliseconds). */
interface OperationsLevel {
  concurrency: number;
  operations: number;
  failed: number;
  seconds: number;
  operationsPerSecond: number;
  roundTrip: ReturnType<typeof summarize>;
  kubernetes: ReturnType<typeof summarize>;
  overhead: ReturnType<typeof summarize>;
  /** The same gets straight to the sandbox (bare client-node), same concurrency and seconds, right after (absent in
   * results files from before the baseline existed). */
  direct: { operations: number; operationsPerSecond: number; roundTrip: ReturnType<typeof summarize> };
}

/** Figures of the scenario. */
export interface OperationsResult {
  /** What was submitted; absent in results files from before the split (stored gets). */
  spec?: OperationKind;
  levels: OperationsLevel[];
  maxOperationsPerSecond: number;
  gatewayPeakRssMiB: number;
  agentPeakRssMiB: number;
}

const TARGET = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: 'web-config' };
const SPECS = {
  get: { case: 'get' as const, value: TARGET },
  // Changes nothing, so every run sees the same ConfigMap; still a stored operation.
  patch: { case: 'patch' as const, value: { ...TARGET, type: PatchType.MERGE, patch: '{}' } },
};

/** Waits (testkit's `eventually`, up to 60 s) until `account` is registered by an agent; ends at once when a child exited. */
async function waitForAccount(httpUrl: string, account: string, children: Child[]): Promise<void> {
  const registered = async () => {
    const res = await fetch(`${httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: account }),
    }).catch(() => undefined);
    const body = res?.ok ? ((await res.json()) as { accounts?: { name: string; agentId?: string }[] }) : {};
    if ((body.accounts ?? []).some((a) => a.name === account && a.agentId)) return true;
    for (const child of children) {
      if (child.process.exitCode !== null) throw new StopWaiting(`a child process exited early: ${child.output().slice(-3000)}`);
    }
    return false;
  };
  await eventually(`account ${account} registered`, registered, { timeoutMs: 60_000, intervalMs: 100 });
}

/** Runs `concurrency` workers for `seconds`; returns per-operation samples. */
async function runLevel(client: OperationClient, kind: OperationKind, concurrency: number, seconds: number, record: boolean) {
  const roundTrips: number[] = [];
  const kube: number[] = [];
  const overheads: number[] = [];
  let failed = 0;
  let firstError = '';
  const started = performance.now();
  const until = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      try {
        const op = await client.submitAndWait({ account: 'bench', timeout: { seconds: 30n }, spec: SPECS[kind] });
        const rtt = performance.now() - t0;
        if (op.state !== OperationState.SUCCEEDED || !op.result?.success) {
          failed++;
          firstError ||= `${OperationState[op.state]} ${op.error || op.result?.message || ''}`;
          continue;
        }
        if (!record) continue;
        const k = fromProtoDuration(op.result.kubernetesDuration);
        roundTrips.push(rtt);
        kube.push(k);
        overheads.push(rtt - k);
      } catch (err) {
        failed++;
        firstError ||= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  return { roundTrips, kube, overheads, failed, firstError, elapsed };
}

/** Runs `concurrency` bare client-node workers getting the ConfigMap straight from the sandbox for `seconds`. */
async function runDirect(core: CoreV1Api, concurrency: number, seconds: number) {
  const roundTrips: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  const worker = async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      await core.readNamespacedConfigMap({ name: TARGET.name, namespace: TARGET.namespace });
      roundTrips.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { roundTrips, elapsed: (performance.now() - started) / 1000 };
}

/** Runs the scenario once with fresh processes and a fresh database. */
export async function runOperations(params: OperationsParams): Promise<OperationsResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-ops-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const children: Child[] = [];
  try {
    children.push(
      await startOutpost(['sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig, '--seed', 'demo'], /127\.0\.0\.1:\d+/),
    );
    const { httpUrl, gateway, agent } = await startGatewayAndAgent({ dir, kubeconfig, databaseUrl: database.url, children });
    await waitForAccount(httpUrl, 'bench', children);
    // Binary protobuf over Connect/HTTP 1.1: what a program (not a shell) would use.
    const client = createOperationClient({ gatewayUrl: httpUrl, binary: true });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const core = kc.makeApiClient(CoreV1Api);

    const sampler = setInterval(() => {
      gateway.sampleRss();
      agent.sampleRss();
    }, 250);
    const levels: OperationsLevel[] = [];
    try {
      for (const concurrency of params.concurrency) {
        await runLevel(client, params.spec, concurrency, params.warmupSeconds, false);
        const r = await runLevel(client, params.spec, concurrency, params.seconds, true);
        if (r.roundTrips.length === 0) throw new Error(`no operation succeeded at concurrency ${concurrency}: ${r.firstError}`);
        await runDirect(core, concurrency, params.warmupSeconds);
        const d = await runDirect(core, concurrency, params.seconds);
        const level: OperationsLevel = {
          concurrency,
          operations: r.roundTrips.length,
          failed: r.failed,
          seconds: r.elapsed,
          operationsPerSecond: r.roundTrips.length / r.elapsed,
          roundTrip: summarize(r.roundTrips),
          kubernetes: summarize(r.kube),
          overhead: summarize(r.overheads),
          direct: {
            operations: d.roundTrips.length,
            operationsPerSecond: d.roundTrips.length / d.elapsed,
            roundTrip: summarize(d.roundTrips),
          },
        };
        if (r.failed > 0) console.log(`operations: ${r.failed} failed at concurrency ${concurrency}, first: ${r.firstError}`);
        console.log(
          `operations c=${concurrency}: ${level.operationsPerSecond.toFixed(0)} ops/s, overhead p50 ${level.overhead.p50.toFixed(2)} ms p99 ${level.overhead.p99.toFixed(2)} ms; direct ${level.direct.operationsPerSecond.toFixed(0)} gets/s, p50 ${level.direct.roundTrip.p50.toFixed(2)} ms p99 ${level.direct.roundTrip.p99.toFixed(2)} ms`,
        );
        levels.push(level);
      }
    } finally {
      clearInterval(sampler);
    }
    return {
      spec: params.spec,
      levels,
      maxOperationsPerSecond: Math.max(...levels.map((l) => l.operationsPerSecond)),
      gatewayPeakRssMiB: gateway.peakRss() / 2 ** 20,
      agentPeakRssMiB: agent.peakRss() / 2 ** 20,
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The name of the rows: what was submitted, and whether it was stored. */
function scenarioName(spec: OperationKind | undefined): string {
  if (spec === 'patch') return 'operations (merge patch, stored)';
  if (spec === 'get') return 'reads (get, never stored)';
  return 'operations (get)';
}

/** The p99 overhead target of each concurrency level (ms): the second pass. */
const P99_TARGET_MS: Record<number, number> = { 1: 10, 10: 25, 100: 100 };

/**
 * Table rows of the operations runs: overhead percentiles and rate per concurrency level, the same gets straight to
 * the sandbox (bare client-node, the baseline) with ours / direct ratios, and the maximum rate.
 */
export function operationsRows(runs: OperationsResult[]): Row[] {
  const levels = runs[0]?.levels.map((l) => l.concurrency) ?? [];
  const at = (c: number) => runs.map((r) => r.levels.find((l) => l.concurrency === c)!);
  const name = scenarioName(runs[0]?.spec);
  // The targets are the stored path's (set when a get was stored); reads have none of their own.
  const targets = runs[0]?.spec === 'get' ? {} : P99_TARGET_MS;
  return [
    ...levels.flatMap((c) => {
      const s = `${name} c=${c}`;
      const target = targets[c];
      return [
        figureRow(
          s,
          'overhead = round trip − kubernetes_duration, p50 ms',
          at(c).map((l) => l.overhead.p50),
          { digits: 2 },
        ),
        figureRow(
          s,
          'overhead, p99 ms',
          at(c).map((l) => l.overhead.p99),
          target === undefined ? { digits: 2 } : { digits: 2, target: `p99 ≤ ${target} ms`, meets: (m) => m <= target },
        ),
        figureRow(
          s,
          'operations/s',
          at(c).map((l) => l.operationsPerSecond),
          { digits: 0 },
        ),
        // Results files from before the baseline existed have no `direct`: their rows end here.
        ...(at(c).every((l) => l.direct) ? directRows(s, at(c)) : []),
      ];
    }),
    figureRow(
      name,
      'maximum operations/s, one gateway replica',
      runs.map((r) => r.maxOperationsPerSecond),
      { digits: 0, target: '≥ 1000/s', meets: (m) => m >= 1000 },
    ),
  ];
}

/** The rows of the bare client-node baseline at one concurrency level, beside ours. */
function directRows(s: string, levels: OperationsLevel[]): Row[] {
  return [
    figureRow(
      s,
      'bare client-node get straight to the sandbox (baseline), gets/s',
      levels.map((l) => l.direct.operationsPerSecond),
      { digits: 0 },
    ),
    figureRow(
      s,
      'bare client-node get (baseline), round trip p50 ms',
      levels.map((l) => l.direct.roundTrip.p50),
      { digits: 2 },
    ),
    figureRow(
      s,
      'ours / direct, operations/s ratio',
      levels.map((l) => l.operationsPerSecond / l.direct.operationsPerSecond),
      { digits: 2 },
    ),
    figureRow(
      s,
      'ours / direct, round trip p50 ratio',
      levels.map((l) => l.roundTrip.p50 / l.direct.roundTrip.p50),
      { digits: 1 },
    ),
  ];
}
