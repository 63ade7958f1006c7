/**
 * Per-stream session tokens over real HTTP/2 streams: the Welcome carries a random token whose SHA-256 alone is
 * stored; a Hello presenting a session's token resumes it (the older stream of that session is closed); a wrong token,
 * an unknown session, or a session id without its token ends the stream with UNAUTHENTICATED before anything is
 * written.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { verifySessionToken } from '../../src/gateway/agents/agent-session-store.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, connectAgent, hello, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

type SessionRow = Record<string, unknown> & { id: string; token_hash: string; ended_at: unknown };

for (const driver of testDrivers()) {
  describe(`agent session tokens (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const streams: TestAgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 5 } });
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
    const sessionRows = () => t.query<SessionRow>(`select * from agent_sessions order by connected_at, id`);
    const accountRows = () => t.query<Record<string, unknown>>(`select name, state, session_id, agent_id from accounts order by name`);
    /** A Hello that resumes a session. */
    const resumeHello = (agentId: string, accounts: string[], resumeSessionId: string, resumeSessionToken: string) =>
      hello(
        agentId,
        accounts.map((name) => ({ name })),
        { resumeSessionId, resumeSessionToken },
      );
    const expectUnauthenticated = async (s: TestAgentStream) => {
      const err = await s.ended;
      assert.ok(err, 'stream must end with an error');
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(err.rawMessage, 'invalid session token');
    };

    test('the Welcome carries a random 32-byte token; the database holds only its SHA-256', async () => {
      const s = open();
      const welcome = await connectAgent(s, 'agent-tok', [{ name: 'tok-a' }]);
      assert.match(welcome.sessionToken, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(Buffer.from(welcome.sessionToken, 'base64url').length, 32);
      const rows = (await sessionRows()).filter((r) => r.id === welcome.sessionId);
      assert.equal(rows.length, 1);
      const row = rows[0]!;
      assert.equal(row.token_hash, createHash('sha256').update(welcome.sessionToken).digest('hex'));
      assert.equal(
        JSON.stringify(await t.query(`select * from agent_sessions`)).includes(welcome.sessionToken),
        false,
        'token never stored in clear',
      );
      assert.equal(row.agent_id, 'agent-tok');
      assert.equal(row.zone, 'test');
      assert.equal(row.version, 'test');
      assert.equal(row.subject, 'anonymous');
      assert.equal(row.gateway_id, 'gw-test');
      assert.deepEqual(row.caching, ['tok-a']);
      assert.equal(row.ended_at, null);
      assert.equal(await verifySessionToken(t.gateway.database, welcome.sessionId, welcome.sessionToken), true);
      assert.equal(await verifySessionToken(t.gateway.database, welcome.sessionId, randomBytes(32).toString('base64url')), false);
      assert.equal(await verifySessionToken(t.gateway.database, 'no-such-session', welcome.sessionToken), false);

      const second = open();
      const other = await connectAgent(second, 'agent-tok-2', [{ name: 'tok-b' }]);
      assert.notEqual(other.sessionToken, welcome.sessionToken);
      assert.equal(
        await verifySessionToken(t.gateway.database, welcome.sessionId, other.sessionToken),
        false,
        'a token is bound to its session',
      );

      s.end();
      assert.equal(await s.ended, undefined);
      await eventually('the session ended', async () => (await sessionRows()).find((r) => r.id === welcome.sessionId)?.ended_at != null);
      second.end();
      await second.ended;
    });

    test('a Hello with the right token resumes the session: the older stream is closed ABORTED and its accounts move at once', async () => {
      const first = open();
      const w1 = await connectAgent(first, 'agent-res', [{ name: 'res-a' }]);
      const second = open();
      second.send(resumeHello('agent-res', ['res-a'], w1.sessionId, w1.sessionToken));
      const res = await second.next();
      assert.equal(res.message.case, 'welcome');
      const w2 = res.message.case === 'welcome' ? res.message.value : undefined;
      assert.deepEqual(
        w2!.accounts.map((a) => [a.account, a.verdict]),
        [['res-a', Verdict.CACHING]],
      );
      assert.notEqual(w2!.sessionId, w1.sessionId);
      assert.notEqual(w2!.sessionToken, w1.sessionToken, 'every Welcome carries a fresh token');
      const err = await first.ended;
      assert.equal(err?.code, Code.Aborted);
      const [acc] = (await accountRows()).filter((r) => r.name === 'res-a');
      assert.equal(acc!.state, 'ACTIVE');
      assert.equal(acc!.session_id, w2!.sessionId);
      await eventually('the first session ended', async () => (await sessionRows()).find((r) => r.id === w1.sessionId)?.ended_at != null);

      // An ended session can be resumed too (the agent reconnects after its stream dropped).
      second.abort();
      await second.ended;
      const third = open();
      third.send(resumeHello('agent-res', ['res-a'], w2!.sessionId, w2!.sessionToken));
      assert.equal((await third.next()).message.case, 'welcome');
      third.end();
      await third.ended;
    });

    for (const [i, [name, pick]] of (
      [
        ['a wrong token', (id: string) => [id, randomBytes(32).toString('base64url')]],
        ['a session id alone', (id: string) => [id, '']],
        ['a token without a session id', (_id: string, token: string) => ['', token]],
        ['an unknown session with a token', (_id: string, token: string) => ['0f3c1a7e-0000-4000-8000-000000000000', token]],
      ] as const
    ).entries()) {
      test(`${name} → UNAUTHENTICATED "invalid session token", nothing written, the live stream untouched`, async () => {
        const live = open();
        const w = await connectAgent(live, `agent-bad-${i}`, [{ name: `bad-${i}` }]);
        const sessionsBefore = await sessionRows();
        const accountsBefore = await accountRows();
        const intruder = open();
        const [id, token] = pick(w.sessionId, w.sessionToken);
        intruder.send(resumeHello(`agent-bad-${i}`, [`bad-${i}`, `fresh-${i}`], id, token));
        await expectUnauthenticated(intruder);
        assert.deepEqual(await sessionRows(), sessionsBefore);
        assert.deepEqual(await accountRows(), accountsBefore);
        // The live stream still works: a heartbeat round trip and its account still held.
        live.send({ case: 'heartbeat', value: { agentId: 'x', sentAtUnixMs: 1n } });
        await new Promise((r) => setTimeout(r, 100));
        assert.equal((await accountRows()).find((r) => r.name === `bad-${i}`)?.session_id, w.sessionId);
        live.end();
        assert.equal(await live.ended, undefined);
      });
    }

    test("another agent's session token does not resume a session of this agent id", async () => {
      const victim = open();
      const wv = await connectAgent(victim, 'agent-victim', [{ name: 'victim-a' }]);
      const attacker = open();
      const wa = await connectAgent(attacker, 'agent-attacker', [{ name: 'attacker-a' }]);
      const intruder = open();
      // The attacker's own (valid) token, presented for its own session but under the victim's agent id.
      intruder.send(resumeHello('agent-victim', ['victim-a'], wa.sessionId, wa.sessionToken));
      await expectUnauthenticated(intruder);
      assert.equal((await accountRows()).find((r) => r.name === 'victim-a')?.session_id, wv.sessionId);
      victim.end();
      attacker.end();
      await Promise.all([victim.ended, attacker.ended]);
    });
  });
}
