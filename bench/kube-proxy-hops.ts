/**
 * `node --import tsx bench/kube-proxy-hops.ts [PATH]`: where the time of one GET through the gateway's `/k8s/bench`
 * goes (a diagnostic beside the kube-proxy scenario, not part of `npm run bench`). Starts a sandbox (TLS, in this
 * process), a gateway and an agent as in the scenario, with TCP taps in this process in front of the gateway's gRPC
 * port (the agent dials the tap) and of the sandbox (the agent's kubeconfig points at the tap), so every byte of the
 * path is timestamped on one clock. Sends 300 GETs of PATH (default `/api/v1/namespaces/demo/pods`) one at a time
 * and prints, per leg, p50 / p90 / p99 in milliseconds and how many socket reads each direction of the agent stream
 * took per GET (each one a wake-up of the reading process). Run it with the compiled build fresh
 * (`npm run build:server`, OUTPOST_RUNTIME=dist) to measure what ships. Needs Postgres (OUTPOST_BENCH_POSTGRES).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSandbox } from '../src/sandbox/index.js';
import { createSilentLogger } from '../src/shared/logger.js';
import { createTestDatabase } from '../testkit/databases.js';
import { keepAliveClient } from './kube-clients.js';
import { summarize } from './machine.js';
import { startAgent, startGateway, type Child } from './processes.js';

/** A TCP relay to `port` recording when bytes pass each way (`up`: towards `port`). */
async function tap(port: number): Promise<{ port: number; up: number[]; down: number[]; close(): void }> {
  const t = { up: [] as number[], down: [] as number[] };
  const server = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    for (const s of [client, upstream]) {
      s.setNoDelay(true); // no Nagle delay of the tap's own
      s.on('error', () => {});
    }
    client.on('data', (d) => {
      t.up.push(performance.now());
      upstream.write(d);
    });
    upstream.on('data', (d) => {
      t.down.push(performance.now());
      client.write(d);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { ...t, port: (server.address() as net.AddressInfo).port, close: () => server.close() };
}

process.env.OUTPOST_TEST_POSTGRES = process.env.OUTPOST_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const path = process.argv[2] ?? '/api/v1/namespaces/demo/pods';
const database = await createTestDatabase('postgres');
const dir = mkdtempSync(join(tmpdir(), 'outpost-kube-hops-'));
const sandbox = await startSandbox({ seed: 'demo', tls: true, logger: createSilentLogger() });
const children: Child[] = [];
const sandboxPort = Number(new URL(sandbox.url).port);
const clusterTap = await tap(sandboxPort);
const kubeconfig = join(dir, 'kubeconfig');
await sandbox.writeKubeconfig(kubeconfig);
writeFileSync(kubeconfig, readFileSync(kubeconfig, 'utf8').replaceAll(`:${sandboxPort}`, `:${clusterTap.port}`));
sandbox.store.create({
  apiVersion: 'rbac.authorization.k8s.io/v1',
  kind: 'ClusterRoleBinding',
  metadata: { name: 'hops' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
  subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'outpost:anonymous' }],
});
sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kbench-idle' } });
const gateway = await startGateway(database.url);
children.push(gateway.child);
const streamTap = await tap(gateway.grpcPort);
const agent = await startAgent({
  dir,
  grpcPort: streamTap.port,
  agentId: 'bench-hops',
  accounts: [{ name: 'bench', kubeconfig, yaml: ['      namespaces: [kbench-idle]', '      kinds: [ConfigMap]'] }],
});
children.push(agent.child);
const client = keepAliveClient({ base: `${gateway.httpUrl}/k8s/bench`, headers: {} });
try {
  for (let i = 0; ; i++) {
    try {
      await client.get(path);
      break;
    } catch (err) {
      if (i > 450) throw err;
      await sleep(200);
    }
  }
  const legs = {
    'whole GET': [] as number[],
    'caller → first bytes gateway → agent (gateway)': [] as number[],
    'first bytes gateway → agent → request at the cluster (agent)': [] as number[],
    'cluster: first request byte → last answer byte': [] as number[],
    'last answer byte → last bytes agent → gateway (agent)': [] as number[],
    'last bytes agent → gateway → caller has the answer (gateway)': [] as number[],
    'socket reads gateway → agent per GET': [] as number[],
    'socket reads agent → gateway per GET': [] as number[],
    'first → last read gateway → agent (head, then the end of the body)': [] as number[],
  };
  const l = Object.values(legs);
  for (let i = 0; i < 330; i++) {
    for (const t of [clusterTap, streamTap]) t.up.length = t.down.length = 0;
    const t0 = performance.now();
    const ms = await client.get(path);
    const end = t0 + ms;
    if (i < 30) continue;
    const [g2a, a2g, req, ans] = [streamTap.down, streamTap.up, clusterTap.up, clusterTap.down];
    if (!g2a.length || !a2g.length || !req.length || !ans.length) continue;
    const values = [ms, g2a[0]! - t0, req[0]! - g2a[0]!, ans.at(-1)! - req[0]!, a2g.at(-1)! - ans.at(-1)!, end - a2g.at(-1)!];
    for (const [k, v] of [...values, g2a.length, a2g.length, g2a.at(-1)! - g2a[0]!].entries()) l[k]!.push(v);
    await sleep(2);
  }
  console.log(`GET ${path} through /k8s/bench, ${l[0]!.length} samples (ms, p50 / p90 / p99):`);
  for (const [name, values] of Object.entries(legs)) {
    const s = summarize(values);
    console.log(`  ${name.padEnd(64)} ${[s.p50, s.p90, s.p99].map((x) => x.toFixed(2)).join(' / ')}`);
  }
} finally {
  client.close();
  for (const child of children.reverse()) await child.stop();
  clusterTap.close();
  streamTap.close();
  await sandbox.close();
  await database.drop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);
