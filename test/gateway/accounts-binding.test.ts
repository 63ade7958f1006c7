/**
 * Name binding (docs/architecture.md, rule 8) over real agent streams: a second cluster claiming a bound name is refused, the
 * refusal is visible in ListAccounts and GET /armory/accounts/{name}, the first stream keeps storing its events, and
 * an admin's ReleaseBinding (refused while the account is streamed) lets the second cluster claim it. Plus the
 * AccountService RPC round trip (create, activate, page, get with transitions, put, delete).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { rest } from './accounts-helpers.js';
import { Code, ConnectError, configMap, connectAgent, event, events, EventType, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

const FIRST = { apiHost: 'https://first.example:6443', caFingerprint: '11'.repeat(32) };
const SECOND = { apiHost: 'https://second.example:6443', caFingerprint: '22'.repeat(32) };

for (const driver of testDrivers()) {
  describe(`account name binding and the AccountService RPCs (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: ReturnType<typeof createClient<typeof AccountService>>;
    before(async () => {
      t = await startTestGateway(driver);
      client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      await t?.close();
    });

    test('a second cluster claiming a bound name is refused, the refusal is listed, the first keeps working; release lets the second claim it', async () => {
      const first = openAgentStream(t.gateway.grpcUrl);
      assert.equal((await connectAgent(first, 'agent-first', [{ name: 'shared', ...FIRST }])).accounts[0]?.verdict, Verdict.CACHING);
      first.send(events(1, [event('shared', EventType.ADDED, configMap('from-first', 1))]));
      await first.waitForAck(1);

      const second = openAgentStream(t.gateway.grpcUrl);
      const refused = (await connectAgent(second, 'agent-second', [{ name: 'shared', ...SECOND }])).accounts[0]!;
      assert.equal(refused.verdict, Verdict.REFUSED);
      assert.match(refused.reason, /bound to cluster https:\/\/first\.example:6443/);

      const { accounts } = await client.listAccounts({ name: 'shared' });
      const listed = accounts[0]!;
      assert.equal(listed.state, 'ACTIVE', 'the bound account keeps its state');
      assert.equal(listed.apiHost, FIRST.apiHost);
      assert.equal(listed.refusedClaim?.agentId, 'agent-second');
      assert.equal(listed.refusedClaim?.apiHost, SECOND.apiHost);
      assert.equal(listed.refusedClaim?.caFingerprint, SECOND.caFingerprint);
      assert.equal(listed.refusedClaim?.reason, refused.reason);
      assert.ok(listed.refusedClaim?.time);
      const viaRest = await rest(t, 'GET', '/armory/accounts?limit=10');
      assert.equal(viaRest.body.items.find((a: any) => a.name === 'shared').refusedClaim.agentId, 'agent-second');

      // The first stream keeps working: its next events are stored.
      first.send(events(2, [event('shared', EventType.ADDED, configMap('still-first', 2))]));
      await first.waitForAck(2);
      assert.deepEqual(
        (await t.query<{ name: string }>(`select name from objects where account = 'shared' order by name`)).map((r) => r.name),
        ['from-first', 'still-first'],
      );

      // No release while the first cluster streams it.
      await assert.rejects(
        client.releaseBinding({ name: 'shared' }),
        (e: unknown) => e instanceof ConnectError && e.code === Code.FailedPrecondition,
      );
      assert.equal((await rest(t, 'DELETE', '/armory/accounts/shared/binding')).status, 409);
      second.end();
      await second.ended;

      first.end();
      await first.ended;
      await eventually('account shared INACTIVE', async () => (await client.getAccount({ name: 'shared' })).account?.state === 'INACTIVE');
      const released = await rest(t, 'DELETE', '/armory/accounts/shared/binding');
      assert.equal(released.status, 200, JSON.stringify(released.body));
      assert.equal(released.body.apiHost ?? '', '');
      assert.equal(released.body.refusedClaim, undefined);
      assert.equal((await t.query(`select 1 from objects where account = 'shared'`)).length, 0, "the first cluster's objects are gone");
      assert.equal((await t.query(`select 1 from watch_states where account = 'shared'`)).length, 0);

      const again = openAgentStream(t.gateway.grpcUrl);
      assert.equal((await connectAgent(again, 'agent-second', [{ name: 'shared', ...SECOND }])).accounts[0]?.verdict, Verdict.CACHING);
      assert.equal((await client.getAccount({ name: 'shared' })).account?.apiHost, SECOND.apiHost);
      again.end();
      await again.ended;
    });

    test('AccountService round trip: create, page, activate, get with transitions, put (upsert), delete', async () => {
      const spec = (name: string, zoneId = '') => ({ definition: { name, kubeconfigFile: `/k/${name}`, namespaces: ['default'] }, zoneId });
      const created = await client.createAccounts({ accounts: [spec('rpc-a', 'z9'), spec('rpc-b')] });
      assert.deepEqual(
        created.accounts.map((a) => [a.name, a.state, a.source, a.zoneId]),
        [
          ['rpc-a', 'INACTIVE', 'dynamic', 'z9'],
          ['rpc-b', 'INACTIVE', 'dynamic', ''],
        ],
      );
      await assert.rejects(
        client.createAccounts({ accounts: [spec('rpc-a')] }),
        (e: unknown) => e instanceof ConnectError && e.code === Code.AlreadyExists,
      );

      const page = await client.listAccounts({ page: 2, limit: 1 });
      assert.equal(page.total, 3, 'rpc-a, rpc-b, shared');
      assert.deepEqual(
        page.accounts.map((a) => a.name),
        ['rpc-b'],
      );

      const activated = await client.setAccountStates({ accounts: [{ name: 'rpc-a', state: 'ACTIVE' }] });
      assert.equal(activated.accounts[0]?.state, 'ACTIVATING');
      const got = await client.getAccount({ name: 'rpc-a' });
      assert.equal(got.account?.definition?.kubeconfigFile, '/k/rpc-a');
      assert.deepEqual(
        got.transitions.map((x) => [x.fromState, x.toState, x.actor]),
        [
          ['INACTIVE', 'ACTIVATING', 'admin:anonymous'],
          ['', 'INACTIVE', 'admin:anonymous'],
        ],
      );

      const put = await client.putDynamicAccounts({ accounts: [spec('rpc-b', 'z9'), spec('rpc-c')] });
      assert.deepEqual(
        put.accounts.map((a) => [a.name, a.state]),
        [
          ['rpc-b', 'ACTIVATING'],
          ['rpc-c', 'ACTIVATING'],
        ],
      );
      const deleted = await client.deleteAccounts({ names: ['rpc-a', 'rpc-b', 'rpc-c'] });
      assert.deepEqual(deleted.deleted, ['rpc-a', 'rpc-b', 'rpc-c']);
      assert.deepEqual(
        (await client.listAccounts({})).accounts.map((a) => a.name),
        ['shared'],
      );
    });
  });
}
