/**
 * Scenario 5 — agent footprint: the agent's memory per account and per watched object, each the growth between two
 * agent processes that differ only in that dimension, read once they are ready (every kind listed once) and settled:
 * - per account: K accounts vs one account, every kind, on a sandbox seeded with the demo workloads;
 * - per object: one account watching ConfigMaps on a sandbox holding N of them vs one holding the demo's few.
 * Baseline in the same run: a bare client-node caching informer on the same ConfigMaps (bench/baselines/informer.ts),
 * which keeps every whole object. RSS is what users see (the reference reports 35–45 MB per account); the V8 heap used
 * (from the agent's own metrics) is given next to it, being less sensitive to when the collector last ran.
 */
import { figureRow, type Row } from '../rows.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '../../testkit/databases.js';
import {
  readMemory,
  scrapeMetric,
  startAgent,
  startGateway,
  startJsonChild,
  startOutpost,
  type BenchAccount,
  type BenchGateway,
  type Child,
} from '../processes.js';

/** Parameters of one run. */
export interface AgentFootprintParams {
  postgresUrl: string;
  /** Accounts of the many-accounts agent. */
  accounts: number;
  /** ConfigMaps of the big sandbox. */
  objects: number;
  /** Wait after readiness before reading memory. */
  settleSeconds: number;
  /** Memory readings (200 ms apart) whose median is taken. */
  samples: number;
}

/** Memory of one process once ready (MiB), and how long it took to get ready (s). */
interface ProcessMemory {
  rssMiB: number;
  heapMiB: number;
  readySeconds: number;
}

/** Figures of the scenario. */
export interface AgentFootprintResult {
  accounts: number;
  objects: number;
  oneAccount: ProcessMemory;
  manyAccounts: ProcessMemory;
  /** (many − one) / (accounts − 1), MiB. */
  rssMiBPerAccount: number;
  heapMiBPerAccount: number;
  /** The many-accounts agent's whole RSS / accounts, MiB (how the reference's figure is computed). */
  totalRssMiBPerAccount: number;
  fewObjects: ProcessMemory;
  manyObjects: ProcessMemory;
  /** (many − few) / objects, bytes. */
  rssBytesPerObject: number;
  heapBytesPerObject: number;
  informerFew: ProcessMemory;
  informerMany: ProcessMemory;
  informerRssBytesPerObject: number;
  /** ours / informer, RSS per object. */
  ratioToInformer: number;
}

const MiB = 2 ** 20;

/** Starts an agent for `accounts`, waits for its readiness (/health 200), reads its memory, stops it. */
async function measureAgent(
  dir: string,
  gateway: BenchGateway,
  agentId: string,
  accounts: BenchAccount[],
  { settleSeconds, samples }: AgentFootprintParams,
): Promise<ProcessMemory> {
  const agent = await startAgent({ dir, grpcPort: gateway.grpcPort, agentId, accounts });
  try {
    const deadline = Date.now() + 600_000;
    for (;;) {
      const res = await fetch(`${agent.adminUrl}/health`).catch(() => undefined);
      if (res?.status === 200) break;
      if (agent.child.process.exitCode !== null) throw new Error(`agent ${agentId} exited: ${agent.child.output().slice(-3000)}`);
      if (Date.now() > deadline) throw new Error(`agent ${agentId} not ready after 600 s: ${res ? await res.text() : 'no answer'}`);
      await sleep(200);
    }
    const readySeconds = (performance.now() - agent.startedAt) / 1000;
    await sleep(settleSeconds * 1000);
    const m = await readMemory(agent.child.process.pid, samples, () =>
      scrapeMetric(agent.metricsUrl, 'outpost_agent_nodejs_heap_size_used_bytes'),
    );
    return { rssMiB: m.rss / MiB, heapMiB: m.heap / MiB, readySeconds };
  } finally {
    await agent.child.stop();
  }
}

/** Runs the bare informer on `kubeconfig`, reads its memory once it has listed, stops it. */
async function measureInformer(kubeconfig: string, { settleSeconds, samples }: AgentFootprintParams): Promise<ProcessMemory> {
  const informer = startJsonChild('./baselines/informer.ts', ['--kubeconfig', kubeconfig]);
  try {
    const ready = await informer.waitFor('ready');
    await sleep(settleSeconds * 1000);
    const m = await readMemory(informer.process.pid, samples);
    return { rssMiB: m.rss / MiB, heapMiB: NaN, readySeconds: Number(ready.seconds) };
  } finally {
    await informer.stop();
  }
}

/** Runs the scenario once: two sandboxes, one gateway, four agent processes and two informers, one at a time. */
export async function runAgentFootprint(params: AgentFootprintParams): Promise<AgentFootprintResult> {
  if (params.accounts < 2) throw new Error('agent footprint: accounts must be at least 2');
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-footprint-'));
  const children: Child[] = [];
  try {
    const small = join(dir, 'small.kubeconfig');
    const big = join(dir, 'big.kubeconfig');
    children.push(await startOutpost(['sandbox', '--no-tls', '--port', '0', '--kubeconfig', small, '--seed', 'demo'], /127\.0\.0\.1:\d+/));
    children.push(
      await startOutpost(
        ['sandbox', '--no-tls', '--port', '0', '--kubeconfig', big, '--seed', `scale:${params.objects}`],
        /127\.0\.0\.1:\d+/,
        300_000,
      ),
    );
    const gateway = await startGateway(database.url);
    children.push(gateway.child);
    const s = params;
    const configMaps = ['      kinds: [ConfigMap]'];

    const oneAccount = await measureAgent(dir, gateway, 'fp-one', [{ name: 'one', kubeconfig: small }], s);
    const many = Array.from({ length: params.accounts }, (_, i) => ({ name: `many-${i}`, kubeconfig: small }));
    const manyAccounts = await measureAgent(dir, gateway, 'fp-many', many, s);
    const fewObjects = await measureAgent(dir, gateway, 'fp-few', [{ name: 'few-objects', kubeconfig: small, yaml: configMaps }], s);
    const manyObjects = await measureAgent(dir, gateway, 'fp-objects', [{ name: 'many-objects', kubeconfig: big, yaml: configMaps }], s);
    const informerFew = await measureInformer(small, s);
    const informerMany = await measureInformer(big, s);

    const perObject = (many: ProcessMemory, few: ProcessMemory, key: 'rssMiB' | 'heapMiB') =>
      ((many[key] - few[key]) * MiB) / params.objects;
    const rssBytesPerObject = perObject(manyObjects, fewObjects, 'rssMiB');
    const informerRssBytesPerObject = perObject(informerMany, informerFew, 'rssMiB');
    return {
      accounts: params.accounts,
      objects: params.objects,
      oneAccount,
      manyAccounts,
      rssMiBPerAccount: (manyAccounts.rssMiB - oneAccount.rssMiB) / (params.accounts - 1),
      heapMiBPerAccount: (manyAccounts.heapMiB - oneAccount.heapMiB) / (params.accounts - 1),
      totalRssMiBPerAccount: manyAccounts.rssMiB / params.accounts,
      fewObjects,
      manyObjects,
      rssBytesPerObject,
      heapBytesPerObject: perObject(manyObjects, fewObjects, 'heapMiB'),
      informerFew,
      informerMany,
      informerRssBytesPerObject,
      ratioToInformer: rssBytesPerObject / informerRssBytesPerObject,
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Table rows of the agent-footprint runs; targets are judged at 100 accounts and 100k objects or more. */
export function agentFootprintRows(runs: AgentFootprintResult[], params: { accounts: number; objects: number }): Row[] {
  const s = `agent footprint (${params.accounts} accounts; ${params.objects} objects)`;
  return [
    figureRow(
      s,
      `RSS per account, MiB ((${params.accounts} accounts − 1) / ${params.accounts - 1})`,
      runs.map((r) => r.rssMiBPerAccount),
      {
        digits: 2,
        target: '≤ 1 MiB',
        meets: (m) => m <= 1,
        judged: params.accounts >= 100,
      },
    ),
    figureRow(
      s,
      'V8 heap per account, MiB',
      runs.map((r) => r.heapMiBPerAccount),
      { digits: 2 },
    ),
    figureRow(
      s,
      `whole agent RSS / accounts, MiB (reference: 35–45)`,
      runs.map((r) => r.totalRssMiBPerAccount),
      { digits: 1 },
    ),
    figureRow(
      s,
      'RSS per watched object, bytes',
      runs.map((r) => r.rssBytesPerObject),
      {
        digits: 0,
        target: '≤ 800 B',
        meets: (m) => m <= 800,
        judged: params.objects >= 100_000,
      },
    ),
    figureRow(
      s,
      'V8 heap per watched object, bytes',
      runs.map((r) => r.heapBytesPerObject),
      { digits: 0 },
    ),
    figureRow(
      s,
      'bare client-node informer RSS per object, bytes (baseline)',
      runs.map((r) => r.informerRssBytesPerObject),
      { digits: 0 },
    ),
    figureRow(
      s,
      'ratio agent / informer, per object',
      runs.map((r) => r.ratioToInformer),
      { digits: 2 },
    ),
  ];
}
