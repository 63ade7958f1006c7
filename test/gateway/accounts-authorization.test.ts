/**
 * Which agent identity may register which account names (authorization rules' `accounts` patterns), on a gateway
 * with token authentication (no insecure mode): a name outside the identity's patterns is REFUSED with a reason
 * naming the identity, in the Hello and in a later AccountsChanged, and the refusal leaves the account's row as it
 * was. Admin changes record the admin's token subject as the actor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { accountInfo, accountsChanged, nextOf, rest } from './accounts-helpers.js';
import { connectAgent, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

const AGENT_TOKEN = 'team-a-agent-token-0123456789abcdef';
const ADMIN_TOKEN = 'ops-admin-token-0123456789abcdef';

for (const driver of testDrivers()) {
  describe(`agent identities may register only their account names (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        insecure: false,
        auth: {
          tokens: [
            { subject: 'team-a-agent', token: AGENT_TOKEN },
            { subject: 'ops', token: ADMIN_TOKEN },
          ],
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^team-a-agent$', roles: ['agent'], accounts: ['team-a-*'] },
            { kind: 'token', subject: '^ops$', roles: ['admin', 'read'], accounts: [] },
          ],
        },
      });
    });
    after(async () => {
      for (const s of streams) s.end();
      await Promise.all(streams.map((s) => s.ended));
      await t?.close();
    });
    const admin = { headers: { Authorization: `Bearer ${ADMIN_TOKEN}` } };

    test("a name outside the identity's patterns is REFUSED with the reason and its row is untouched; admin actor is the token subject", async () => {
      const created = await rest(t, 'POST', '/armory/accounts', [{ name: 'team-b-db', kubeconfigFile: '/k' }], admin);
      assert.equal(created.status, 201, JSON.stringify(created.body));
      const rowBefore = JSON.stringify(await t.query(`select * from accounts where name = 'team-b-db'`));
      const transitions = await t.query<{ actor: string }>(`select actor from account_transitions where account = 'team-b-db'`);
      assert.deepEqual(
        transitions.map((r) => r.actor),
        ['admin:ops'],
      );

      const s = openAgentStream(t.gateway.grpcUrl, { bearer: AGENT_TOKEN });
      streams.push(s);
      const welcome = await connectAgent(s, 'agent-team-a', [{ name: 'team-a-web' }, { name: 'team-b-db' }, { name: 'team-b-new' }]);
      assert.deepEqual(
        welcome.accounts.map((a) => [a.account, Verdict[a.verdict]]),
        [
          ['team-a-web', 'CACHING'],
          ['team-b-db', 'REFUSED'],
          ['team-b-new', 'REFUSED'],
        ],
      );
      assert.equal(welcome.accounts[1]!.reason, 'agent identity team-a-agent may not register account team-b-db');
      assert.equal(welcome.accounts[2]!.reason, 'agent identity team-a-agent may not register account team-b-new');
      assert.equal(
        JSON.stringify(await t.query(`select * from accounts where name = 'team-b-db'`)),
        rowBefore,
        'the refused claim touched the row',
      );
      assert.equal((await t.query(`select 1 from accounts where name = 'team-b-new'`)).length, 0);
      assert.equal((await t.query(`select 1 from account_transitions where account = 'team-b-new'`)).length, 0);

      s.send(accountsChanged(1, [accountInfo('team-b-later'), accountInfo('team-a-later')]));
      const verdicts = await nextOf(s, 'verdicts');
      assert.deepEqual(
        verdicts.accounts.map((a) => [a.account, Verdict[a.verdict]]),
        [
          ['team-b-later', 'REFUSED'],
          ['team-a-later', 'CACHING'],
        ],
      );
      assert.match(verdicts.accounts[0]!.reason, /may not register account team-b-later/);
      assert.equal((await t.query(`select 1 from accounts where name = 'team-b-later'`)).length, 0);
    });

    test('dynamic account definitions reach only agents whose identity may register the name (at the Welcome and when pushed)', async () => {
      const defined = await rest(
        t,
        'PUT',
        '/armory/accounts/dynamic',
        [
          { name: 'team-a-dyn', kubeconfigFile: '/k/team-a-dyn' },
          { name: 'team-b-dyn', kubeconfigFile: '/k/team-b-dyn' },
        ],
        admin,
      );
      assert.equal(defined.status, 200, JSON.stringify(defined.body));
      const s = openAgentStream(t.gateway.grpcUrl, { bearer: AGENT_TOKEN });
      streams.push(s);
      await connectAgent(s, 'agent-team-a-dyn', [{ name: 'team-a-own' }]);
      const pushed = () =>
        s.received
          .filter((m) => m.message.case === 'accountCommand')
          .map((m) => (m.message.value as { account?: { name: string } }).account?.name);
      await eventually('team-a-dyn pushed to the agent', async () => pushed().includes('team-a-dyn'));
      const later = await rest(
        t,
        'PUT',
        '/armory/accounts/dynamic',
        [
          { name: 'team-b-dyn2', kubeconfigFile: '/k/b2' },
          { name: 'team-a-dyn2', kubeconfigFile: '/k/a2' },
        ],
        admin,
      );
      assert.equal(later.status, 200, JSON.stringify(later.body));
      await eventually('team-a-dyn2 pushed to the agent', async () => pushed().includes('team-a-dyn2'));
      assert.deepEqual(
        pushed().filter((n) => n?.startsWith('team-b')),
        [],
        'no team-b definition was shown to the team-a agent',
      );
    });

    test("the agent identity cannot manage accounts; the admin's changes are recorded under its subject", async () => {
      const denied = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'team-b-db', state: 'ACTIVE' }], {
        headers: { Authorization: `Bearer ${AGENT_TOKEN}` },
      });
      assert.ok(denied.status === 403, `agent token on an admin route → ${denied.status}`);
      const ok = await rest(t, 'PATCH', '/armory/accounts', [{ name: 'team-b-db', state: 'ACTIVE' }], admin);
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const got = await rest(t, 'GET', '/armory/accounts/team-b-db', undefined, admin);
      assert.equal(got.body.transitions[0].actor, 'admin:ops');
    });
  });
}
