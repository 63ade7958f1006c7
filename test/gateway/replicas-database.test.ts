/**
 * Replica discovery through the heartbeat table (`replicas.discovery: database`): several gateways on one Postgres
 * list each other on /armory/clouddrivers; a gracefully closed one disappears at once (its row is deleted), a silent
 * one only once its heartbeat is older than deadAfterSeconds; a draining replica is listed not ready.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../src/db/database.js';
import { loadGatewayConfig, startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { createHeartbeatDirectory } from '../../src/gateway/replicas/heartbeat-directory.js';
import type { Replica } from '../../src/gateway/replicas/replica-directory.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';

const HEARTBEAT_S = 0.1;
// Far more than a heartbeat: a loaded machine's late ticks must not make a live replica (or a young ghost) look dead.
const DEAD_AFTER_S = 5;

interface Instance {
  id: string;
  baseUrl: string;
  lastUpdated: string;
  ready: boolean;
}

async function listed(gateway: RunningGateway): Promise<Instance[]> {
  const res = await fetch(`${gateway.httpUrl}/armory/clouddrivers`);
  assert.equal(res.status, 200);
  return (await res.json()) as Instance[];
}

async function ids(gateway: RunningGateway): Promise<string[]> {
  return (await listed(gateway)).map((r) => r.id);
}

function start(id: string, database: string, deadAfterSeconds = DEAD_AFTER_S): Promise<RunningGateway> {
  const config = loadGatewayConfig({
    env: {},
    overrides: {
      id,
      host: '127.0.0.1',
      httpPort: 0,
      grpcPort: 0,
      database,
      insecure: true,
      replicas: { heartbeatIntervalSeconds: HEARTBEAT_S, deadAfterSeconds },
    },
  });
  return startGateway(config, { logger: createSilentLogger() });
}

async function insertGhost(db: Database, id: string, ageSeconds: number): Promise<void> {
  await db.db.execute(
    sql`insert into replicas (id, base_url, last_heartbeat_at, started_at, ready)
        values (${id}, 'http://10.0.0.9:7002', now() - (${String(ageSeconds)}::float8 * interval '1 second'), now(), true)
        on conflict (id) do update set last_heartbeat_at = excluded.last_heartbeat_at`,
  );
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('replica discovery: heartbeat table', () => {
  const multi = process.env.OUTPOST_TEST_POSTGRES
    ? false
    : 'needs OUTPOST_TEST_POSTGRES: PGlite serves one process, so several replicas cannot share it';
  // A closed replica's row expires only after a minute here: one gone within the wait was removed by its close.
  const GRACEFUL_DEAD_AFTER_S = 60;
  test('postgres: three gateways list each other; a closed one disappears at once', { skip: multi, timeout: 120_000 }, async () => {
    const testDb = await createTestDatabase('postgres');
    const gateways: RunningGateway[] = [];
    try {
      for (const id of ['gw-a', 'gw-b', 'gw-c']) gateways.push(await start(id, testDb.url, GRACEFUL_DEAD_AFTER_S));
      const [a, b, c] = gateways as [RunningGateway, RunningGateway, RunningGateway];
      for (const g of gateways) {
        await eventually('gw-a, gw-b and gw-c listed', async () => (await ids(g)).join() === 'gw-a,gw-b,gw-c', { timeoutMs: 30_000 });
        const list = await listed(g);
        for (const other of gateways) {
          const entry = list.find((r) => r.id === other.id)!;
          assert.equal(entry.baseUrl, other.httpUrl);
          assert.equal(entry.ready, true);
          assert.ok(Date.now() - Date.parse(entry.lastUpdated) < GRACEFUL_DEAD_AFTER_S * 1000, `${entry.lastUpdated} is recent`);
        }
      }
      const one = await fetch(`${a.httpUrl}/armory/clouddrivers/gw-b`);
      assert.equal(one.status, 200);
      assert.deepEqual(
        { ...((await one.json()) as Instance), lastUpdated: '' },
        { id: 'gw-b', baseUrl: b.httpUrl, lastUpdated: '', ready: true },
      );
      const unknown = await fetch(`${a.httpUrl}/armory/clouddrivers/gw-nope`);
      assert.equal(unknown.status, 404);
      assert.equal(((await unknown.json()) as { error: string }).error, 'not_found');

      // Graceful close deletes the row: the others drop it within a heartbeat or two, long before deadAfterSeconds.
      const closedAt = Date.now();
      await c.close();
      gateways.pop();
      const rows = await a.database.db.execute(sql`select id from replicas where id = 'gw-c'`);
      assert.equal(Array.from((rows as unknown as { rows?: unknown[] }).rows ?? (rows as unknown as unknown[])).length, 0);
      await eventually(
        'gw-c gone from both lists',
        async () => (await ids(a)).join() === 'gw-a,gw-b' && (await ids(b)).join() === 'gw-a,gw-b',
        { timeoutMs: 30_000 },
      );
      assert.ok(Date.now() - closedAt < GRACEFUL_DEAD_AFTER_S * 1000, 'gone before its heartbeat could have expired');
      assert.equal((await fetch(`${a.httpUrl}/armory/clouddrivers/gw-c`)).status, 404);
    } finally {
      for (const g of gateways) await g.close();
      await testDb.drop();
    }
  });

  for (const driver of testDrivers()) {
    test(`${driver}: a replica that stops heartbeating is listed until its heartbeat is older than deadAfterSeconds`, {
      timeout: 120_000,
    }, async () => {
      const testDb = await createTestDatabase(driver);
      const gw = await start('gw-live', testDb.url);
      try {
        // Listed at once, before anyone else exists: itself.
        assert.deepEqual(await ids(gw), ['gw-live']);
        // A replica that crashed: its row stays, nobody updates it.
        await insertGhost(gw.database, 'gw-ghost', 0);
        await eventually('gw-ghost listed', async () => (await ids(gw)).includes('gw-ghost'), { timeoutMs: 30_000 });
        // Older than a heartbeat but younger than deadAfterSeconds: still listed, tick after tick.
        const GHOST_AGE_S = 0.5;
        const agedAt = Date.now(); // before the insert: the ghost's heartbeat is at most GHOST_AGE_S older than this
        await insertGhost(gw.database, 'gw-ghost', GHOST_AGE_S);
        await sleep(HEARTBEAT_S * 1000 * 4);
        assert.deepEqual(await ids(gw), ['gw-ghost', 'gw-live']);
        // Past deadAfterSeconds: dropped (by a refresh after that, however late), and not before.
        await eventually('gw-ghost dropped', async () => (await ids(gw)).join() === 'gw-live');
        const age = Date.now() - agedAt + GHOST_AGE_S * 1000;
        assert.ok(age >= DEAD_AFTER_S * 1000, `dropped at a heartbeat age of ${age} ms, before deadAfterSeconds`);
        assert.equal((await fetch(`${gw.httpUrl}/armory/clouddrivers/gw-ghost`)).status, 404);
      } finally {
        await gw.close();
        await testDb.drop();
      }
    });

    test(`${driver}: a draining replica is listed not ready, then removed on close`, { timeout: 120_000 }, async () => {
      const testDb = await createTestDatabase(driver);
      const database = await openDatabase(testDb.url);
      const logger = createSilentLogger();
      let draining = false;
      const options = { database, heartbeatIntervalSeconds: HEARTBEAT_S, deadAfterSeconds: DEAD_AFTER_S, logger, isDraining: () => false };
      const watcher = createHeartbeatDirectory({ ...options, id: 'r-1', baseUrl: () => 'http://r-1:7002' });
      const drainer = createHeartbeatDirectory({ ...options, id: 'r-2', baseUrl: () => 'http://r-2:7002', isDraining: () => draining });
      const seen: Replica[][] = [];
      const unsubscribe = watcher.subscribe((list) => seen.push(list));
      try {
        await drainer.start();
        await watcher.start();
        assert.deepEqual(
          watcher.list().map((r) => [r.id, r.baseUrl, r.ready]),
          [
            ['r-1', 'http://r-1:7002', true],
            ['r-2', 'http://r-2:7002', true],
          ],
        );
        assert.equal(watcher.get('r-2')?.ready, true);
        assert.ok(watcher.get('r-2')!.lastUpdated instanceof Date);
        draining = true;
        await drainer.markDraining();
        await eventually('r-2 listed not ready', async () => watcher.get('r-2')?.ready === false, { timeoutMs: 30_000 });
        assert.equal(drainer.get('r-2')?.ready, false, 'it sees itself not ready too');
        await drainer.close();
        await eventually('r-2 removed', async () => watcher.get('r-2') === undefined, { timeoutMs: 30_000 });
        assert.deepEqual(
          seen.map((l) => l.map((r) => `${r.id}:${r.ready}`).join()),
          ['r-1:true,r-2:true', 'r-1:true,r-2:false', 'r-1:true'],
          'subscribers hear each change once, not every heartbeat',
        );
      } finally {
        unsubscribe();
        await drainer.close();
        await watcher.close();
        await database.close();
        await testDb.drop();
      }
    });
  }
});
