/**
 * Scenario 2 — steady churn: C changes per second for D seconds in the sandbox; for every change, the time until the
 * gateway has committed it (the scope's resume resourceVersion in Postgres reaches the change's resourceVersion —
 * written in the same transaction as the row). Baseline in the same run: a bare client-node Watch on the same
 * sandbox receiving the same changes (the floor any watcher pays).
 */
import { figureRow, type Row } from '../rows.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Watch } from '@kubernetes/client-node';
import postgres from 'postgres';
import { startSandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { summarize } from '../machine.js';
import { startGatewayAndAgent, streamTransports, type BenchTransport, type Child } from '../processes.js';

/** Parameters of one churn run. */
export interface ChurnParams {
  changesPerSecond: number;
  seconds: number;
  postgresUrl: string;
  /** How the agent's stream reaches the gateway; the agent's default (auto: gRPC here) when absent. */
  transport?: BenchTransport;
}

/** Latencies in milliseconds. */
export interface ChurnResult {
  changes: number;
  /** The transport of the agent's stream as the gateway recorded it. */
  transport: string;
  cache: ReturnType<typeof summarize>;
  informer: ReturnType<typeof summarize>;
}

/** Runs the scenario once with fresh processes and database. */
export async function runChurn(params: ChurnParams): Promise<ChurnResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-churn-'));
  const sandbox = await startSandbox({ seed: 'none', logger: createSilentLogger(), historyWindow: 1_000_000 });
  const kubeconfig = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'churn' } });
  const children: Child[] = [];
  const sql = postgres(database.url, { max: 1, onnotice: () => {} });
  let stopWatch: (() => void) | undefined;
  try {
    const { httpUrl } = await startGatewayAndAgent({
      dir,
      kubeconfig,
      databaseUrl: database.url,
      children,
      agentId: 'bench-churn',
      accountYaml: ['      namespaces: [churn]', '      kinds: [ConfigMap]'],
      transport: params.transport,
    });
    // Wait until the agent has listed and watches the (empty) namespace.
    for (let i = 0; ; i++) {
      const rows = await sql`select 1 from watch_states where account = 'bench' and kind = 'ConfigMap' and synced`;
      if (rows.length > 0) break;
      if (i > 600) throw new Error('agent never synced');
      await sleep(100);
    }
    const [transport = 'none'] = await streamTransports(httpUrl);
    if (params.transport && transport !== params.transport) throw new Error(`the agent streams over ${transport}, not ${params.transport}`);

    // Baseline watcher.
    const informerSeen = new Map<string, number>();
    const watch = new Watch(sandbox.kubeConfig('admin'));
    const req = await watch.watch(
      '/api/v1/namespaces/churn/configmaps',
      { resourceVersion: String(sandbox.store.resourceVersion) },
      (_type, obj: { metadata: { name: string } }) => informerSeen.set(obj.metadata.name, performance.now()),
      () => {},
    );
    stopWatch = () => req.abort();

    const created: { name: string; rv: number; at: number }[] = [];
    const cacheSeen = new Map<number, number>();
    let polling = true;
    const poller = (async () => {
      let last = 0;
      while (polling) {
        const [row] = await sql<{ rv: string }[]>`
          select resource_version as rv from watch_states where account = 'bench' and kind = 'ConfigMap' and watch_namespace = 'churn'`;
        const rv = Number(row?.rv ?? 0);
        if (rv > last) {
          const now = performance.now();
          for (const c of created) if (c.rv > last && c.rv <= rv && !cacheSeen.has(c.rv)) cacheSeen.set(c.rv, now);
          last = rv;
        }
        await sleep(2);
      }
    })();

    const total = params.changesPerSecond * params.seconds;
    const tickMs = 10;
    const perTick = params.changesPerSecond / (1000 / tickMs);
    const started = performance.now();
    let n = 0;
    while (n < total) {
      const due = Math.min(total, Math.floor(((performance.now() - started) / tickMs) * perTick));
      for (; n < due; n++) {
        const obj = sandbox.store.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: `c-${n}`, namespace: 'churn' },
          data: { n: String(n) },
        });
        created.push({ name: `c-${n}`, rv: Number(obj.metadata.resourceVersion), at: performance.now() });
      }
      await sleep(tickMs / 2);
    }
    const deadline = performance.now() + 30_000;
    while ((cacheSeen.size < created.length || informerSeen.size < created.length) && performance.now() < deadline) await sleep(20);
    polling = false;
    await poller;
    const cache = created.map((c) => (cacheSeen.get(c.rv) ?? Infinity) - c.at);
    const informer = created.map((c) => (informerSeen.get(c.name) ?? Infinity) - c.at);
    return { changes: created.length, transport, cache: summarize(cache), informer: summarize(informer) };
  } finally {
    stopWatch?.();
    await sql.end({ timeout: 5 });
    for (const child of children.reverse()) await child.stop();
    await sandbox.close();
    await database.drop();
  }
}

/** Table rows of the churn runs (each run's percentiles; the row shows their median over the runs). */
export function churnRows(runs: ChurnResult[], params: { changesPerSecond: number; seconds: number }): Row[] {
  const s = `churn ${params.changesPerSecond}/s × ${params.seconds} s`;
  return [
    figureRow(
      s,
      'change → committed row, p50 ms',
      runs.map((r) => r.cache.p50),
    ),
    figureRow(
      s,
      'change → committed row, p99 ms',
      runs.map((r) => r.cache.p99),
      { target: 'p99 ≤ 20 ms', meets: (m) => m <= 20 },
    ),
    figureRow(
      s,
      'change → committed row, max ms',
      runs.map((r) => r.cache.max),
    ),
    figureRow(
      s,
      'bare client-node watch (baseline), p50 ms',
      runs.map((r) => r.informer.p50),
    ),
    figureRow(
      s,
      'bare client-node watch (baseline), p99 ms',
      runs.map((r) => r.informer.p99),
    ),
  ];
}
