/**
 * Where a forward goes (owner-lookup.ts): the lease holder first, then replicas with standby streams; answers are
 * kept briefly, and a known owner past its time is answered from memory while it is read again in the background, so
 * the forward does not wait for that read; a forgotten answer is read at once.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/db/database.js';
import { createOwnerLookup } from '../../src/gateway/replicas/owner-lookup.js';
import { createTestDatabase, testDrivers } from '../../testkit/databases.js';

for (const driver of testDrivers()) {
  describe(`owner lookup (${driver})`, () => {
    test('a known owner past its time is answered at once and read again in the background; forget reads at once', async () => {
      const testDb = await createTestDatabase(driver);
      const database = await openDatabase(testDb.url);
      try {
        const holder = async (gatewayId: string) =>
          database.db.execute(sql`insert into accounts (name, state, source, updated_at, gateway_id, lease_expires_at)
            values ('acct', 'ACTIVE', 'agent', now(), ${gatewayId}, now() + interval '1 minute')
            on conflict (name) do update set gateway_id = excluded.gateway_id`);
        await holder('gw-old');
        const owners = createOwnerLookup(database, { selfId: 'gw-self', cacheMs: 1, staleAfterSeconds: 30 });
        assert.deepEqual(await owners.replicasFor('acct'), ['gw-old']);
        await holder('gw-new');
        await new Promise((r) => setTimeout(r, 5));
        // Past its time: still the known answer (no read on the forward's path), while the row is read again.
        assert.deepEqual(await owners.replicasFor('acct'), ['gw-old']);
        let answer: string[] = [];
        for (let i = 0; i < 200 && answer[0] !== 'gw-new'; i++) {
          await new Promise((r) => setTimeout(r, 10));
          answer = await owners.replicasFor('acct');
        }
        assert.deepEqual(answer, ['gw-new']);
        await holder('gw-other');
        owners.forget('acct');
        assert.deepEqual(await owners.replicasFor('acct'), ['gw-other']);
      } finally {
        await database.close();
        await testDb.drop();
      }
    });
  });
}
