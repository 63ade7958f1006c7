/**
 * Scenario 1 — initial sync: N objects from the sandbox into Postgres through agent and gateway, next to a raw
 * Postgres COPY of the very same rows measured in the same run (the ceiling).
 */
import { figureRow, type Row } from '../rows.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { createTestDatabase } from '../../testkit/databases.js';
import { startGatewayAndAgent, startOutpost, streamTransports, type BenchTransport, type Child } from '../processes.js';

/** Parameters of one initial-sync run. */
export interface InitialSyncParams {
  objects: number;
  postgresUrl: string;
  /** How the agent's stream reaches the gateway; the agent's default (auto: gRPC here) when absent. */
  transport?: BenchTransport;
}

/** Figures of one initial-sync run. */
export interface InitialSyncResult {
  objects: number;
  /** The transport of the agent's stream as the gateway recorded it. */
  transport: string;
  /** Agent process start to the last scope synced (includes process start-up, discovery and RBAC checks). */
  totalSeconds: number;
  /** First object committed to last object committed. */
  seconds: number;
  objectsPerSecond: number;
  copySeconds: number;
  copyObjectsPerSecond: number;
  ratioToCopy: number;
  agentPeakRssMiB: number;
  gatewayPeakRssMiB: number;
}

/** Runs the scenario once, with fresh processes and a fresh database. */
export async function runInitialSync(params: InitialSyncParams): Promise<InitialSyncResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const children: Child[] = [];
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  try {
    children.push(
      await startOutpost(
        ['sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig, '--seed', `scale:${params.objects}`],
        /127\.0\.0\.1:\d+/,
        300_000,
      ),
    );
    const {
      gateway,
      agent,
      httpUrl,
      agentStartedAt: started,
    } = await startGatewayAndAgent({ dir, kubeconfig, databaseUrl: database.url, children, transport: params.transport });
    let count = 0;
    for (;;) {
      agent.sampleRss();
      gateway.sampleRss();
      const [row] = await sql<{ n: number; synced: boolean }[]>`
        select (select count(*)::int from objects where account = 'bench') as n,
               coalesce((select bool_and(synced) from watch_states where account = 'bench'), false) as synced`;
      count = row!.n;
      if (row!.synced && count >= params.objects) break;
      for (const child of children) {
        if (child.process.exitCode !== null) throw new Error(`a child process exited early: ${child.output().slice(-3000)}`);
      }
      if (performance.now() - started > 600_000) throw new Error(`sync did not finish: ${count} objects after 600 s`);
      await sleep(50);
    }
    const totalSeconds = (performance.now() - started) / 1000;
    const [transport = 'none'] = await streamTransports(httpUrl);
    if (params.transport && transport !== params.transport) throw new Error(`the agent streams over ${transport}, not ${params.transport}`);
    // The sync window as the database saw it: first row committed to last row committed.
    const [window] = await sql<{ s: number }[]>`
      select extract(epoch from max(updated_at) - min(updated_at))::float8 as s from objects where account = 'bench'`;
    const seconds = Math.max(window!.s, 0.001);

    // Baseline: COPY the same rows into an identical table (same primary key and indexes).
    await sql`create table objects_copy (like objects including all)`;
    // The dump and the load each on a connection of their own: postgres-js can leave a connection that served a
    // COPY TO unusable for a following COPY FROM (the load then waits forever).
    // Only the stored columns: generated ones (the Spinnaker moniker columns) cannot be copied in, the table computes
    // them as the gateway's writes do.
    const columns = (
      await sql<{ name: string }[]>`
        select column_name as name from information_schema.columns
        where table_name = 'objects' and is_generated = 'NEVER' order by ordinal_position`
    )
      .map((c) => `"${c.name}"`)
      .join(', ');
    const dump: Buffer[] = [];
    const dumper = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      const reader = await dumper.unsafe(`copy (select ${columns} from objects where account = 'bench') to stdout`).readable();
      for await (const chunk of reader) dump.push(chunk as Buffer);
    } finally {
      await dumper.end({ timeout: 5 });
    }
    const copyStart = performance.now();
    const writer = await sql.unsafe(`copy objects_copy (${columns}) from stdin`).writable();
    await pipeline(Readable.from(dump), writer);
    const copySeconds = (performance.now() - copyStart) / 1000;
    const [{ n: copied }] = await sql<{ n: number }[]>`select count(*)::int as n from objects_copy`;
    if (copied !== count) throw new Error(`COPY baseline wrote ${copied} rows, expected ${count}`);
    return {
      objects: count,
      transport,
      totalSeconds,
      seconds,
      objectsPerSecond: count / seconds,
      copySeconds,
      copyObjectsPerSecond: count / copySeconds,
      ratioToCopy: count / seconds / (count / copySeconds),
      agentPeakRssMiB: agent.peakRss() / 2 ** 20,
      gatewayPeakRssMiB: gateway.peakRss() / 2 ** 20,
    };
  } finally {
    await sql.end({ timeout: 5 });
    for (const child of children.reverse()) await child.stop();
    await database.drop();
  }
}

/** Table rows of the initial-sync runs; the targets are judged only at 100k objects or more. */
export function initialSyncRows(runs: InitialSyncResult[], objects: number): Row[] {
  const judged = objects >= 100_000;
  const s = 'initial sync';
  return [
    figureRow(
      s,
      `seconds, agent start → ${objects} objects synced`,
      runs.map((r) => r.totalSeconds),
      { digits: 2, target: '≤ 20 s (100k)', meets: (m) => m <= 20, judged },
    ),
    figureRow(
      s,
      'objects/s, first → last row committed',
      runs.map((r) => r.objectsPerSecond),
      { digits: 0 },
    ),
    figureRow(
      s,
      'raw Postgres COPY of the same rows, objects/s (baseline)',
      runs.map((r) => r.copyObjectsPerSecond),
      { digits: 0 },
    ),
    figureRow(
      s,
      'ratio ours / COPY',
      runs.map((r) => r.ratioToCopy),
      { digits: 2, target: '≥ 0.50', meets: (m) => m >= 0.5, judged },
    ),
    figureRow(
      s,
      'agent peak RSS, MiB',
      runs.map((r) => r.agentPeakRssMiB),
      { digits: 0 },
    ),
    figureRow(
      s,
      'gateway peak RSS, MiB',
      runs.map((r) => r.gatewayPeakRssMiB),
      { digits: 0 },
    ),
  ];
}
