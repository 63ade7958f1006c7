/**
 * A session is resumed only by the identity that opened it — method and subject, not the subject alone: a session
 * token copied from a stream authenticated with the static token "agent-x" does not let a JWT whose subject is also
 * "agent-x" take the session over (docs/architecture.md, rule 9; identity kinds are separate namespaces).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { Code, connectAgent, hello, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const SECRET = 'jwt-secret-identity-0123456789-0123456789';
const STATIC_TOKEN = 'agent-x-static-token-0123456789';

function jwt(sub: string): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://issuer.test')
    .setAudience('outpost')
    .setSubject(sub)
    .setIssuedAt()
    .setExpirationTime(Math.ceil(Date.now() / 1000) + 600)
    .sign(new TextEncoder().encode(SECRET));
}

for (const driver of testDrivers()) {
  describe(`agent session identity (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let dir: string;
    const streams: TestAgentStream[] = [];
    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'outpost-identity-'));
      writeFileSync(join(dir, 'jwt-secret'), SECRET);
      t = await startTestGateway(driver, {
        insecure: false,
        auth: {
          tokens: [{ subject: 'agent-x', token: STATIC_TOKEN }],
          jwt: { issuer: 'https://issuer.test', audience: 'outpost', secretFile: join(dir, 'jwt-secret') },
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^agent-x$', roles: ['agent'], accounts: ['ident-*'] },
            { kind: 'jwt', subject: '^agent-x$', roles: ['agent'], accounts: ['ident-*'] },
          ],
        },
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

    test('a session token resumes only under the identity that opened the session', async () => {
      const first = open(STATIC_TOKEN);
      const welcome = await connectAgent(first, 'agent-ident', [{ name: 'ident-a' }]);
      assert.equal(welcome.accounts[0]!.verdict, Verdict.CACHING);
      const [row] = await t.query<{ identity: string }>(`select identity from agent_sessions where id = '${welcome.sessionId}'`);
      assert.equal(row!.identity, 'token:agent-x');

      // Same subject, another method: refused before anything is written, the live stream untouched.
      const other = open(await jwt('agent-x'));
      other.send(
        hello('agent-ident', [{ name: 'ident-a' }], { resumeSessionId: welcome.sessionId, resumeSessionToken: welcome.sessionToken }),
      );
      const err = await other.ended;
      assert.equal(err?.code, Code.Unauthenticated);
      assert.equal(err?.rawMessage, 'invalid session token');
      const [account] = await t.query<{ session_id: string }>(`select session_id from accounts where name = 'ident-a'`);
      assert.equal(account!.session_id, welcome.sessionId);

      // The same identity resumes it.
      const again = open(STATIC_TOKEN);
      again.send(
        hello('agent-ident', [{ name: 'ident-a' }], { resumeSessionId: welcome.sessionId, resumeSessionToken: welcome.sessionToken }),
      );
      const res = await again.next();
      assert.equal(res.message.case, 'welcome');
      assert.equal((await first.ended)?.code, Code.Aborted, 'the resumed stream is superseded');
      again.end();
      await again.ended;
    });
  });
}
