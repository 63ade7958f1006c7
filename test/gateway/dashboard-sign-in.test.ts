/**
 * The dashboard's sign-in against a real OpenID Provider on loopback (oidc-provider), driven with plain HTTP and a
 * cookie jar (testkit/http-sign-in.ts): the authorization-code flow with PKCE signs alice in, and her session cookie
 * authenticates Connect and REST calls as `oidc:corp:alice` with the roles her groups earn (bob's, read only);
 * sign-out ends the session (the cookie replayed is refused) and gives the provider's sign-out URL; `next` never
 * leaves the origin; a forged state, the provider's refusal, a missing login cookie and an unknown provider are
 * refused and change nothing; the stored row holds no token in clear and no cookie.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { CookieJar, jarFetch, jsonCall, readSession, signInOverHttp } from '../../testkit/http-sign-in.js';
import { createSignInSetup, type SignInSetup } from '../../testkit/sign-in-gateway.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const COOKIE = '__Host-outpost-session';
const LIST_ACCOUNTS = 'outpost.api.v1.AccountService/ListAccounts';
const LIST_AUDIT = 'outpost.api.v1.AuditService/ListAuditEvents';

describe('dashboard sign-in (authorization code + PKCE, session cookie)', { concurrency: false, timeout: 120_000 }, () => {
  let setup: SignInSetup;
  let t: TestGateway;
  let url: string;
  before(async () => {
    setup = await createSignInSetup();
    t = await startTestGateway('pglite', setup.config());
    url = t.gateway.httpUrl;
    setup.register(url);
  });
  after(async () => {
    await t?.close();
    await setup?.close();
  });

  const sessionRows = async () => Number((await t.query<{ n: string }>('select count(*)::int as n from web_sessions'))[0]!.n);
  const signedIn = async (login: string) => {
    const { jar, landing } = await signInOverHttp(url, { login });
    assert.equal(landing, '/');
    const session = await readSession(jar, url);
    return { jar, csrf: String(session.body.csrfToken), session };
  };

  test('alice signs in; her cookie authenticates Connect and REST as oidc:corp:alice with her roles', async () => {
    const { jar, landing } = await signInOverHttp(url, { login: 'alice', next: '/#/audit?kind=session' });
    assert.equal(landing, '/#/audit?kind=session', 'back where the sign-in started');
    assert.ok(jar.get(url, COOKIE), 'the session cookie is set');

    const session = await readSession(jar, url);
    assert.equal(session.status, 200);
    assert.deepEqual(
      { ...session.body, csrfToken: typeof session.body.csrfToken, expiresAt: typeof session.body.expiresAt },
      {
        signedIn: true,
        identity: 'oidc:corp:alice',
        subject: 'corp:alice',
        provider: 'corp',
        groups: ['corp:platform-admins', 'corp:everyone'],
        roles: ['admin', 'read', 'write'],
        expiresAt: 'string',
        csrfToken: 'string',
      },
    );
    const csrf = { 'x-outpost-csrf': String(session.body.csrfToken) };
    assert.equal((await jsonCall(jar, url, 'POST', LIST_ACCOUNTS, { headers: csrf })).status, 200, 'Connect, read');
    assert.equal((await jsonCall(jar, url, 'GET', '/armory/accounts', { headers: csrf })).status, 200, 'REST, read');
    const created = await jsonCall(jar, url, 'POST', '/armory/accounts', {
      headers: csrf,
      body: [{ name: 'made-by-alice', kubeconfigFile: '/k' }],
    });
    assert.equal(created.status, 201, 'REST, admin');
    // Connect, admin: the audit log names her sign-in, with her groups.
    const audit = await jsonCall(jar, url, 'POST', LIST_AUDIT, { headers: csrf, body: { kind: 'session' } });
    assert.equal(audit.status, 200);
    const events = audit.body.events as { principal: string; verb: string; groups: string[]; path: string }[];
    const signIn = events.find((e) => e.verb === 'sign-in');
    assert.deepEqual(signIn && [signIn.principal, signIn.groups, signIn.path], [
      'oidc:corp:alice',
      ['corp:platform-admins', 'corp:everyone'],
      '/auth/oidc/corp/callback',
    ]);
  });

  test('the session cookie: HttpOnly, SameSite=Strict, Secure on loopback, Path=/, with the __Host- prefix', async () => {
    const jar = new CookieJar();
    const start = await jarFetch(jar, `${url}/auth/oidc/corp/login`);
    assert.equal(start.status, 302);
    const login = start.headers.getSetCookie()[0]!;
    assert.match(login, /^outpost-login=[^;]+; Path=\/auth\/oidc\/corp\/callback; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/);
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.origin, setup.provider.issuer);
    assert.deepEqual(
      ['redirect_uri', 'code_challenge_method', 'response_type', 'scope'].map((p) => authorize.searchParams.get(p)),
      [`${url}/auth/oidc/corp/callback`, 'S256', 'code', 'openid profile email offline_access groups'],
    );
    for (const p of ['state', 'nonce', 'code_challenge']) assert.ok(authorize.searchParams.get(p), p);
    assert.doesNotMatch(login, new RegExp(authorize.searchParams.get('state')!), 'the state is sealed, not in clear');

    let sessionLine = '';
    const original = jar.store.bind(jar);
    jar.store = (u, r) => {
      sessionLine ||= r.headers.getSetCookie().find((l) => l.startsWith(`${COOKIE}=`)) ?? '';
      original(u, r);
    };
    await signInOverHttp(url, { login: 'bob', jar });
    assert.match(sessionLine, new RegExp(`^${COOKIE}=[A-Za-z0-9_-]{43}; Path=/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$`));
  });

  test("bob reads but may not administer: the rules' roles for his groups", async () => {
    const { jar, csrf, session } = await signedIn('bob');
    assert.deepEqual([session.body.identity, session.body.roles], ['oidc:corp:bob', ['read']]);
    const headers = { 'x-outpost-csrf': csrf };
    assert.equal((await jsonCall(jar, url, 'POST', LIST_ACCOUNTS, { headers })).status, 200);
    const refused = await jsonCall(jar, url, 'POST', LIST_AUDIT, { headers });
    assert.equal(refused.status, 403);
    assert.match(String(refused.body.message), /corp:bob lacks the role "admin"/);
    const rest = await jsonCall(jar, url, 'POST', '/armory/accounts', { headers, body: [{ name: 'made-by-bob', kubeconfigFile: '/k' }] });
    assert.deepEqual([rest.status, rest.body.error], [403, 'permission_denied']);
  });

  test("sign-out deletes the session: the cookie replayed is refused, the provider's sign-out URL is given", async () => {
    const { jar, csrf } = await signedIn('alice');
    const stolen = jar.get(url, COOKIE)!;
    const before = await sessionRows();
    const out = await jsonCall(jar, url, 'POST', '/auth/logout', { headers: { 'x-outpost-csrf': csrf } });
    assert.equal(out.status, 200);
    const end = new URL(String(out.body.endSessionUrl));
    assert.equal(`${end.origin}${end.pathname}`, `${setup.provider.issuer}/session/end`);
    assert.equal(end.searchParams.get('post_logout_redirect_uri'), `${url}/`);
    assert.equal(end.searchParams.get('client_id'), 'outpost-dashboard');
    assert.ok(end.searchParams.get('id_token_hint'));
    assert.equal(jar.get(url, COOKIE), undefined, 'the cookie is cleared');
    assert.equal(await sessionRows(), before - 1, 'the row is gone');

    const replay = new CookieJar();
    replay.set(url, COOKIE, stolen);
    const call = await jsonCall(replay, url, 'POST', LIST_ACCOUNTS, { headers: { 'x-outpost-csrf': csrf } });
    assert.equal(call.status, 401);
    assert.match(String(call.body.message), /no such dashboard session/);
    assert.equal((await jsonCall(replay, url, 'GET', '/armory/accounts', { headers: { 'x-outpost-csrf': csrf } })).status, 401);
    assert.equal((await readSession(replay, url)).body.signedIn, false);
    assert.equal((await jsonCall(replay, url, 'POST', '/auth/logout', { headers: { 'x-outpost-csrf': csrf } })).status, 401);
  });

  test('next never leaves the origin: //evil.example, /\\evil.example, a full URL and a tab all land on /', async () => {
    for (const next of ['//evil.example', '/\\evil.example', 'https://evil.example/', '/\t/evil.example', 'evil']) {
      const { landing } = await signInOverHttp(url, { login: 'alice', next });
      assert.equal(landing, '/', JSON.stringify(next));
    }
  });

  test('a forged state, the provider refusing, no login cookie: refused with a code the dashboard shows, nothing created', async () => {
    const before = await sessionRows();
    const forged = await signInOverHttp(url, { login: 'alice', tamperCallback: (u) => u.searchParams.set('state', 'forged') });
    assert.equal(forged.landing, '/?sign_in_error=state_mismatch');
    assert.equal(forged.jar.get(url, COOKIE), undefined);

    const jar = new CookieJar();
    await jarFetch(jar, `${url}/auth/oidc/corp/login`);
    const denied = await jarFetch(jar, `${url}/auth/oidc/corp/callback?error=access_denied&state=x`);
    assert.deepEqual([denied.status, denied.headers.get('location')], [302, '/?sign_in_error=access_denied']);
    const noCookie = await fetch(`${url}/auth/oidc/corp/callback?code=abc&state=def`, { redirect: 'manual' });
    assert.deepEqual([noCookie.status, noCookie.headers.get('location')], [302, '/?sign_in_error=login_expired']);
    assert.equal(await sessionRows(), before, 'no session row');
  });

  test('an unknown provider is a 404 with {error, message}', async () => {
    for (const path of ['/auth/oidc/nope/login', '/auth/oidc/nope/callback']) {
      const r = await jsonCall(new CookieJar(), url, 'GET', path);
      assert.deepEqual([r.status, r.body.error], [404, 'not_found'], path);
      assert.match(String(r.body.message), /no OIDC provider "nope": auth\.oidc\.providers has corp/);
    }
  });

  test('the stored row holds no token in clear, and not the cookie: its key is the SHA-256 of the secret', async () => {
    const { jar } = await signedIn('alice');
    const secret = jar.get(url, COOKIE)!;
    const key = createHash('sha256').update(secret).digest('hex');
    const [row] = await t.query<Record<string, unknown>>(`select * from web_sessions where id = '${key}'`);
    assert.ok(row, 'the row is keyed by the digest');
    const text = JSON.stringify(row);
    assert.ok(!text.includes(secret), 'no cookie value');
    assert.doesNotMatch(text, /eyJ[A-Za-z0-9_-]{10,}/, 'no JWT (ID or access token) in any column');
    const tokens = typeof row.tokens === 'string' ? JSON.parse(row.tokens) : row.tokens;
    assert.deepEqual(Object.keys(tokens as object).sort(), ['data', 'iv', 'kid', 'tag', 'v'], 'an AES-GCM envelope');
    assert.deepEqual([row.subject, row.provider], ['corp:alice', 'corp']);
  });
});
