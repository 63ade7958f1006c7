/**
 * Investigation helper (not a scenario): starts the processes of the memory scenarios and writes heap snapshots of the
 * process under study, to be summarised with bench/heap-summary.ts.
 *
 *   node --import tsx bench/heap-probe.ts gateway --agents 1000 --out DIR
 *   node --import tsx bench/heap-probe.ts objects --objects 100000 --out DIR
 *   node --import tsx bench/heap-probe.ts accounts --accounts 100 --out DIR
 */
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { createTestDatabase } from '../testkit/databases.js';
import { readRss, scrapeMetric, startAgent, startGateway, startSwarm, startOutpost, type Child } from './processes.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    agents: { type: 'string', default: '1000' },
    objects: { type: 'string', default: '100000' },
    accounts: { type: 'string', default: '100' },
    out: { type: 'string', default: '/tmp/mem' },
    postgres: { type: 'string', default: 'postgres://postgres@127.0.0.1:5432/postgres' },
    settle: { type: 'string', default: '12' },
    'no-snapshot': { type: 'boolean', default: false },
  },
});
const out = resolve(values.out);
const mode = positionals[0];
process.env.OUTPOST_TEST_POSTGRES = values.postgres;
process.env.OUTPOST_BENCH_NODE_FLAGS = `${process.env.OUTPOST_BENCH_NODE_FLAGS ?? ''} --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${out}`;
const MiB = 2 ** 20;
const log = (o: Record<string, unknown>) => console.log(JSON.stringify(o));

async function snapshot(pid: number, label: string): Promise<void> {
  if (values['no-snapshot']) return;
  const before = new Set(readdirSync(out));
  process.kill(pid, 'SIGUSR2');
  for (let i = 0; i < 600; i++) {
    await sleep(500);
    const fresh = readdirSync(out).filter((f) => !before.has(f) && f.endsWith('.heapsnapshot'));
    if (fresh.length > 0) {
      const file = join(out, fresh[0]!);
      let last = -1;
      for (;;) {
        await sleep(1000);
        const size = statSync(file).size;
        if (size > 0 && size === last) break;
        last = size;
      }
      log({ snapshot: file, label });
      return;
    }
  }
}

const children: Child[] = [];
const database = await createTestDatabase('postgres');
try {
  if (mode === 'gateway') {
    const gateway = await startGateway(database.url, {
      OUTPOST_GATEWAY_AGENTS_HEARTBEAT_INTERVAL_SECONDS: '10',
      OUTPOST_GATEWAY_AGENTS_DEAD_AFTER_SECONDS: '30',
    });
    children.push(gateway.child);
    const pid = gateway.child.process.pid!;
    const metrics = `${gateway.httpUrl}/metrics`;
    const swarm = (prefix: string, n: number) => startSwarm(`http://127.0.0.1:${gateway.grpcPort}`, prefix, n, 100);
    const read = async (label: string) =>
      log({
        label,
        rssMiB: readRss(pid) / MiB,
        heapMiB: (await scrapeMetric(metrics, 'outpost_gateway_nodejs_heap_size_used_bytes')) / MiB,
      });
    const warm = swarm('warm', 100);
    await warm.waitFor('ready');
    await sleep(Number(values.settle) * 1000);
    await read('warm');
    await snapshot(pid, 'warm');
    await read('warm-after-snapshot');
    const main = swarm('swarm', Number(values.agents));
    await main.waitFor('ready');
    await sleep(Number(values.settle) * 1000);
    await read('main');
    await snapshot(pid, 'main');
    await read('main-after-snapshot');
    await main.stop();
    await warm.stop();
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-probe-'));
    const small = join(dir, 'small.kubeconfig');
    children.push(await startOutpost(['sandbox', '--no-tls', '--port', '0', '--kubeconfig', small, '--seed', 'demo'], /127\.0\.0\.1:\d+/));
    let kubeconfig = small;
    if (mode === 'objects') {
      kubeconfig = join(dir, 'big.kubeconfig');
      children.push(
        await startOutpost(
          ['sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig, '--seed', `scale:${values.objects}`],
          /127\.0\.0\.1:\d+/,
          300_000,
        ),
      );
    }
    const gateway = await startGateway(database.url);
    children.push(gateway.child);
    const accounts =
      mode === 'objects'
        ? [{ name: 'many-objects', kubeconfig, yaml: ['      kinds: [ConfigMap]'] }]
        : Array.from({ length: Number(values.accounts) }, (_, i) => ({ name: `many-${i}`, kubeconfig: small }));
    const agent = await startAgent({ dir, grpcPort: gateway.grpcPort, agentId: `probe-${mode}`, accounts });
    children.push(agent.child);
    const pid = agent.child.process.pid!;
    for (;;) {
      const res = await fetch(`${agent.adminUrl}/health`).catch(() => undefined);
      if (res?.status === 200) break;
      await sleep(200);
    }
    const read = async (label: string) => {
      const text = await (await fetch(agent.metricsUrl)).text();
      const spaces = Object.fromEntries(
        [...text.matchAll(/^outpost_agent_nodejs_heap_space_size_total_bytes\{space="(\w+)"\} (\d+)/gm)].map((m) => [
          m[1],
          Math.round(Number(m[2]) / MiB),
        ]),
      );
      const ext = /^outpost_agent_nodejs_external_memory_bytes (\S+)/m.exec(text)?.[1];
      log({
        label,
        rssMiB: readRss(pid) / MiB,
        heapMiB: (await scrapeMetric(agent.metricsUrl, 'outpost_agent_nodejs_heap_size_used_bytes')) / MiB,
        externalMiB: Number(ext) / MiB,
        spaces,
      });
    };
    await sleep(3000);
    await read('ready+3s');
    await sleep(Number(values.settle) * 1000);
    await read('settled');
    await snapshot(pid, mode!);
    await read('after-snapshot');
  }
} finally {
  for (const c of children.reverse()) await c.stop();
  await database.drop();
}
