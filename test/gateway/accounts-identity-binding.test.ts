/**
 * Account names bound to the agent identity of their first claim (docs/accounts.md, "Identity binding"), over real
 * agent streams with token authentication: another identity that the rules allow for the same name and that reports
 * the same cluster (API host and CA fingerprint are no proof) is REFUSED — never STANDBY, never promoted, its events
 * never land — and the refusal is recorded with its identity, logged and counted. The owner resumes afterwards.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { AccountInfoSchema, Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { claimAccounts, releaseAccounts } from '../../src/gateway/accounts/account-claim-queries.js';
import { removeAccountCaches } from '../../src/gateway/cache/cache-removal.js';
import { loadGatewayConfig, startGateway, type RunningGateway } from '../../src/gateway/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { rest } from './accounts-helpers.js';
import { AGENT_A, AGENT_B, CLUSTER, IDENTITY_GATEWAY, READER, verdictsFor } from './identity-binding-helpers.js';
import {
  Code,
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
      (
        await t.query<{ state: string; session_id: string; bound_identity: string }>(
          `select state, session_id, bound_identity from accounts where name = '${account}'`,
        )
      )[0]!;

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
      const wb = await connectAgent(b, 'agent-b', [{ name: 'cluster-1', ...CLUSTER }, { name: 'cluster-9' }]);
      const [claim, standby] = wb.accounts;
      assert.equal(claim!.verdict, Verdict.REFUSED, `expected REFUSED, got ${Verdict[claim!.verdict]}: ${claim!.reason}`);
      assert.match(claim!.reason, /bound to agent identity token:agent-a; this stream authenticated as token:agent-b/);
      assert.equal(standby!.verdict, Verdict.STANDBY, 'the same identity still stands by');
      assert.equal((await row('cluster-1')).bound_identity, 'token:agent-a');

      const listed = (await rest(t, 'GET', '/armory/accounts/cluster-1', undefined, { headers: { authorization: `Bearer ${READER}` } }))
        .body;
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
      await eventually('account cluster-1 INACTIVE', async () => (await row('cluster-1')).state === 'INACTIVE');
      canary.end();
      await canary.ended;
      await eventually('a CACHING verdict for cluster-9', async () => verdictsFor(b, 'cluster-9').includes(Verdict.CACHING), {
        timeoutMs: 30_000,
      });
      assert.deepEqual(verdictsFor(b, 'cluster-1'), [Verdict.REFUSED], 'never STANDBY, never promoted');
      assert.equal((await row('cluster-1')).state, 'INACTIVE', 'nobody claimed the free account');
      assert.equal((await row('cluster-1')).session_id, wa.sessionId);

      // A resumes (a new stream of the same identity) and caches again.
      const again = open(AGENT_A);
      assert.equal((await connectAgent(again, 'agent-a', [{ name: 'cluster-1', ...CLUSTER }])).accounts[0]!.verdict, Verdict.CACHING);
      again.send(events(1, [event('cluster-1', EventType.ADDED, configMap('from-a-again', 2))]));
      await again.waitForAck(1);
      assert.deepEqual(await objectNames('cluster-1'), ['from-a', 'from-a-again']);
      assert.deepEqual(verdictsFor(b, 'cluster-1'), [Verdict.REFUSED]);

      // B's invented objects never land: data for an account it was refused ends its stream.
      b.send(events(1, [event('cluster-1', EventType.ADDED, configMap('invented-by-b', 1))]));
      const refusal = await b.ended;
      assert.equal(refusal?.code, Code.PermissionDenied);
      assert.match(refusal!.rawMessage, /account "cluster-1" is not cached by this stream \(its verdict on this stream is REFUSED\)/);
      assert.deepEqual(await objectNames('cluster-1'), ['from-a', 'from-a-again']);

      again.end();
      await again.ended;
    });

    test('the database decides: the claim statement itself refuses another identity (no in-memory check involved)', async () => {
      const { db } = t.gateway.database;
      const info = create(AccountInfoSchema, { name: 'cluster-db', ...CLUSTER });
      const session = (identity: string, sessionId: string) => ({ sessionId, agentId: 'direct', gatewayId: 'gw-test', zone: '', identity });
      const lease = { seconds: 30, takeoverSessions: [] };
      assert.deepEqual([...(await claimAccounts(db, session('token:agent-a', 's-a'), [info], lease)).keys()], ['cluster-db']);
      await releaseAccounts(db, 's-a', ['cluster-db'], removeAccountCaches);
      assert.equal((await claimAccounts(db, session('token:agent-b', 's-b'), [info], lease)).size, 0, 'another identity: not claimed');
      assert.equal(
        (await claimAccounts(db, session('jwt:agent-a', 's-j'), [info], lease)).size,
        0,
        'same subject, other method: another identity',
      );
      assert.deepEqual([...(await claimAccounts(db, session('token:agent-a', 's-a2'), [info], lease)).keys()], ['cluster-db']);
      assert.equal((await row('cluster-db')).session_id, 's-a2');
      await releaseAccounts(db, 's-a2', ['cluster-db'], removeAccountCaches);
      // A binding made in insecure mode proves nothing: an authenticated identity's claim replaces it.
      await t.query(`update accounts set bound_identity = 'insecure:anonymous' where name = 'cluster-db'`);
      assert.equal((await claimAccounts(db, session('token:agent-b', 's-b2'), [info], lease)).size, 1);
      assert.equal((await row('cluster-db')).bound_identity, 'token:agent-b');
      await releaseAccounts(db, 's-b2', ['cluster-db'], removeAccountCaches);
    });

    test('a row left unbound (from before identity binding) binds at its next claim', async () => {
      await t.query(
        `insert into accounts (name, state, api_host, ca_fingerprint) values ('cluster-legacy', 'INACTIVE', '${CLUSTER.apiHost}', '${CLUSTER.caFingerprint}')`,
      );
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

describe('identity binding across replicas (postgres)', {
  skip: testDrivers().includes('postgres') ? false : 'needs OUTPOST_TEST_POSTGRES',
  concurrency: false,
}, () => {
  let a: TestGateway;
  let b: RunningGateway;
  const streams: TestAgentStream[] = [];
  before(async () => {
    a = await startTestGateway('postgres', { ...IDENTITY_GATEWAY, id: 'gw-a' });
    const config = loadGatewayConfig({
      env: {},
      overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: a.testDb.url, ...IDENTITY_GATEWAY, id: 'gw-b' },
    });
    b = await startGateway(config, { logger: createSilentLogger() });
  });
  after(async () => {
    for (const s of streams) s.abort();
    await b?.close();
    await a?.close();
  });

  test('two identities claiming a fresh name at once on two replicas: one caches, the other is REFUSED, never STANDBY', async () => {
    for (let i = 0; i < 6; i++) {
      const name = `cluster-race-${i}`;
      const sa = openAgentStream(a.gateway.grpcUrl, { bearer: AGENT_A });
      const sb = openAgentStream(b.grpcUrl, { bearer: AGENT_B });
      streams.push(sa, sb);
      // Alternate which replica hears first; the database decides either way.
      const [wa, wb] = await Promise.all(
        i % 2 === 0
          ? [connectAgent(sa, 'agent-a', [{ name, ...CLUSTER }]), connectAgent(sb, 'agent-b', [{ name, ...CLUSTER }])]
          : [connectAgent(sb, 'agent-b', [{ name, ...CLUSTER }]), connectAgent(sa, 'agent-a', [{ name, ...CLUSTER }])].reverse(),
      );
      const verdicts = [wa!.accounts[0]!.verdict, wb!.accounts[0]!.verdict];
      assert.deepEqual(
        [...verdicts].sort(),
        [Verdict.CACHING, Verdict.REFUSED].sort(),
        `${name}: ${verdicts.map((v) => Verdict[v]).join(', ')}`,
      );
      const winner = verdicts[0] === Verdict.CACHING ? 'token:agent-a' : 'token:agent-b';
      const [row] = await a.query<{ bound_identity: string }>(`select bound_identity from accounts where name = '${name}'`);
      assert.equal(row!.bound_identity, winner);
      for (const s of [sa, sb]) s.end();
      await Promise.all([sa.ended, sb.ended]);
    }
  });

  test("the owner's live lease on another replica: another identity is REFUSED there too, and never promoted", async () => {
    const sa = openAgentStream(a.gateway.grpcUrl, { bearer: AGENT_A });
    const sb = openAgentStream(b.grpcUrl, { bearer: AGENT_B });
    streams.push(sa, sb);
    assert.equal((await connectAgent(sa, 'agent-a', [{ name: 'cluster-remote', ...CLUSTER }])).accounts[0]!.verdict, Verdict.CACHING);
    assert.equal((await connectAgent(sb, 'agent-b', [{ name: 'cluster-remote', ...CLUSTER }])).accounts[0]!.verdict, Verdict.REFUSED);
    sa.end();
    await sa.ended;
    // A stream of A's identity on B's replica stands by and is promoted once A is gone: the attacker on the same
    // replica is not.
    const again = openAgentStream(b.grpcUrl, { bearer: AGENT_A });
    streams.push(again);
    const w = await connectAgent(again, 'agent-a', [{ name: 'cluster-remote', ...CLUSTER }]);
    if (w.accounts[0]!.verdict !== Verdict.CACHING)
      await eventually('a CACHING verdict for cluster-remote', async () => verdictsFor(again, 'cluster-remote').includes(Verdict.CACHING), {
        timeoutMs: 30_000,
      });
    assert.deepEqual(verdictsFor(sb, 'cluster-remote'), [Verdict.REFUSED]);
    for (const s of [sb, again]) s.end();
    await Promise.all([sb.ended, again.ended]);
  });
});
