/**
 * Account management over REST against a real gateway and real agent streams: every route, the state machine with
 * its recorded transitions, and the ADD/REMOVE commands pushed to the agents of the account's zone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AccountAction, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { accountInfo, accountsChanged, nextOf, rest, transitionsOf } from './accounts-helpers.js';
import {
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

for (const driver of testDrivers()) {
  describe(`account management over REST (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    const open = () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      streams.push(s);
      return s;
    };
    before(async () => {
      // Generous: under load an agent may take seconds to answer an ADD; the timeout itself has a test of its own below.
      t = await startTestGateway(driver, { accounts: { activationTimeoutSeconds: 60 } });
    });
    after(async () => {
      for (const s of streams) s.end();
      await Promise.all(streams.map((s) => s.ended));
      await t?.close();
    });

    test('POST /armory/accounts defines INACTIVE accounts; 409 lists duplicates and creates nothing; GET pages with total', async () => {
      const created = await rest(t, 'POST', '/armory/accounts', [
        { name: 'def-a', kubeconfigFile: '/k/a', namespaces: ['ns1'], kinds: ['Deployment.apps'], zoneId: 'z1' },
        { name: 'def-b', serviceAccount: true, customResourceDefinitions: [{ kind: 'Widget.example.com', scope: 'Namespaced' }] },
      ]);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(
        created.body.items.map((a: any) => [a.name, a.state, a.source, a.zoneId ?? '']),
        [
          ['def-a', 'INACTIVE', 'dynamic', 'z1'],
          ['def-b', 'INACTIVE', 'dynamic', ''],
        ],
      );
      assert.equal(created.body.items[0].definition.kubeconfigFile, '/k/a');
      assert.deepEqual(created.body.items[1].definition.customResources, [{ kind: 'Widget.example.com', scope: 'Namespaced' }]);

      const dup = await rest(t, 'POST', '/armory/accounts', [{ name: 'def-c' }, { name: 'def-a' }]);
      assert.equal(dup.status, 409);
      assert.equal(dup.body.error, 'conflict');
      assert.deepEqual(dup.body.duplicates, ['def-a']);
      assert.equal((await rest(t, 'GET', '/armory/accounts/def-c')).status, 404, 'nothing of a refused body is created');

      const page1 = await rest(t, 'GET', '/armory/accounts?page=1&limit=1');
      assert.equal(page1.status, 200);
      assert.equal(page1.body.page, 1);
      assert.equal(page1.body.limit, 1);
      assert.equal(page1.body.total, 2);
      assert.deepEqual(
        page1.body.items.map((a: any) => a.name),
        ['def-a'],
      );
      const page2 = await rest(t, 'GET', '/armory/accounts?page=2&limit=1');
      assert.deepEqual(
        page2.body.items.map((a: any) => a.name),
        ['def-b'],
      );

      const one = await rest(t, 'GET', '/armory/accounts/def-a');
      assert.equal(one.status, 200);
      assert.equal(one.body.name, 'def-a');
      assert.deepEqual(
        one.body.transitions.map((x: any) => [x.fromState ?? '', x.toState, x.actor]),
        [['', 'INACTIVE', 'admin:anonymous']],
      );
      assert.equal((await rest(t, 'GET', '/armory/accounts/nope')).status, 404);
    });

    test('PATCH ACTIVE pushes ADD to agents of the zone → ACTIVATING → ACTIVE once an agent caches it; INACTIVE → DEACTIVATING → INACTIVE', async () => {
      const inZone = open();
      await connectAgent(inZone, 'agent-z1', []); // zone "test"
      const patched = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'def-b', state: 'ACTIVE', zoneId: 'test' }]);
      assert.equal(patched.status, 200, JSON.stringify(patched.body));
      assert.equal(patched.body.items[0].state, 'ACTIVATING');
      const add = await nextOf(inZone, 'accountCommand');
      assert.equal(add.action, AccountAction.ADD);
      assert.equal(add.account?.name, 'def-b');
      assert.equal(add.account?.serviceAccount, true);

      inZone.send(accountsChanged(1, [accountInfo('def-b')]));
      const verdicts = await nextOf(inZone, 'verdicts');
      assert.equal(verdicts.accounts[0]?.verdict, Verdict.CACHING);
      const active = await rest(t, 'GET', '/armory/accounts/def-b');
      assert.equal(active.body.state, 'ACTIVE');
      assert.equal(active.body.transitions[0].actor, 'agent:agent-z1');

      // Its events are stored like any account's.
      inZone.send(events(1, [event('def-b', EventType.ADDED, configMap('cm-1', 10))]));
      await inZone.waitForAck(1);

      const off = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'def-b', state: 'INACTIVE' }]);
      assert.equal(off.body.items[0].state, 'DEACTIVATING');
      const remove = await nextOf(inZone, 'accountCommand');
      assert.equal(remove.action, AccountAction.REMOVE);
      assert.equal(remove.account?.name, 'def-b');
      inZone.send(accountsChanged(2, [], ['def-b']));
      await eventually('account def-b INACTIVE', async () => (await rest(t, 'GET', '/armory/accounts/def-b')).body.state === 'INACTIVE');
      assert.deepEqual(await transitionsOf(t, 'def-b'), [
        '(new)→INACTIVE',
        'INACTIVE→ACTIVATING',
        'ACTIVATING→ACTIVE',
        'ACTIVE→DEACTIVATING',
        'DEACTIVATING→INACTIVE',
      ]);
    });

    test('an account no agent takes becomes FAILED after activationTimeoutSeconds', async () => {
      // A gateway of its own with a short timeout, so the other tests' agents are never raced by it.
      const short = await startTestGateway(driver, { accounts: { activationTimeoutSeconds: 0.5 } });
      try {
        const put = await rest(short, 'PUT', '/armory/accounts/dynamic', [{ name: 'lonely', kubeconfigFile: '/k', zoneId: 'nowhere' }]);
        assert.equal(put.status, 200, JSON.stringify(put.body));
        assert.equal(put.body.items[0].state, 'ACTIVATING');
        await eventually(
          'account lonely FAILED',
          async () => (await rest(short, 'GET', '/armory/accounts/lonely')).body.state === 'FAILED',
        );
        const got = await rest(short, 'GET', '/armory/accounts/lonely');
        assert.match(got.body.reason, /no agent started serving it within 0.5s/);
        assert.equal(got.body.transitions[0].actor, 'gateway');
      } finally {
        await short.close();
      }
    });

    test('an agent that connects later gets the ADD of the dynamic accounts of its zone after its Welcome', async () => {
      assert.equal(
        (await rest(t, 'PUT', '/armory/accounts/dynamic', [{ name: 'for-test-zone', kubeconfigFile: '/k', zoneId: 'test' }])).status,
        200,
      );
      assert.equal((await rest(t, 'PUT', '/armory/accounts/dynamic', [{ name: 'for-all-zones', kubeconfigFile: '/k' }])).status, 200);
      const late = open();
      await connectAgent(late, 'agent-late', []);
      const names: string[] = [];
      // Until the two expected commands came (a hang bound), then a second more for any it should not get.
      for (;;) {
        const cmd = await nextOf(late, 'accountCommand', names.length < 2 ? 30_000 : 1000).catch(() => undefined);
        if (!cmd) break;
        names.push(cmd.account!.name);
      }
      assert.deepEqual(names.sort(), ['for-all-zones', 'for-test-zone'], 'zone "nowhere" accounts are not told to zone "test"');
      late.end();
    });

    test('a zone change of an active account goes TO_MIGRATE, then ACTIVATING in the new zone', async () => {
      const z = open();
      await connectAgent(z, 'agent-mig', []);
      await rest(t, 'PUT', '/armory/accounts/dynamic', [{ name: 'mover', kubeconfigFile: '/k', zoneId: 'test' }]);
      assert.equal((await nextOf(z, 'accountCommand')).action, AccountAction.ADD);
      z.send(accountsChanged(1, [accountInfo('mover')]));
      await nextOf(z, 'verdicts');
      const moved = await rest(t, 'PATCH', '/armory/accounts/dynamic', [{ name: 'mover', kubeconfigFile: '/k', zoneId: 'other' }]);
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(moved.body.items[0].state, 'ACTIVATING');
      assert.equal(moved.body.items[0].zoneId, 'other');
      const cmd = await nextOf(z, 'accountCommand');
      assert.equal(cmd.action, AccountAction.REMOVE, 'the old zone is told to stop');
      const history = await transitionsOf(t, 'mover');
      assert.deepEqual(history.slice(-2), ['ACTIVE→TO_MIGRATE', 'TO_MIGRATE→ACTIVATING']);
      z.send(accountsChanged(2, [], ['mover']));
      z.end();
    });

    test('POST|PATCH /armory/accounts/dynamic: 409 on existing names, 404 on unknown names, nothing changed', async () => {
      const post = await rest(t, 'POST', '/armory/accounts/dynamic', [{ name: 'dyn-new' }, { name: 'def-a' }]);
      assert.equal(post.status, 409);
      assert.deepEqual(post.body.duplicates, ['def-a']);
      assert.equal((await rest(t, 'GET', '/armory/accounts/dyn-new')).status, 404);
      const patch = await rest(t, 'PATCH', '/armory/accounts/dynamic', [{ name: 'def-a' }, { name: 'ghost' }]);
      assert.equal(patch.status, 404);
      assert.deepEqual(patch.body.unknown, ['ghost']);
      assert.equal((await rest(t, 'GET', '/armory/accounts/def-a')).body.state, 'INACTIVE');
      const ok = await rest(t, 'POST', '/armory/accounts/dynamic', [{ name: 'dyn-new', zoneId: 'nowhere' }]);
      assert.equal(ok.status, 201);
      assert.equal(ok.body.items[0].state, 'ACTIVATING');
    });

    test('an admin-INACTIVE agent account: TO_DEACTIVATE while streamed, INACTIVE when the stream ends, then REFUSED with the reason', async () => {
      const a = open();
      const w = await connectAgent(a, 'agent-cfg', [{ name: 'cfg-acc' }]);
      assert.equal(w.accounts[0]?.verdict, Verdict.CACHING);
      const off = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'cfg-acc', state: 'INACTIVE' }]);
      assert.equal(off.body.items[0].state, 'TO_DEACTIVATE');
      a.end();
      await a.ended;
      await eventually(
        'account cfg-acc INACTIVE',
        async () => (await rest(t, 'GET', '/armory/accounts/cfg-acc')).body.state === 'INACTIVE',
      );
      const b = open();
      const w2 = await connectAgent(b, 'agent-cfg', [{ name: 'cfg-acc' }]);
      assert.equal(w2.accounts[0]?.verdict, Verdict.REFUSED);
      assert.match(w2.accounts[0]!.reason, /deactivated by an admin/);
      assert.equal((await rest(t, 'GET', '/armory/accounts/cfg-acc')).body.state, 'INACTIVE');
      b.end();
      await b.ended;
      const on = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'cfg-acc', state: 'ACTIVE' }]);
      assert.equal(on.status, 200);
      const c = open();
      assert.equal((await connectAgent(c, 'agent-cfg', [{ name: 'cfg-acc' }])).accounts[0]?.verdict, Verdict.CACHING);
      assert.deepEqual(await transitionsOf(t, 'cfg-acc'), [
        '(new)→ACTIVE',
        'ACTIVE→TO_DEACTIVATE',
        'TO_DEACTIVATE→INACTIVE',
        'INACTIVE→ACTIVE',
      ]);
      const del = await rest(t, 'DELETE', '/armory/accounts/cfg-acc');
      assert.equal(del.status, 409, 'an account streamed from an agent configuration cannot be deleted');
      c.end();
      await c.ended;
    });

    test('DELETE /armory/accounts and /armory/accounts/{name} remove rows, cache and watch state; unknown names → 404, nothing deleted', async () => {
      const a = open();
      await connectAgent(a, 'agent-del', [{ name: 'gone' }]);
      a.send(events(1, [event('gone', EventType.ADDED, configMap('x', 5))]));
      await a.waitForAck(1);
      a.end();
      await a.ended;
      await eventually('account gone INACTIVE', async () => (await rest(t, 'GET', '/armory/accounts/gone')).body.state === 'INACTIVE');
      await t.query(
        `insert into watch_states (account, api_version, kind, watch_namespace, resource_version) values ('gone', 'v1', 'ConfigMap', 'extra', '5')`,
      );

      const bad = await rest(t, 'DELETE', '/armory/accounts', ['gone', 'ghost']);
      assert.equal(bad.status, 404);
      assert.deepEqual(bad.body.unknown, ['ghost']);
      assert.equal((await t.query(`select 1 from objects where account = 'gone'`)).length, 1);

      const ok = await rest(t, 'DELETE', '/armory/accounts', ['gone', 'def-a']);
      assert.equal(ok.status, 200);
      assert.deepEqual(ok.body.deleted, ['gone', 'def-a']);
      for (const table of ['objects', 'watch_states'])
        assert.equal((await t.query(`select 1 from ${table} where account in ('gone', 'def-a')`)).length, 0, table);
      assert.equal((await t.query(`select 1 from accounts where name in ('gone', 'def-a')`)).length, 0);
      assert.deepEqual((await transitionsOf(t, 'gone')).at(-1), 'INACTIVE→DELETING');

      assert.equal((await rest(t, 'POST', '/armory/accounts', [{ name: 'single', kubeconfigFile: '/k' }])).status, 201);
      assert.equal((await rest(t, 'DELETE', '/armory/accounts/single')).status, 200);
      assert.equal((await rest(t, 'GET', '/armory/accounts/single')).status, 404);
      assert.equal((await rest(t, 'DELETE', '/armory/accounts/single')).status, 404);
    });

    test('deleting a dynamic account an agent serves: DELETING, REMOVE pushed, row gone; events that raced the delete are purged once the agent lets go', async () => {
      const a = open();
      await connectAgent(a, 'agent-dyn-del', []);
      await rest(t, 'PUT', '/armory/accounts/dynamic', [{ name: 'dyn-del', kubeconfigFile: '/k', zoneId: 'test' }]);
      await nextOf(a, 'accountCommand');
      a.send(accountsChanged(1, [accountInfo('dyn-del')]));
      await nextOf(a, 'verdicts');
      a.send(events(1, [event('dyn-del', EventType.ADDED, configMap('before', 1))]));
      await a.waitForAck(1);

      const del = await rest(t, 'DELETE', '/armory/accounts', ['dyn-del']);
      assert.equal(del.status, 200, JSON.stringify(del.body));
      const cmd = await nextOf(a, 'accountCommand');
      assert.equal(cmd.action, AccountAction.REMOVE);
      assert.equal((await t.query(`select 1 from accounts where name = 'dyn-del'`)).length, 0);
      assert.deepEqual((await transitionsOf(t, 'dyn-del')).at(-1), 'ACTIVE→DELETING');

      a.send(events(2, [event('dyn-del', EventType.ADDED, configMap('raced', 2))]));
      await a.waitForAck(2);
      a.send(accountsChanged(2, [], ['dyn-del']));
      await eventually(
        'the objects of dyn-del deleted',
        async () => (await t.query(`select 1 from objects where account = 'dyn-del'`)).length === 0,
      );
      assert.equal((await t.query(`select 1 from watch_states where account = 'dyn-del'`)).length, 0);
      a.end();
      await a.ended;
    });

    test('a delete the database refuses leaves the account DELETE_FAILED with a reason; deleting again succeeds', async () => {
      await rest(t, 'POST', '/armory/accounts', [{ name: 'stuck' }]);
      await t.query(
        `create function refuse_stuck() returns trigger language plpgsql as $$ begin raise exception 'refused by test trigger'; end $$`,
      );
      await t.query(
        `create trigger refuse_stuck before delete on accounts for each row when (old.name = 'stuck') execute function refuse_stuck()`,
      );
      const failed = await rest(t, 'DELETE', '/armory/accounts/stuck');
      assert.equal(failed.status, 500);
      assert.deepEqual(failed.body, { error: 'internal', message: 'internal error' });
      const got = await rest(t, 'GET', '/armory/accounts/stuck');
      assert.equal(got.body.state, 'DELETE_FAILED');
      assert.match(got.body.reason, /delete failed/);
      assert.doesNotMatch(got.body.reason, /refused by test trigger|delete from/, 'no SQL or driver text in the reason');
      assert.deepEqual((await transitionsOf(t, 'stuck')).slice(-2), ['INACTIVE→DELETING', 'DELETING→DELETE_FAILED']);
      await t.query(`drop trigger refuse_stuck on accounts`);
      assert.equal((await rest(t, 'DELETE', '/armory/accounts/stuck')).status, 200);
      assert.equal((await rest(t, 'GET', '/armory/accounts/stuck')).status, 404);
    });
  });
}
