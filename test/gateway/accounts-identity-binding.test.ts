/**
 * Account names bound to the agent identity of their first claim (docs/accounts.md, "Identity binding"), over real
 * agent streams with token authentication: another identity that the rules allow for the same name and that reports
 * the same cluster (API host and CA fingerprint are no proof) is REFUSED — never STANDBY, never promoted, its events
 * never land — and the refusal is recorded with its identity, logged and counted. The owner resumes afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../helpers/databases.js';
import { rest } from './accounts-helpers.js';
import { AGENT_A, AGENT_B, CLUSTER, IDENTITY_GATEWAY, READER, verdictsFor } from './identity-binding-helpers.js';
import { configMap, connectAgent, event, events, EventType, eventually, openAgentStream, startTestGateway, type TestAgentStream, type TestGateway } from './helpers.js';

for (const driver of testDrivers()) {
  describe(`account names bound to the claiming identity (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, IDENTITY_GATEWAY);
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
    const objectNames = async (account: string) =>
      (await t.query<{ name: string }>(`select name from objects where account = '${account}' order by name`)).map((r) => r.name);
    const row = async (account: string) =>
      (await t.query<{ state: string; session_id: string; bound_identity: string }>(`select state, session_id, bound_identity from accounts where name = '${account}'`))[0]!;

    test('another identity reporting the same cluster is REFUSED, never STANDBY or promoted; its events never land; the owner resumes', async () => {
      const a = open(AGENT_A);
      const wa = await connectAgent(a, 'agent-a', [{ name: 'cluster-1', ...CLUSTER }]);
      assert.equal(wa.accounts[0]!.verdict, Verdict.CACHING);
      a.send(events(1, [event('cluster-1', EventType.ADDED, configMap('from-a', 1))]));
      await a.waitForAck(1);

      // A stream of identity B that caches a canary account of its own (cluster-9): when it goes away, the attacker's
      // stream below is promoted for the canary, which proves a promotion round ran after cluster-1 was free.
      const canary = open(AGENT_B);
      assert.equal((await connectAgent(canary, 'agent-b-canary', [{ name: 'cluster-9' }])).accounts[0]!.verdict, Verdict.CACHING);

      const b = open(AGENT_B);
      const wb = await connectAgent(b, 'agent-b', [
        { name: 'cluster-1', ...CLUSTER },
        { name: 'cluster-9' },
      ]);
      const [claim, standby] = wb.accounts;
      assert.equal(claim!.verdict, Verdict.REFUSED, `expected REFUSED, got ${Verdict[claim!.verdict]}: ${claim!.reason}`);
      assert.match(claim!.reason, /bound to agent identity token:agent-a; this stream authenticated as token:agent-b/);
      assert.equal(standby!.verdict, Verdict.STANDBY, 'the same identity still stands by');
      assert.equal((await row('cluster-1')).bound_identity, 'token:agent-a');

      const listed = (await rest(t, 'GET', '/armory/accounts/cluster-1', undefined, { headers: { authorization: `Bearer ${READER}` } })).body;
      assert.equal(listed.state, 'ACTIVE');
      assert.equal(listed.boundIdentity, 'token:agent-a');
      assert.equal(listed.refusedClaim?.agentId, 'agent-b');
      assert.equal(listed.refusedClaim?.identity, 'token:agent-b');
      assert.equal(listed.refusedClaim?.apiHost, CLUSTER.apiHost);
      assert.equal(listed.refusedClaim?.reason, claim!.reason);
      const metrics = await (await fetch(`${t.gateway.httpUrl}/metrics`, { headers: { authorization: `Bearer ${READER}` } })).text();
      assert.match(metrics, /outpost_gateway_account_claims_refused_total\{reason="identity"\} 1\b/);

      // The owner goes away; then the canary, so B is promoted for cluster-9 only.
      a.end();
      await a.ended;
      await eventually(async () => (await row('cluster-1')).state === 'INACTIVE');
      canary.end();
      await canary.ended;
      await eventually(async () => verdictsFor(b, 'cluster-9').includes(Verdict.CACHING), 15_000);
      assert.deepEqual(verdictsFor(b, 'cluster-1'), [Verdict.REFUSED], 'never STANDBY, never promoted');
      assert.equal((await row('cluster-1')).state, 'INACTIVE', 'nobody claimed the free account');
      assert.equal((await row('cluster-1')).session_id, wa.sessionId);

      // B's invented objects never land.
      b.send(events(1, [event('cluster-1', EventType.ADDED, configMap('invented-by-b', 1))]));
      await b.waitForAck(1);
      assert.deepEqual(await objectNames('cluster-1'), ['from-a']);

      // A resumes (a new stream of the same identity) and caches again.
      const again = open(AGENT_A);
      assert.equal((await connectAgent(again, 'agent-a', [{ name: 'cluster-1', ...CLUSTER }])).accounts[0]!.verdict, Verdict.CACHING);
      again.send(events(1, [event('cluster-1', EventType.ADDED, configMap('from-a-again', 2))]));
      await again.waitForAck(1);
      assert.deepEqual(await objectNames('cluster-1'), ['from-a', 'from-a-again']);
      assert.deepEqual(verdictsFor(b, 'cluster-1'), [Verdict.REFUSED]);

      for (const s of [b, again]) s.end();
      await Promise.all([b.ended, again.ended]);
    });

    test('a row left unbound (from before identity binding) binds at its next claim', async () => {
      await t.query(`insert into accounts (name, state, api_host, ca_fingerprint) values ('cluster-legacy', 'INACTIVE', '${CLUSTER.apiHost}', '${CLUSTER.caFingerprint}')`);
      const b = open(AGENT_B);
      assert.equal((await connectAgent(b, 'agent-b', [{ name: 'cluster-legacy', ...CLUSTER }])).accounts[0]!.verdict, Verdict.CACHING);
      assert.equal((await row('cluster-legacy')).bound_identity, 'token:agent-b');
      const a = open(AGENT_A);
      assert.equal((await connectAgent(a, 'agent-a', [{ name: 'cluster-legacy', ...CLUSTER }])).accounts[0]!.verdict, Verdict.REFUSED);
      for (const s of [a, b]) s.end();
      await Promise.all([a.ended, b.ended]);
    });
  });
}
