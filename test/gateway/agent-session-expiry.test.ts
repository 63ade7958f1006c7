/**
 * Credential expiry of agent streams over real HTTP/2 streams: a stream authenticated with a JWT ends UNAUTHENTICATED
 * "credentials expired; reconnect with a fresh token" when the token's `exp` passes — not before — its accounts become
 * INACTIVE and its session row ended, while a stream whose token is still valid lives on; a fresh token reconnects and
 * caches the account again.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
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

const SECRET = 'jwt-secret-expiry-0123456789-0123456789';

/** An HS256 JWT for `sub` that expires at `exp` (epoch seconds). */
function jwt(sub: string, exp: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://issuer.test')
    .setAudience('outpost')
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
}

for (const driver of testDrivers()) {
  describe(`agent stream credential expiry (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let dir: string;
    const streams: TestAgentStream[] = [];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'outpost-expiry-'));
      writeFileSync(join(dir, 'jwt-secret'), SECRET);
      t = await startTestGateway(driver, {
        insecure: false,
        agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 30 },
        auth: {
          jwt: {
            issuer: 'https://issuer.test',
            audience: 'outpost',
            secretFile: join(dir, 'jwt-secret'),
            clockToleranceSeconds: 0,
            maxLifetimeSeconds: 50 * 86_400,
          },
        },
        authorization: { rules: [{ kind: 'jwt', subject: '^agent-jwt$', roles: ['agent'], accounts: ['exp-*'] }] },
      });
    });
    after(async () => {
      for (const s of streams) s.abort();
      await t?.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const open = (bearer: string) => {
      const s = openAgentStream(t.gateway.grpcUrl, { bearer });
      streams.push(s);
      return s;
    };
    const account = async (name: string) =>
      (await t.query<{ state: string; session_id: string | null }>(`select state, session_id from accounts where name = '${name}'`))[0];

    test('a JWT stream ends UNAUTHENTICATED at exp; its account goes INACTIVE; a stream whose token expires in 40 days lives on; a fresh token reconnects', async () => {
      const now = Date.now();
      // Time enough to open both streams and check them before the token expires, on a loaded machine too.
      const exp = Math.ceil(now / 1000) + 6;
      const short = open(await jwt('agent-jwt', exp));
      const shortWelcome = await connectAgent(short, 'agent-short', [{ name: 'exp-short' }]);
      assert.equal(shortWelcome.accounts[0]!.verdict, Verdict.CACHING);
      // Longer than setTimeout's longest delay (24.8 days): the expiry timer must not fire at once.
      const long = open(await jwt('agent-jwt', exp + 40 * 86_400));
      const longWelcome = await connectAgent(long, 'agent-long', [{ name: 'exp-long' }]);
      assert.equal(longWelcome.accounts[0]!.verdict, Verdict.CACHING);
      assert.equal((await account('exp-short'))?.state, 'ACTIVE');

      const err = await Promise.race([
        short.ended,
        new Promise<'alive'>((r) => setTimeout(() => r('alive'), exp * 1000 - Date.now() + 30_000).unref()),
      ]);
      const endedAt = Date.now();
      if (err === 'alive') assert.fail('the stream must end once its token expired');
      assert.ok(err, 'the stream must end with an error');
      assert.equal(err.code, Code.Unauthenticated);
      assert.equal(err.rawMessage, 'credentials expired; reconnect with a fresh token');
      assert.ok(endedAt >= exp * 1000 - 50, `ended ${exp * 1000 - endedAt} ms before the token expired`);

      await eventually('account exp-short INACTIVE', async () => (await account('exp-short'))?.state === 'INACTIVE');
      const sessionEnded = async () =>
        (await t.query<{ ended_at: unknown }>(`select ended_at from agent_sessions where id = '${shortWelcome.sessionId}'`))[0]?.ended_at !=
        null;
      await eventually('the expired session ended', sessionEnded);

      // The stream whose token is still valid is untouched: it still stores and acknowledges, its account stays ACTIVE.
      long.send(events(1, [event('exp-long', EventType.ADDED, configMap('still-alive', 1))]));
      await long.waitForAck(1);
      assert.equal((await account('exp-long'))?.state, 'ACTIVE');

      // The expired token is refused at once; a fresh one reconnects, resuming the session, and caches the account again.
      const stale = open(await jwt('agent-jwt', exp));
      stale.send({ case: 'heartbeat', value: { agentId: 'agent-short' } });
      const refused = await stale.ended;
      assert.equal(refused?.code, Code.Unauthenticated);
      assert.match(refused!.rawMessage, /expired/);
      const fresh = open(await jwt('agent-jwt', Math.ceil(Date.now() / 1000) + 600));
      fresh.send({
        case: 'hello',
        value: {
          agentId: 'agent-short',
          zone: 'test',
          version: 'test',
          replicas: 1,
          resumeSessionId: shortWelcome.sessionId,
          resumeSessionToken: shortWelcome.sessionToken,
          accounts: [
            { name: 'exp-short', apiHost: 'https://cluster-exp-short:6443', caFingerprint: 'ab'.repeat(32), kubernetesVersion: 'v1.30.0' },
          ],
        },
      });
      const again = await fresh.next();
      assert.equal(again.message.case, 'welcome');
      assert.equal(again.message.case === 'welcome' && again.message.value.accounts[0]!.verdict, Verdict.CACHING);
      await eventually('account exp-short ACTIVE', async () => (await account('exp-short'))?.state === 'ACTIVE');
    });
  });
}
