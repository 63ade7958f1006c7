/**
 * Scenario — Spinnaker infrastructure views: what Deck's Clusters tab and Gate's application poller cost, and how
 * fresh they are, with a realistic cache. One gateway (insecure, as every benchmark's) on a fresh Postgres database;
 * simulated agents (infra-loader.ts) fill it with the fixture (infra-fixture.ts: one application's server groups
 * spread over many accounts among other applications' objects) through the gateway's own write path; the table is
 * vacuumed and analyzed (what autovacuum does soon after such a load on a long-lived cache: planner statistics, the
 * owner index's pending list merged); a real agent streams an in-process sandbox as one more account. Then, in this
 * order:
 *
 * 1. reads (spinnaker-infra-reads.ts): serverGroups of the application — kept by the answer cache, and built by a
 *    second replica with the answer cache off — and the application list, each beside the store's own statements run
 *    straight against Postgres;
 * 2. freshness (spinnaker-infra-freshness.ts): sandbox Deployment scaled → shown, new application → listed;
 * 3. before all of it, when `writeRounds` > 0, the write cost of migration 0012 (spinnaker-infra-writes.ts), on
 *    databases and gateways of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import postgres from 'postgres';
import { startSandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { INFRA_APP, infraFixture, type InfraFixtureSize } from '../infra-fixture.js';
import { loadAccounts, type LoadedAccounts } from '../infra-loader.js';
import { summarize } from '../machine.js';
import { startAgent, startGateway, type Child } from '../processes.js';
import { readAccount } from '../replicas.js';
import { measureFirstListed, measureScaleShown } from './spinnaker-infra-freshness.js';
import { measureInfraReads, type InfraReadsParams, type InfraReadsResult } from './spinnaker-infra-reads.js';
import { measureInfraWrites, type InfraWritesResult } from './spinnaker-infra-writes.js';

/** Parameters of one run. */
export interface SpinnakerInfraParams {
  postgresUrl: string;
  fixture: InfraFixtureSize;
  reads: InfraReadsParams;
  /** Scalings of the sandbox Deployment (and unmeasured ones first). */
  freshness: { rounds: number; warmup: number };
  /** New applications deployed one after another. */
  firstDeploy: { rounds: number };
  /** Interval between two polls of the freshness measures, ms. */
  pollMs: number;
  /** Loads of the fixture into each schema of the write-cost comparison; 0 skips it. */
  writeRounds: number;
}

/** Figures of one run (milliseconds unless named otherwise). */
export interface SpinnakerInfraResult {
  /** Objects of the fixture, and how fast they were loaded into the measured gateway (objects/s). */
  objects: number;
  loadObjectsPerSecond: number;
  reads: InfraReadsResult;
  scale: { capacity: ReturnType<typeof summarize>; instances: ReturnType<typeof summarize> };
  firstListed: ReturnType<typeof summarize>;
  writes?: InfraWritesResult;
}

const LIVE = 'live';

/** Runs the scenario once. */
export async function runSpinnakerInfra(params: SpinnakerInfraParams): Promise<SpinnakerInfraResult> {
  const fixture = infraFixture(params.fixture);
  const writes = params.writeRounds > 0 ? await measureInfraWrites(params.postgresUrl, fixture, params.writeRounds) : undefined;

  const database = await createTestDatabase('postgres', params.postgresUrl);
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-infra-'));
  const sandbox = await startSandbox({ seed: 'none', logger: createSilentLogger() });
  const children: Child[] = [];
  let loaded: LoadedAccounts | undefined;
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: LIVE } });
    const gateway = await startGateway(database.url);
    children.push(gateway.child);
    // A second replica on the same database with the answer cache off: what a poll after a change costs.
    const built = await startGateway(database.url, { OUTPOST_GATEWAY_SPINNAKER_ANSWER_CACHE_MEGABYTES: '0' });
    children.push(built.child);
    loaded = await loadAccounts(`http://127.0.0.1:${gateway.grpcPort}`, fixture);
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      await sql`vacuum analyze objects`;
    } finally {
      await sql.end({ timeout: 5 });
    }
    // The real agent: every kind RBAC allows, every namespace, as an agent is configured by default.
    const agent = await startAgent({ dir, grpcPort: gateway.grpcPort, agentId: 'bench-live', accounts: [{ name: LIVE, kubeconfig }] });
    children.push(agent.child);
    const check = () => {
      loaded!.check();
      for (const child of children) {
        if (child.process.exitCode !== null || child.process.signalCode !== null)
          throw new Error(`a child process exited early: ${child.output().slice(-3000)}`);
      }
    };
    for (const deadline = Date.now() + 90_000; (await readAccount(gateway.httpUrl, LIVE))?.state !== 'ACTIVE'; await sleep(100)) {
      check();
      if (Date.now() > deadline) throw new Error(`the agent did not register account ${LIVE} within 90 s`);
    }

    const reads = await measureInfraReads({
      httpUrl: gateway.httpUrl,
      builtUrl: built.httpUrl,
      databaseUrl: database.url,
      app: INFRA_APP,
      expected: { serverGroups: params.fixture.serverGroups, instances: params.fixture.serverGroups * params.fixture.podsPerServerGroup },
      params: params.reads,
    });
    check();
    const target = { httpUrl: gateway.httpUrl, store: sandbox.store, namespace: LIVE, pollMs: params.pollMs, check };
    const scale = await measureScaleShown(target, params.freshness.rounds, params.freshness.warmup);
    const firstListed = await measureFirstListed(target, params.firstDeploy.rounds);
    check();
    return {
      objects: loaded.objects,
      loadObjectsPerSecond: loaded.objects / loaded.seconds,
      reads,
      scale: { capacity: summarize(scale.capacity), instances: summarize(scale.instances) },
      firstListed: summarize(firstListed),
      ...(writes ? { writes } : {}),
    };
  } finally {
    loaded?.close();
    for (const child of children.reverse()) await child.stop();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
    await database.drop();
  }
}
