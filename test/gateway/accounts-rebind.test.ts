/**
 * An admin moving an account's identity binding (docs/accounts.md, "Identity binding") over REST
 * (`PUT /armory/accounts/{name}/binding`) and RPC (`AccountService.RebindAccount`): admin only, bad input changes
 * nothing, the move is audited as a transition with the admin as actor, the old identity's live lease ends (its stream
 * is told REFUSED) and the new identity caches the account.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { rest } from './accounts-helpers.js';
import { ADMIN, AGENT_A, AGENT_B, CLUSTER, IDENTITY_GATEWAY, READER, WRITER, verdictsFor } from './identity-binding-helpers.js';
import {
  Code,
  ConnectError,
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
  describe(`admin rebinding of account identities (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let client: ReturnType<typeof createClient<typeof AccountService>>;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, IDENTITY_GATEWAY);
      client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
    });
    const open = (bearer: string) => {
      const s = openAgentStream(t.gateway.grpcUrl, { bearer });
      streams.push(s);
      return s;
    };
    const as = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });
    const put = (name: string, body: unknown, token = ADMIN) => rest(t, 'PUT', `/armory/accounts/${name}/binding`, body, as(token));
    const snapshot = async () => t.query(`select name, state, bound_identity, lease_epoch, session_id from accounts order by name`);
    const transitions = async () => t.query(`select account, from_state, to_state, reason, actor from account_transitions order by id`);

    test('REST: only admins move a binding; bad input changes nothing; the old lease ends and the new identity caches', async () => {
      const a = open(AGENT_A);
      assert.equal((await connectAgent(a, 'agent-a', [{ name: 'cluster-r', ...CLUSTER }])).accounts[0]!.verdict, Verdict.CACHING);
      a.send(events(1, [event('cluster-r', EventType.ADDED, configMap('from-a', 1))]));
      await a.waitForAck(1);

      const rows = await snapshot();
      const history = await transitions();
      for (const token of [READER, WRITER, AGENT_A, AGENT_B]) {
        const res = await put('cluster-r', { identity: 'token:agent-b' }, token);
        assert.equal(res.status, 403, `${token}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error, 'permission_denied');
      }
      assert.equal((await rest(t, 'PUT', '/armory/accounts/cluster-r/binding', { identity: 'token:agent-b' })).status, 401);
      const bad: [string, unknown, number][] = [
        ['cluster-r', {}, 400],
        ['cluster-r', { identity: '' }, 400],
        ['cluster-r', { identity: 'agent-b' }, 400],
        ['cluster-r', { identity: 'token:' }, 400],
        ['cluster-r', { identity: 'password:agent-b' }, 400],
        ['cluster-r', { identity: 'token:agent-b\n' }, 400],
        ['cluster-r', { identity: 42 }, 400],
        ['cluster-r', [{ identity: 'token:agent-b' }], 400],
        ['cluster-r', { identity: 'token:agent-b', force: true }, 400],
        ['cluster-unknown', { identity: 'token:agent-b' }, 404],
      ];
      for (const [name, body, status] of bad) {
        const res = await put(name, body);
        assert.equal(res.status, status, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
        assert.equal(typeof res.body.error, 'string');
        assert.equal(typeof res.body.message, 'string');
      }
      assert.equal(
        (
          await rest(t, 'PUT', '/armory/accounts/cluster-r/binding', 'not json', {
            raw: true,
            headers: { authorization: `Bearer ${ADMIN}` },
          })
        ).status,
        400,
      );
      assert.deepEqual(await snapshot(), rows, 'refused requests change nothing');
      assert.deepEqual(await transitions(), history);

      const moved = await put('cluster-r', { identity: 'token:agent-b' });
      assert.equal(moved.status, 200, JSON.stringify(moved.body));
      assert.equal(moved.body.boundIdentity, 'token:agent-b');
      assert.equal(moved.body.state, 'INACTIVE', "the old identity's lease ended");
      const got = (await rest(t, 'GET', '/armory/accounts/cluster-r', undefined, as(READER))).body;
      assert.equal(got.boundIdentity, 'token:agent-b');
      const audit = got.transitions[0];
      assert.equal(audit.actor, 'admin:admin');
      assert.equal(audit.fromState, 'ACTIVE');
      assert.equal(audit.toState, 'INACTIVE');
      assert.match(audit.reason, /identity binding moved from token:agent-a to token:agent-b/);

      // The old holder can no longer write, and its stream is told REFUSED once its replica sees the lease is gone.
      await eventually('a REFUSED verdict for cluster-r', async () => verdictsFor(a, 'cluster-r').includes(Verdict.REFUSED), {
        timeoutMs: 30_000,
      });
      const b = open(AGENT_B);
      const wb = await connectAgent(b, 'agent-b', [{ name: 'cluster-r', ...CLUSTER }]);
      assert.equal(wb.accounts[0]!.verdict, Verdict.CACHING, wb.accounts[0]!.reason);
      b.send(events(1, [event('cluster-r', EventType.ADDED, configMap('from-b', 2))]));
      await b.waitForAck(1);
      a.send(events(2, [event('cluster-r', EventType.ADDED, configMap('late-from-a', 3))]));
      await a.waitForAck(2);
      const names = (await t.query<{ name: string }>(`select name from objects where account = 'cluster-r' order by name`)).map(
        (r) => r.name,
      );
      assert.deepEqual(names, ['from-a', 'from-b'], 'the cache is kept; the old identity writes nothing more');

      // Rebinding to the same identity is a no-op (nothing recorded).
      const count = (await transitions()).length;
      assert.equal((await put('cluster-r', { identity: 'token:agent-b' })).status, 200);
      assert.equal((await transitions()).length, count);
      for (const s of [a, b]) s.end();
      await Promise.all([a.ended, b.ended]);
    });

    test('RPC: RebindAccount is admin only, validates, and audits; GetAccount and ListAccounts show the bound identity', async () => {
      const b = open(AGENT_B);
      assert.equal((await connectAgent(b, 'agent-b', [{ name: 'cluster-q' }])).accounts[0]!.verdict, Verdict.CACHING);
      b.end();
      await b.ended;
      await eventually(
        'account cluster-q INACTIVE',
        async () => (await client.getAccount({ name: 'cluster-q' }, as(READER))).account?.state === 'INACTIVE',
      );
      assert.equal((await client.listAccounts({ name: 'cluster-q' }, as(READER))).accounts[0]?.boundIdentity, 'token:agent-b');

      const rows = await snapshot();
      const history = await transitions();
      const code = (c: Code) => (e: unknown) => e instanceof ConnectError && e.code === c;
      for (const token of [READER, WRITER, AGENT_A, AGENT_B]) {
        await assert.rejects(
          client.rebindAccount({ name: 'cluster-q', identity: 'token:agent-a' }, as(token)),
          code(Code.PermissionDenied),
        );
      }
      await assert.rejects(client.rebindAccount({ name: 'cluster-q', identity: '' }, as(ADMIN)), code(Code.InvalidArgument));
      await assert.rejects(client.rebindAccount({ name: 'cluster-q', identity: 'nobody' }, as(ADMIN)), code(Code.InvalidArgument));
      await assert.rejects(client.rebindAccount({ name: '', identity: 'token:agent-a' }, as(ADMIN)), code(Code.InvalidArgument));
      await assert.rejects(client.rebindAccount({ name: 'cluster-nope', identity: 'token:agent-a' }, as(ADMIN)), code(Code.NotFound));
      assert.deepEqual(await snapshot(), rows);
      assert.deepEqual(await transitions(), history);

      const { account } = await client.rebindAccount({ name: 'cluster-q', identity: 'token:agent-a' }, as(ADMIN));
      assert.equal(account?.boundIdentity, 'token:agent-a');
      const got = await client.getAccount({ name: 'cluster-q' }, as(READER));
      assert.equal(got.account?.boundIdentity, 'token:agent-a');
      assert.equal(got.transitions[0]?.actor, 'admin:admin');
      assert.equal(got.transitions[0]?.fromState, 'INACTIVE');
      assert.equal(got.transitions[0]?.toState, 'INACTIVE');
      assert.match(got.transitions[0]!.reason, /identity binding moved from token:agent-b to token:agent-a/);

      const a = open(AGENT_A);
      assert.equal((await connectAgent(a, 'agent-a', [{ name: 'cluster-q' }])).accounts[0]!.verdict, Verdict.CACHING);
      const again = open(AGENT_B);
      assert.equal((await connectAgent(again, 'agent-b', [{ name: 'cluster-q' }])).accounts[0]!.verdict, Verdict.REFUSED);
      for (const s of [a, again]) s.end();
      await Promise.all([a.ended, again.ended]);
    });
  });
}
