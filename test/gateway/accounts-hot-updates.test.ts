/**
 * Lease renewals and the cache writes' counters change only unindexed columns of `accounts`, so they can be HOT
 * updates — no index entry written — when the row's page has room for the new version (migration 0015: fillfactor
 * 50; docs/scaling.md has the measured share). On each driver: the table keeps the setting, and a renewal of many
 * leases in one statement leaves every renewed row on its page (a HOT update never leaves its page; on pages filled
 * to the brim, as before 0015, the new versions of such a statement move to other pages).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import { renewLeases } from '../../src/gateway/accounts/account-lease-queries.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';

for (const driver of testDrivers()) {
  describe(`accounts rows have room for HOT updates (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let run: ReturnType<typeof createRawQuery>;
    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url, { maxConnections: 1 });
      run = createRawQuery(database);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('fillfactor 50, and a renewal of 300 leases leaves every row on its page', async () => {
      const [options] = (await run("select reloptions from pg_class where relname = 'accounts'", [])) as { reloptions: string[] }[];
      assert.deepEqual(options!.reloptions, ['fillfactor=50']);
      // Rows as an agent registers them (their kinds make them a few hundred bytes), leased to one replica.
      const kinds = JSON.stringify(
        Array.from({ length: 12 }, (_, i) => ({ apiVersion: 'v1', kind: `Kind${i}`, resource: `kind${i}s`, namespaced: true })),
      );
      for (let i = 0; i < 300; i++) {
        await run(
          `insert into accounts (name, state, session_id, gateway_id, lease_epoch, lease_expires_at, kinds)
           values ($1, 'ACTIVE', 's', 'gw-1', 1, now() + interval '15 seconds', $2::jsonb)`,
          [`cluster-${String(i).padStart(3, '0')}`, kinds],
        );
      }
      const pages = async () =>
        new Map(
          (
            (await run("select name, split_part(trim(both '()' from ctid::text), ',', 1) as page from accounts", [])) as {
              name: string;
              page: string;
            }[]
          ).map((r) => [r.name, r.page]),
        );
      const before = await pages();
      assert.ok(new Set(before.values()).size > 5, 'the rows span several pages');
      const leases = [...before.keys()].map((name) => ({ name, sessionId: 's', epoch: 1 }));
      assert.equal((await renewLeases(database.db, 'gw-1', leases, 15)).size, 300);
      const afterRenewal = await pages();
      const moved = [...before].filter(([name, page]) => afterRenewal.get(name) !== page).map(([name]) => name);
      assert.deepEqual(moved, [], 'renewed in place: HOT');
    });
  });
}
