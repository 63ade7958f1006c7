/**
 * The dashboard's sessions in the database, against the real test provider and with a driven clock: a session
 * survives a gateway's restart (PGlite directory and Postgres) and is accepted by a second gateway on the same
 * Postgres database; when its tokens are due it is renewed with the refresh token — once for two replicas asking
 * together (the row lock) — and the new ID token's groups replace the old ones; a renewal the provider refuses, idle
 * time and the absolute lifetime end it (401, row deleted); the purge deletes ended rows.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startGateway, type GatewayConfigInput, type RunningGateway } from '../../src/gateway/index.js';
import { createOidcIssuers } from '../../src/gateway/auth/oidc-issuers.js';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { createWebSessions } from '../../src/gateway/sign-in/web-sessions.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { jsonCall, readSession, signInOverHttp, type CookieJar } from '../../testkit/http-sign-in.js';
import { OIDC_USERS } from '../../testkit/oidc-test-provider.js';
import { createSignInSetup, drivenClock, type DrivenClock, type SignInSetup } from '../../testkit/sign-in-gateway.js';
import { queryRows, testGatewayConfig } from '../../testkit/test-gateway.js';

const LIST_AUDIT = 'outpost.api.v1.AuditService/ListAuditEvents';
const MINUTE = 60_000;
const postgres = process.env.OUTPOST_TEST_POSTGRES;

describe('dashboard sessions: stored, shared, renewed, ended', { concurrency: false, timeout: 180_000 }, () => {
  let setup: SignInSetup;
  const dirs: string[] = [];
  const running: RunningGateway[] = [];
  before(async () => {
    // Tokens live two minutes: renewed a minute after they were issued (session-tokens.ts).
    setup = await createSignInSetup({ tokenSeconds: 120 });
  });
  after(async () => {
    for (const g of running) await g.close();
    await setup?.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  /** Starts a gateway of the set-up on `database` (idle 30 min, 1 h sessions) with the clock `clock`. */
  const start = async (database: string, id: string, clock?: DrivenClock, overrides: GatewayConfigInput = {}) => {
    const config = testGatewayConfig(database, { id, ...setup.config({ idleMinutes: 30, sessionHours: 1 }), ...overrides });
    const gateway = await startGateway(config, { logger: createSilentLogger(), sessionClock: clock?.now });
    running.push(gateway);
    setup.register(gateway.httpUrl);
    return gateway;
  };
  const stop = async (gateway: RunningGateway) => {
    running.splice(running.indexOf(gateway), 1);
    await gateway.close();
  };
  const whoIs = async (jar: CookieJar, gateway: RunningGateway) => {
    const r = await readSession(jar, gateway.httpUrl);
    return r.body.signedIn ? `${r.body.identity} ${(r.body.roles as string[]).join(',')}` : `signed out: ${r.body.message ?? ''}`;
  };
  const auditCall = async (jar: CookieJar, gateway: RunningGateway) => {
    const csrf = String((await readSession(jar, gateway.httpUrl)).body.csrfToken);
    return jsonCall(jar, gateway.httpUrl, 'POST', LIST_AUDIT, { headers: { 'x-outpost-csrf': csrf } });
  };
  const rows = async (gateway: RunningGateway) =>
    Number((await queryRows<{ n: number }>(gateway.database, 'select count(*)::int as n from web_sessions'))[0]!.n);

  test('PGlite: a session survives a restart of the gateway', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-sessions-'));
    dirs.push(dir);
    const first = await start(join(dir, 'db'), 'gw-restart');
    const { jar } = await signInOverHttp(first.httpUrl, { login: 'alice' });
    await stop(first);
    const again = await start(join(dir, 'db'), 'gw-restart');
    jar.set(again.httpUrl, '__Host-outpost-session', jar.get(first.httpUrl, '__Host-outpost-session')!);
    assert.equal(await whoIs(jar, again), 'oidc:corp:alice admin,read,write');
    assert.equal((await auditCall(jar, again)).status, 200);
  });

  test('Postgres: a second gateway on the same database accepts the session, and it survives a restart', { skip: !postgres }, async () => {
    const db = await createTestDatabase('postgres');
    try {
      const a = await start(db.url, 'gw-a');
      const b = await start(db.url, 'gw-b');
      const { jar } = await signInOverHttp(a.httpUrl, { login: 'alice' });
      // The browser sends the cookie to the other replica (same host; in production, the same load-balanced URL).
      jar.set(b.httpUrl, '__Host-outpost-session', jar.get(a.httpUrl, '__Host-outpost-session')!);
      assert.equal(await whoIs(jar, b), 'oidc:corp:alice admin,read,write');
      assert.equal((await auditCall(jar, b)).status, 200);
      await stop(a);
      await stop(b);
      const restarted = await start(db.url, 'gw-a');
      jar.set(restarted.httpUrl, '__Host-outpost-session', jar.get(a.httpUrl, '__Host-outpost-session')!);
      assert.equal(await whoIs(jar, restarted), 'oidc:corp:alice admin,read,write');
      await stop(restarted);
    } finally {
      await db.drop();
    }
  });

  test('renewal when the tokens are due re-reads the groups; two replicas asking together renew once', async () => {
    const db = postgres ? await createTestDatabase('postgres') : undefined;
    const dir = mkdtempSync(join(tmpdir(), 'outpost-sessions-'));
    dirs.push(dir);
    const clock = drivenClock();
    try {
      const a = await start(db?.url ?? join(dir, 'db'), 'gw-renew-a', clock);
      const replicas = db ? [a, await start(db.url, 'gw-renew-b', clock)] : [a];
      const { jar } = await signInOverHttp(a.httpUrl, { login: 'alice' });
      const cookie = jar.get(a.httpUrl, '__Host-outpost-session')!;
      for (const r of replicas) jar.set(r.httpUrl, '__Host-outpost-session', cookie);
      setup.provider.setGroups('alice', ['developers']);
      const tokens = setup.provider.requests('/token');
      clock.advance(59_000);
      assert.equal(await whoIs(jar, a), 'oidc:corp:alice admin,read,write', 'not due yet: the groups of the first ID token');
      assert.equal(setup.provider.requests('/token'), tokens);

      clock.advance(31_000);
      const seen = await Promise.all(replicas.map((r) => whoIs(jar, r)));
      assert.deepEqual(
        seen,
        replicas.map(() => 'oidc:corp:alice read'),
        'the renewed ID token says developers',
      );
      assert.equal(setup.provider.requests('/token'), tokens + 1, 'renewed once, whichever replica asked first');
      const refused = await auditCall(jar, a);
      assert.equal(refused.status, 403);
      assert.match(String(refused.body.message), /corp:alice lacks the role "admin"/);
      for (const r of replicas) await stop(r);
    } finally {
      setup.provider.setGroups('alice', OIDC_USERS.alice!);
      await db?.drop();
    }
  });

  test("a sign-in that takes more than ten minutes by the gateway's clock is refused; nothing is created", async () => {
    const clock = drivenClock();
    const gateway = await start('memory://', 'gw-slow-login', clock);
    const slow = await signInOverHttp(gateway.httpUrl, { login: 'alice', tamperCallback: () => clock.advance(10 * MINUTE + 1) });
    assert.equal(slow.landing, '/?sign_in_error=login_expired');
    assert.equal(await rows(gateway), 0);
    await stop(gateway);
  });

  test('a renewal the provider refuses ends the session: 401, the row deleted', async () => {
    const clock = drivenClock();
    const gateway = await start('memory://', 'gw-refused', clock);
    const { jar } = await signInOverHttp(gateway.httpUrl, { login: 'bob' });
    assert.equal(await rows(gateway), 1);
    setup.provider.refuseTokens(true);
    try {
      clock.advance(90_000);
      const r = await jsonCall(jar, gateway.httpUrl, 'GET', '/armory/accounts', { headers: { 'x-outpost-csrf': 'irrelevant-once-ended' } });
      // The CSRF rules come first: a wrong header is refused before the session is renewed.
      assert.equal(r.status, 403);
      assert.match(
        await whoIs(jar, gateway),
        /^signed out: your dashboard session ended: provider corp refused to renew it \(invalid_grant\)/,
      );
      assert.equal(await rows(gateway), 0);
    } finally {
      setup.provider.refuseTokens(false);
      await stop(gateway);
    }
  });

  test('idle time and the absolute lifetime end sessions; the purge deletes the ended rows', async () => {
    const clock = drivenClock();
    const gateway = await start('memory://', 'gw-timeouts', clock);
    const { jar: idle } = await signInOverHttp(gateway.httpUrl, { login: 'alice' });
    const { jar: busy } = await signInOverHttp(gateway.httpUrl, { login: 'bob' });
    const { jar: forgotten } = await signInOverHttp(gateway.httpUrl, { login: 'bob' });
    assert.equal(await rows(gateway), 3);
    clock.advance(20 * MINUTE);
    assert.equal(await whoIs(idle, gateway), 'oidc:corp:alice admin,read,write', 'at +20');
    assert.equal(await whoIs(busy, gateway), 'oidc:corp:bob read', 'at +20');
    clock.advance(20 * MINUTE);
    assert.equal(await whoIs(busy, gateway), 'oidc:corp:bob read', 'at +40: idle time counts from the last use');
    clock.advance(11 * MINUTE);
    assert.match(
      await whoIs(idle, gateway),
      /^signed out: your dashboard session ended: it was not used for auth\.oidc\.idleMinutes \(30\)/,
    );
    assert.equal(await whoIs(busy, gateway), 'oidc:corp:bob read', 'at +51');
    clock.advance(10 * MINUTE);
    assert.match(await whoIs(busy, gateway), /^signed out: your dashboard session ended: it is older than auth\.oidc\.sessionHours \(1\)/);
    assert.equal(await rows(gateway), 1, 'the two ended on use; the third was never used again');

    const sessions = createWebSessions({
      database: gateway.database,
      keys: createKeyRing({ keyFile: setup.keyFile, insecure: false, logger: createSilentLogger() }),
      oidc: createOidcIssuers(undefined, createSilentLogger()),
      clock: clock.now,
      sessionHours: 1,
      idleMinutes: 30,
      logger: createSilentLogger(),
    });
    assert.equal(await sessions.purge(), 1, 'the forgotten one, ended by its idle time');
    assert.equal(await rows(gateway), 0);
    assert.match(await whoIs(forgotten, gateway), /^signed out: no such dashboard session/);
    await stop(gateway);
  });
});
