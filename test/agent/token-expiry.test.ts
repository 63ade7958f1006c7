/**
 * An agent whose JWT expires, against the real gateway (PGlite, JWT auth) and the sandbox: the gateway ends the stream
 * UNAUTHENTICATED when the token expires; the agent re-runs its token command at once (not only on its interval),
 * reconnects with the new token resuming its session, and its watches resume from the gateway's resume points
 * without listing again.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { SignJWT } from 'jose';
import { createLogger } from '../../src/shared/logger.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack } from '../../testkit/stack.js';

const SECRET = 'jwt-secret-agent-expiry-0123456789-0123456789';

function jwt(exp: number): Promise<string> {
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('https://issuer.test')
    .setAudience('outpost')
    .setSubject('agent-jwt')
    .setIssuedAt()
    .setExpirationTime(exp)
    .sign(new TextEncoder().encode(SECRET));
}

test('an expired JWT ends the stream; the token command is re-run at once and the agent resumes without listing again', async () => {
  const stack = await startStack({
    persistent: true,
    sandbox: { bookmarkIntervalMs: 200 },
    gateway: (dir) => {
      writeFileSync(join(dir, 'jwt-secret'), SECRET);
      return {
        insecure: false,
        auth: {
          jwt: { issuer: 'https://issuer.test', audience: 'outpost', secretFile: join(dir, 'jwt-secret'), clockToleranceSeconds: 0 },
        },
        authorization: { rules: [{ kind: 'jwt', subject: '^agent-jwt$', roles: ['agent'], accounts: ['*'] }] },
      };
    },
  });
  const { gateway } = stack;
  const tokenFile = join(stack.dir, 'token');
  const exp = Math.ceil(Date.now() / 1000) + 4;
  writeFileSync(tokenFile, await jwt(exp));
  const logs = captureLogs();
  const agent = await stack.startAgent({
    id: 'expiry-agent',
    account: { name: 'alpha', namespaces: ['demo'], kinds: ['ConfigMap'] },
    config: {
      clouddriver: {
        reconnect: { baseSeconds: 0.05, factor: 1.6, maxSeconds: 0.5 },
        // Far longer than the test: only the gateway's refusal makes the agent run the command again.
        auth: { tokenCommand: { command: 'cat', args: [tokenFile] }, tokenCommandIntervalSeconds: 3600 },
      },
      agent: { zone: 'test' },
    },
    configFile: join(stack.dir, 'agent.yaml'),
    logger: createLogger({ level: 'debug', destination: logs.stream }),
  });
  const alpha = () => agent.status().accounts.find((a) => a.name === 'alpha');
  const watchStates = async () => {
    const result = await gateway.database.db.execute(
      sql.raw(`select sync_gen, synced, resource_version from watch_states where account = 'alpha'`),
    );
    return Array.from((result as unknown as { rows?: Record<string, unknown>[] }).rows ?? (result as unknown as Record<string, unknown>[]));
  };
  try {
    await eventually('alpha watching', () => alpha()?.watches.some((w) => w.state === 'watching'));
    const first = agent.status().sessionId!;
    await eventually('the first list stored', async () =>
      (await watchStates()).some((r) => r.synced === true && r.resource_version !== ''),
    );
    const listed = await watchStates();
    assert.ok(Date.now() < exp * 1000, 'the first session must be set up before the token expires (slow machine?)');

    // The operator's token command now prints a fresh token; the agent's interval would not run it for an hour.
    writeFileSync(tokenFile, await jwt(Math.ceil(Date.now() / 1000) + 600));
    const second = await eventually(
      'a new session after the token expired',
      () => {
        const id = agent.status().sessionId;
        return (
          id !== undefined && id !== first && alpha()?.verdict === 'caching' && alpha()!.watches.some((w) => w.state === 'watching') && id
        );
      },
      { timeoutMs: 30_000 },
    );
    assert.ok(Date.now() >= exp * 1000 - 50, 'the first stream ended no earlier than its token expired');

    const lines = logs.lines();
    const lost = lines.find((l) => typeof l.msg === 'string' && l.msg.startsWith('lost the gateway stream'));
    assert.match(String(lost?.msg), /credentials expired; reconnect with a fresh token/);
    const welcomes = lines.filter((l) => l.msg === 'welcomed by the gateway');
    assert.equal(welcomes.length, 2, 'one reconnect: the first attempt already had the fresh token');
    assert.equal(welcomes[1]!.sessionId, second);
    assert.equal(welcomes[1]!.resumed, first, 'the session token survived the UNAUTHENTICATED end: the Hello resumed the session');
    assert.equal(/cannot connect to the gateway/.test(logs.text()), false, 'no attempt with the expired token');

    // Resumed from the stored resource versions: no new full list (a list would start a new generation).
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(
      (await watchStates()).map((r) => r.sync_gen),
      listed.map((r) => r.sync_gen),
    );
    assert.equal(
      alpha()!.watches.every((w) => w.state === 'watching'),
      true,
    );
  } finally {
    await stack.close();
  }
});
