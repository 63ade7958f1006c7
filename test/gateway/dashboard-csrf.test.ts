/**
 * The CSRF rules of the dashboard's session cookie (docs/security.md, "The dashboard's sessions"): with the cookie,
 * a Connect or REST request without the X-Outpost-CSRF header, with a wrong one, from another Origin or marked
 * cross-site or same-site by Sec-Fetch-Site is refused 403 / PERMISSION_DENIED and audited as alice's; GET
 * /auth/session is exempt from the header only. The cookie is no credential on the gRPC port, on /k8s (but for a
 * pod's log, with the header) or on agent streams, and a bearer token takes precedence over it.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import { after, before, describe, test } from 'node:test';
import { eventually } from '../../testkit/eventually.js';
import { type CookieJar, jsonCall, readSession, signInOverHttp, type JsonOutcome } from '../../testkit/http-sign-in.js';
import { createSignInSetup, type SignInSetup } from '../../testkit/sign-in-gateway.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const LIST_ACCOUNTS = 'outpost.api.v1.AccountService/ListAccounts';
const LIST_AUDIT = 'outpost.api.v1.AuditService/ListAuditEvents';

describe('CSRF rules of the dashboard session', { concurrency: false, timeout: 120_000 }, () => {
  let setup: SignInSetup;
  let t: TestGateway;
  let url: string;
  let jar: CookieJar;
  let csrf: string;
  before(async () => {
    setup = await createSignInSetup();
    t = await startTestGateway('pglite', setup.config());
    url = t.gateway.httpUrl;
    setup.register(url);
    ({ jar } = await signInOverHttp(url, { login: 'alice' }));
    csrf = String((await readSession(jar, url)).body.csrfToken);
  });
  after(async () => {
    await t?.close();
    await setup?.close();
  });

  const refusedAs = (r: JsonOutcome, pattern: RegExp, what: string) => {
    assert.equal(r.status, 403, what);
    assert.ok(r.body.code === 'permission_denied' || r.body.error === 'permission_denied', what);
    assert.match(String(r.body.message), pattern, what);
  };

  test('without the header, with a wrong one, from another origin or site: 403 on Connect and REST, audited as alice', async () => {
    const cases: [string, Record<string, string>, RegExp][] = [
      ['no header', {}, /refused: a request authenticated by the dashboard session must carry the X-Outpost-CSRF header/],
      ['a wrong header', { 'x-outpost-csrf': `${csrf.slice(0, -2)}xx` }, /refused: the X-Outpost-CSRF header does not match/],
      ['another origin', { 'x-outpost-csrf': csrf, origin: 'https://evil.example' }, /comes from origin "https:\/\/evil\.example"/],
      ['cross-site', { 'x-outpost-csrf': csrf, 'sec-fetch-site': 'cross-site' }, /a cross-site request \(Sec-Fetch-Site: cross-site\)/],
      ['same-site', { 'x-outpost-csrf': csrf, 'sec-fetch-site': 'same-site' }, /a same-site request/],
    ];
    for (const [what, headers, pattern] of cases) {
      refusedAs(await jsonCall(jar, url, 'POST', LIST_ACCOUNTS, { headers }), pattern, `Connect POST, ${what}`);
      refusedAs(
        await jsonCall(jar, url, 'GET', `/${LIST_ACCOUNTS}?encoding=json&message=%7B%7D`, { headers }),
        pattern,
        `Connect GET, ${what}`,
      );
      refusedAs(await jsonCall(jar, url, 'GET', '/armory/accounts', { headers }), pattern, `REST GET, ${what}`);
      const body = [{ name: 'csrf-made', kubeconfigFile: '/k' }];
      refusedAs(await jsonCall(jar, url, 'POST', '/armory/accounts', { headers, body }), pattern, `REST POST, ${what}`);
    }
    assert.equal((await t.query(`select name from accounts where name = 'csrf-made'`)).length, 0, 'nothing was created');
    // The same-origin request with the token passes (sec-fetch-site same-origin, the page's own origin).
    const ok = { 'x-outpost-csrf': csrf, origin: url, 'sec-fetch-site': 'same-origin' };
    assert.equal((await jsonCall(jar, url, 'POST', LIST_ACCOUNTS, { headers: ok })).status, 200);
    assert.equal((await jsonCall(jar, url, 'GET', `/${LIST_ACCOUNTS}?encoding=json&message=%7B%7D`, { headers: ok })).status, 200);
    assert.equal((await jsonCall(jar, url, 'GET', '/armory/accounts', { headers: ok })).status, 200);

    const refusals = await eventually('20 refusals audited', async () => {
      const { entries } = await t.gateway.audit.list({ kind: 'session', principal: 'oidc:corp:alice', pageSize: 100 });
      const refused = entries.filter((e) => e.verb === 'refused');
      return refused.length === 20 ? refused : undefined;
    });
    for (const e of refusals) {
      assert.deepEqual([e.status, e.groups, e.error.startsWith('refused: ')], [403, ['corp:platform-admins', 'corp:everyone'], true]);
    }
    assert.ok(refusals.some((e) => e.path === '/outpost.api.v1.AccountService/ListAccounts'));
    assert.ok(refusals.some((e) => e.path === '/armory/accounts'));
  });

  test('GET /auth/session needs no header, but another origin or site is refused there too', async () => {
    assert.equal((await readSession(jar, url)).body.signedIn, true);
    refusedAs(await readSession(jar, url, { origin: 'https://evil.example' }), /comes from origin/, 'Origin');
    refusedAs(await readSession(jar, url, { 'sec-fetch-site': 'cross-site' }), /cross-site/, 'Sec-Fetch-Site');
    const answer = await fetch(`${url}/auth/session`, { headers: { cookie: jar.header(url), origin: url } });
    assert.equal(answer.headers.get('access-control-allow-origin'), null, 'no CORS header');
    assert.equal(answer.headers.get('cache-control'), 'no-store');
  });

  test('sign-out needs the header too; refused, the session lives on', async () => {
    refusedAs(await jsonCall(jar, url, 'POST', '/auth/logout'), /must carry the X-Outpost-CSRF header/, 'no header');
    assert.equal((await readSession(jar, url)).body.signedIn, true);
  });

  test('the cookie is no credential on the gRPC port, on /k8s, or on agent streams', async () => {
    const headers = { cookie: jar.header(url), 'x-outpost-csrf': csrf };
    const grpcPort = await h2Json(t.gateway.grpcUrl, `/${LIST_ACCOUNTS}`, headers);
    assert.equal(grpcPort.status, 401, 'the gRPC port drops cookies');
    const kube = await fetch(`${url}/k8s/some-account/api/v1/namespaces`, { headers });
    assert.equal(kube.status, 401, '/k8s');
    const agent = await fetch(`${url}/outpost.agent.v1.AgentService/Connect`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/connect+json' },
      body: new Uint8Array(5),
    });
    const end = JSON.parse(
      Buffer.from(await agent.arrayBuffer())
        .subarray(5)
        .toString('utf8'),
    ) as { error?: { code: string } };
    assert.equal(end.error?.code, 'unauthenticated', 'agent stream');
  });

  test("on /k8s the cookie authenticates a pod's log read only, and only with the CSRF header", async () => {
    const log = `${url}/k8s/some-account/api/v1/namespaces/demo/pods/web-0/log?follow=true`;
    const cookie = jar.header(url);
    const read = async (method: string, headers: Record<string, string>) => {
      const r = await fetch(log, { method, headers: { cookie, ...headers } });
      return { status: r.status, body: (await r.json()) as { message?: string } };
    };
    const withHeader = await read('GET', { 'x-outpost-csrf': csrf });
    assert.equal(withHeader.status, 403, 'authenticated as alice, who lacks the kube role');
    assert.match(String(withHeader.body.message), /corp:alice/);
    const without = await read('GET', {});
    assert.equal(without.status, 403);
    assert.match(String(without.body.message), /must carry the X-Outpost-CSRF header/);
    const crossSite = await read('GET', { 'x-outpost-csrf': csrf, 'sec-fetch-site': 'cross-site' });
    assert.equal(crossSite.status, 403);
    assert.match(String(crossSite.body.message), /cross-site/);
    assert.equal((await read('DELETE', { 'x-outpost-csrf': csrf })).status, 401, 'only a GET of a log');
    const other = await fetch(`${url}/k8s/some-account/api/v1/namespaces/demo/pods/web-0/logs`, {
      headers: { cookie, 'x-outpost-csrf': csrf },
    });
    assert.equal(other.status, 401, 'another path takes no cookie');
  });

  test("a bearer token takes precedence over the cookie: bob's token over alice's session acts as bob", async () => {
    const bob = await setup.provider.mint({ sub: 'bob', groups: ['developers'], aud: 'outpost-dashboard' });
    const headers = { 'x-outpost-csrf': csrf, authorization: `Bearer ${bob}` };
    const r = await jsonCall(jar, url, 'POST', LIST_AUDIT, { headers });
    assert.equal(r.status, 403);
    assert.match(String(r.body.message), /corp:bob lacks the role "admin"/);
    const whoami = await readSession(jar, url, { authorization: `Bearer ${bob}` });
    assert.deepEqual([whoami.body.identity, whoami.body.roles, whoami.body.csrfToken], ['oidc:corp:bob', ['read'], undefined]);
  });
});

/** A Connect JSON call over cleartext HTTP/2 (the gRPC port): its HTTP status. */
function h2Json(baseUrl: string, path: string, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on('error', reject);
    const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json', ...headers });
    req.on('response', (h) => {
      req.resume();
      req.on('end', () => {
        session.close();
        resolve({ status: Number(h[':status']) });
      });
    });
    req.on('error', reject);
    req.end('{}');
  });
}
