/**
 * Takeover between streams of the same agent id on a gateway with token authentication (no insecure mode): a newer
 * stream closes an older one only when both authenticated as the same subject, or when it presents the older
 * session's token; a stream from another identity never hijacks the agent id, nor the account names bound to the
 * first identity (REFUSED). An agent's two connections (`hello.connection` 0 and 1) never take each other over.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict, type Welcome } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, connectAgent, hello, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const ONE = 'agent-one-token-0123456789abcdef';
const TWO = 'agent-two-token-0123456789abcdef';

for (const driver of testDrivers()) {
  describe(`agent stream takeover by identity (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, {
        insecure: false,
        agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 5 },
        auth: {
          tokens: [
            { subject: 'agent-one', token: ONE },
            { subject: 'agent-two', token: TWO },
          ],
        },
        authorization: { rules: [{ kind: 'token', subject: '^agent-(one|two)$', roles: ['agent'], accounts: ['*'] }] },
      });
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
    const owner = async (account: string) =>
      (await t.query<{ session_id: string }>(`select session_id from accounts where name = '${account}'`))[0]?.session_id;
    const stillOpen = async (s: TestAgentStream) => {
      const ended = await Promise.race([s.ended.then(() => true), new Promise((r) => setTimeout(() => r(false), 300))]);
      return !ended;
    };

    test('another subject does not take over: its accounts are REFUSED (bound to the first identity) while the older stream lives', async () => {
      const first = open(ONE);
      const w1 = await connectAgent(first, 'shared-id', [{ name: 'sub-a' }]);
      assert.equal(w1.accounts[0]!.verdict, Verdict.CACHING);
      const rows = await t.query<{ subject: string }>(`select subject from agent_sessions where id = '${w1.sessionId}'`);
      assert.equal(rows[0]!.subject, 'agent-one');

      const other = open(TWO);
      const w2 = await connectAgent(other, 'shared-id', [{ name: 'sub-a' }]);
      // The name is bound to token:agent-one (docs/accounts.md, "Identity binding"): another identity never stands by.
      assert.deepEqual(
        w2.accounts.map((a) => [a.account, a.verdict]),
        [['sub-a', Verdict.REFUSED]],
      );
      assert.ok(await stillOpen(first), 'the older stream of another identity is not closed');
      assert.equal(await owner('sub-a'), w1.sessionId);

      // The same subject does take over.
      const again = open(ONE);
      const w3 = await connectAgent(again, 'shared-id', [{ name: 'sub-a' }]);
      assert.equal((await first.ended)?.code, Code.Aborted);
      assert.equal(w3.accounts[0]!.verdict, Verdict.CACHING);
      assert.equal(await owner('sub-a'), w3.sessionId);
      assert.ok(await stillOpen(other), 'the stream of the other identity stays');

      // Another subject presenting the session's token does not resume it: a token copied from one identity's agent
      // gives another identity neither the session nor the operations sent on it.
      const thief = open(TWO);
      thief.send(hello('shared-id', [{ name: 'sub-a' }], { resumeSessionId: w3.sessionId, resumeSessionToken: w3.sessionToken }));
      assert.equal((await thief.ended)?.code, Code.Unauthenticated);
      assert.ok(await stillOpen(again), 'the session stays with its identity');
      assert.equal(await owner('sub-a'), w3.sessionId);

      // The same subject with the token resumes it.
      const resumer = open(ONE);
      resumer.send(hello('shared-id', [{ name: 'sub-a' }], { resumeSessionId: w3.sessionId, resumeSessionToken: w3.sessionToken }));
      const res = await resumer.next();
      assert.equal(res.message.case, 'welcome');
      const w4 = res.message.value as Welcome;
      assert.equal((await again.ended)?.code, Code.Aborted);
      assert.equal(w4.accounts[0]!.verdict, Verdict.CACHING);
      assert.equal(await owner('sub-a'), w4.sessionId);

      for (const s of [other, resumer]) s.end();
      await Promise.all([other.ended, resumer.ended]);
    });

    test("an agent's second connection (hello.connection 1) stands by beside its first on the same replica; each takes over only its own", async () => {
      const first = open(ONE);
      const w1 = await connectAgent(first, 'two-links', [{ name: 'link-a' }]);
      assert.equal(w1.accounts[0]!.verdict, Verdict.CACHING);
      const second = open(ONE);
      const w2 = await connectAgent(second, 'two-links', [{ name: 'link-a' }], { connection: 1 });
      assert.equal(w2.accounts[0]!.verdict, Verdict.STANDBY, 'the second connection stands by');
      assert.ok(await stillOpen(first), 'the first connection is not taken over by the second');
      assert.equal(await owner('link-a'), w1.sessionId);

      // A new stream on connection 1 replaces the old connection 1 only.
      const secondAgain = open(ONE);
      const w3 = await connectAgent(secondAgain, 'two-links', [{ name: 'link-a' }], { connection: 1 });
      assert.equal((await second.ended)?.code, Code.Aborted);
      assert.equal(w3.accounts[0]!.verdict, Verdict.STANDBY);
      assert.ok(await stillOpen(first), 'connection 0 stays');

      // When connection 0 goes, connection 1 is promoted (same replica: at once).
      first.end();
      await first.ended;
      const promoted = await secondAgain.next(30_000);
      assert.equal(promoted.message.case, 'verdicts');
      const verdicts = promoted.message.value as { accounts: { account: string; verdict: Verdict }[] };
      assert.deepEqual(
        verdicts.accounts.map((a) => [a.account, a.verdict]),
        [['link-a', Verdict.CACHING]],
      );

      const bad = open(ONE);
      bad.send(hello('two-links', [{ name: 'link-a' }], { connection: 2 }));
      const refused = await bad.ended;
      assert.equal(refused?.code, Code.InvalidArgument);
      assert.match(refused!.rawMessage, /hello\.connection is 2; an agent has at most 2 connections/);
      secondAgain.end();
      await secondAgain.ended;
    });
  });
}
