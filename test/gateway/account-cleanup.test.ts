/**
 * Grace-period cleanup of agent accounts over real streams and the real database: an agent account without an agent
 * for longer than `accounts.cleanupGraceSeconds` is removed with its objects and watch state (gone from REST and
 * ListAccounts, a transition records why); an agent back within the grace period keeps its cache; dynamic and
 * admin-deactivated accounts are kept; several sweepers at once remove each account once and never fail.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { createAccountCleanup } from '../../src/gateway/accounts/account-cleanup.js';
import { removeAccountCaches } from '../../src/gateway/cache/cache-removal.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { rest } from './accounts-helpers.js';
import {
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  SyncPhase,
  syncMarker,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

// Long enough for an agent to be back within it on a loaded machine (the rolling-restart test reconnects after a
// fraction of it).
const GRACE = 3;

for (const driver of testDrivers()) {
  describe(`account cleanup after the grace period (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 30 },
        accounts: { cleanupGraceSeconds: GRACE },
      });
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
    });
    const open = () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      streams.push(s);
      return s;
    };
    const count = async (table: string, account: string) =>
      Number((await t.query<{ n: string | number }>(`select count(*) as n from ${table} where account = '${account}'`))[0]!.n);
    const state = async (name: string) => (await t.query<{ state: string }>(`select state from accounts where name = '${name}'`))[0]?.state;
    const listed = async () => {
      const client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      return (await client.listAccounts({})).accounts.map((a) => a.name);
    };
    /** Connects an agent caching `name`, stores two objects and a synced watch state, returns the stream. */
    const cacheAccount = async (agentId: string, name: string) => {
      const s = open();
      await connectAgent(s, agentId, [{ name }]);
      s.send(syncMarker(1, name, SyncPhase.START));
      s.send(events(2, [event(name, EventType.ADDED, configMap('a', 10)), event(name, EventType.ADDED, configMap('b', 11))]));
      s.send(syncMarker(3, name, SyncPhase.END, '11', 2));
      await s.waitForAck(3);
      assert.equal(await count('objects', name), 2);
      assert.equal(await count('watch_states', name), 1);
      return s;
    };

    test('an agent account without agent past the grace period is removed with its cache, and leaves REST and ListAccounts', async () => {
      const s = await cacheAccount('agent-gone', 'gone');
      assert.ok((await listed()).includes('gone'));
      // Taken before the account goes INACTIVE (seeing it INACTIVE may come late): the grace period starts after it.
      const endedAt = Date.now();
      s.end();
      await s.ended;
      await eventually('account gone INACTIVE', async () => (await state('gone')) === 'INACTIVE');
      await eventually('account gone removed', async () => (await state('gone')) === undefined);
      assert.ok(Date.now() - endedAt >= GRACE * 1000 - 100, 'removed before the grace period ended');
      assert.equal(await count('objects', 'gone'), 0);
      assert.equal(await count('watch_states', 'gone'), 0);
      assert.equal((await rest(t, 'GET', '/armory/accounts/gone')).status, 404);
      const page = await rest(t, 'GET', '/armory/accounts');
      assert.ok(!page.body.items.some((a: { name: string }) => a.name === 'gone'));
      assert.ok(!(await listed()).includes('gone'));
      const [last] = await t.query<{ to_state: string; reason: string; actor: string }>(
        `select to_state, reason, actor from account_transitions where account = 'gone' order by id desc limit 1`,
      );
      assert.equal(last?.to_state, 'DELETING');
      assert.equal(last?.actor, 'gateway');
      assert.match(last!.reason, /^no agent for \d+s \(grace 3s\)/);
      // The name binding went with the row: another cluster may register the name now.
      const other = open();
      const welcome = await connectAgent(other, 'agent-other', [{ name: 'gone', apiHost: 'https://elsewhere:6443' }]);
      assert.equal(welcome.accounts[0]!.verdict, Verdict.CACHING);
      await eventually('account gone ACTIVE', async () => (await state('gone')) === 'ACTIVE');
      other.end();
    });

    test('an agent back within the grace period keeps the cache (rolling restart)', async () => {
      const first = await cacheAccount('agent-kept', 'kept');
      first.end();
      await first.ended;
      await eventually('account kept INACTIVE', async () => (await state('kept')) === 'INACTIVE');
      await new Promise((r) => setTimeout(r, GRACE * 100));
      const second = open();
      await connectAgent(second, 'agent-kept', [{ name: 'kept' }]);
      await eventually('account kept ACTIVE', async () => (await state('kept')) === 'ACTIVE');
      await new Promise((r) => setTimeout(r, GRACE * 1000 + 1000));
      assert.equal(await state('kept'), 'ACTIVE');
      assert.equal(await count('objects', 'kept'), 2);
      assert.equal(await count('watch_states', 'kept'), 1);
      second.end();
    });

    test('dynamic and admin-deactivated accounts are kept', async () => {
      assert.equal((await rest(t, 'POST', '/armory/accounts', [{ name: 'dyn-kept' }])).status, 201);
      const s = await cacheAccount('agent-admin', 'admin-off');
      assert.equal((await rest(t, 'PATCH', '/armory/accounts', [{ name: 'admin-off', state: 'INACTIVE' }])).status, 200);
      s.end();
      await s.ended;
      await eventually('account admin-off INACTIVE', async () => (await state('admin-off')) === 'INACTIVE');
      await new Promise((r) => setTimeout(r, GRACE * 1000 + 1000));
      assert.equal(await state('dyn-kept'), 'INACTIVE');
      assert.equal(await state('admin-off'), 'INACTIVE');
      assert.equal(await count('objects', 'admin-off'), 2);
    });

    test('concurrent sweepers remove each old account once, never fail, and leave re-activated accounts alone', async () => {
      const names = Array.from({ length: 8 }, (_, i) => `old-${i}`);
      for (const name of names) {
        await t.query(
          `insert into accounts (name, state, source, updated_at) values ('${name}', 'INACTIVE', 'agent', now() - interval '1 hour')`,
        );
        await t.query(
          `insert into objects (account, api_version, kind, namespace, name, uid, resource_version, labels, object)
           values ('${name}', 'v1', 'ConfigMap', 'default', 'x', 'u', '1', '{}', '{}')`,
        );
      }
      // Back in service meanwhile: ACTIVE with an old timestamp is not removable.
      await t.query(
        `insert into accounts (name, state, source, updated_at) values ('old-active', 'ACTIVE', 'agent', now() - interval '1 hour')`,
      );
      const sweepers = Array.from({ length: 4 }, () =>
        createAccountCleanup({
          database: t.gateway.database,
          graceSeconds: GRACE,
          intervalMs: 1000,
          logger: createSilentLogger(),
          removeCaches: removeAccountCaches,
        }),
      );
      const results = await Promise.all(sweepers.map((s) => s.sweep()));
      const cleaned = results.flat().map((c) => c.name);
      assert.equal(new Set(cleaned).size, cleaned.length, 'an account was cleaned by two sweepers');
      for (const name of names) {
        assert.equal(await state(name), undefined);
        assert.equal(await count('objects', name), 0);
      }
      assert.equal(await state('old-active'), 'ACTIVE');
      // Only this test's accounts: the earlier tests' agents ended without waiting, so their accounts ('gone', 'kept')
      // may come due during this pass and be removed with a few seconds without agent, rightly.
      for (const c of results.flat().filter((c) => names.includes(c.name))) {
        assert.ok(c.withoutAgentSeconds >= 3500, `${c.name}: ${c.withoutAgentSeconds}s`);
      }
    });
  });
}
