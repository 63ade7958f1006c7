/**
 * Scenario 1 — initial sync: N objects from the sandbox into Postgres through agent and gateway, next to a raw
 * Postgres COPY of the very same rows measured in the same run (the ceiling).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { createTestDatabase } from '../../test/helpers/databases.js';
import { freePort, startGatewayAndAgent, startOutpost, type Child } from '../processes.js';

/** Parameters of one initial-sync run. */
export interface InitialSyncParams {
  objects: number;
  postgresUrl: string;
}

/** Figures of one initial-sync run. */
export interface InitialSyncResult {
  objects: number;
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
    const sandboxPort = await freePort();
    children.push(
      await startOutpost(
        ['sandbox', '--port', String(sandboxPort), '--kubeconfig', kubeconfig, '--seed', `scale:${params.objects}`],
        /127\.0\.0\.1:\d+/,
        300_000,
      ),
    );
    const { gateway, agent, agentStartedAt: started } = await startGatewayAndAgent({ dir, kubeconfig, databaseUrl: database.url, children });
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
    // The sync window as the database saw it: first row committed to last row committed.
    const [window] = await sql<{ s: number }[]>`
      select extract(epoch from max(updated_at) - min(updated_at))::float8 as s from objects where account = 'bench'`;
    const seconds = Math.max(window!.s, 0.001);

    // Baseline: COPY the same rows into an identical table (same primary key and indexes).
    await sql`create table objects_copy (like objects including all)`;
    const dump: Buffer[] = [];
    const reader = await sql`copy (select * from objects where account = 'bench') to stdout`.readable();
    for await (const chunk of reader) dump.push(chunk as Buffer);
    const copyStart = performance.now();
    const writer = await sql`copy objects_copy from stdin`.writable();
    await new Promise<void>((resolve, reject) => {
      writer.on('error', reject);
      writer.on('finish', resolve);
      for (const chunk of dump) writer.write(chunk);
      writer.end();
    });
    const copySeconds = (performance.now() - copyStart) / 1000;
    const [{ n: copied }] = await sql<{ n: number }[]>`select count(*)::int as n from objects_copy`;
    if (copied !== count) throw new Error(`COPY baseline wrote ${copied} rows, expected ${count}`);
    return {
      objects: count,
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
