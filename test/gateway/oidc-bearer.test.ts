/**
 * Tokens of an `auth.oidc` provider as bearer credentials, against a real OpenID Provider on loopback (oidc-provider):
 * discovery and the JWKS are read on first use, the identity is `oidc:<provider>:<username>`, rules match its groups;
 * a token of an unknown issuer, for another audience, expired, or signed with a key the provider rotated out is
 * refused with a message saying which; a new key id fetches the JWKS once, and not again within the cooldown.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jwtVerify } from 'jose';
import { createSigningKeys } from '../../src/gateway/auth/oidc-signing-keys.js';
import { AGENT_WEBSOCKET_PATH, AGENT_WEBSOCKET_PROTOCOL } from '../../src/shared/agent-websocket.js';
import { Code, grpcAgentStream, grpcRead, restCall, startAuthGateway } from '../../testkit/auth-helpers.js';
import { upgradeAnswer } from '../../testkit/websocket-upgrade.js';
import { CLI_CLIENT_ID, DASHBOARD_CLIENT_ID, startTestOidcProvider, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import { writeKeyFile } from '../../testkit/sign-in-gateway.js';
import type { TestGateway } from '../../testkit/test-gateway.js';

describe('OIDC tokens as bearer credentials', { concurrency: false }, () => {
  let provider: TestOidcProvider;
  let gw: TestGateway;
  const dir = mkdtempSync(join(tmpdir(), 'outpost-oidc-bearer-'));
  before(async () => {
    provider = await startTestOidcProvider();
    provider.configure({ dashboardRedirectUris: ['http://127.0.0.1/unused'] });
    gw = await startAuthGateway({
      auth: {
        readAccess: 'authenticated',
        oidc: {
          providers: [
            {
              name: 'corp',
              issuer: provider.issuer,
              clientId: DASHBOARD_CLIENT_ID,
              cliClientId: CLI_CLIENT_ID,
              audiences: ['outpost-api'],
              groupsPrefix: 'corp:',
              jwksCacheSeconds: 1,
              jwksCooldownSeconds: 0,
            },
            // A provider that cannot be reached (nothing listens on port 1).
            { name: 'down', issuer: 'http://127.0.0.1:1', clientId: DASHBOARD_CLIENT_ID },
          ],
        },
      },
      secrets: { keyFile: writeKeyFile(dir) },
      authorization: {
        rules: [
          { kind: 'oidc', groups: ['corp:platform-admins'], roles: ['read', 'admin'] },
          { kind: 'oidc', groups: ['corp:developers'], roles: ['read'] },
          { kind: 'oidc', subject: '^corp:carol$', roles: ['admin'] },
        ],
      },
    });
  });
  after(async () => {
    await gw?.close();
    await provider?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  let made = 0;
  const admin = (token: string) => restCall(gw.gateway.httpUrl, 'POST', '/armory/accounts', { token }, [{ name: `oidc-made-${++made}` }]);

  test('a token of the provider admits its holder with the roles its groups earn, on gRPC and REST', async () => {
    const alice = await provider.mint({ sub: 'alice' });
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: alice })).code, 'ok');
    assert.equal((await admin(alice)).status, 201, 'platform-admins may manage accounts');
    const bob = await provider.mint({ sub: 'bob', groups: ['developers'] });
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: bob })).code, 'ok');
    const refused = await admin(bob);
    assert.equal(refused.status, 403);
    assert.match(refused.body.message!, /corp:bob lacks the role "admin"/);
    // By subject, without any group; and a token for the CLI's client id is accepted too.
    const carol = await provider.mint({ sub: 'carol', groups: [], aud: CLI_CLIENT_ID });
    assert.equal((await admin(carol)).status, 201);
    // A JWT access token issued for an API audience listed in `audiences` (aud may be an array).
    const access = await provider.mint({ sub: 'carol', groups: [], aud: ['outpost-api', 'https://other.example'], scope: 'openid' });
    assert.equal((await admin(access)).status, 201);
    // The groups prefix keeps another provider's group of the same name apart: an unprefixed rule name does not match.
    const dave = await provider.mint({ sub: 'dave', groups: ['corp:platform-admins'] });
    assert.equal((await admin(dave)).status, 403);
  });

  test('the agent stream checks the same tokens, over gRPC and WebSocket: a person is authenticated, and lacks the agent role', async () => {
    const alice = await provider.mint({ sub: 'alice' });
    const grpc = await grpcAgentStream(gw.gateway.grpcUrl, { token: alice });
    assert.equal(grpc.code, Code.PermissionDenied);
    assert.match(grpc.message, /corp:alice lacks the role "agent"/);
    const url = `ws://${new URL(gw.gateway.httpUrl).host}${AGENT_WEBSOCKET_PATH}`;
    assert.equal((await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], { authorization: `Bearer ${alice}` })).status, 403);
    const otherAudience = await provider.mint({ sub: 'alice', aud: 'some-other-app' });
    const other = await upgradeAnswer(url, [AGENT_WEBSOCKET_PROTOCOL], { authorization: `Bearer ${otherAudience}` });
    assert.equal(other.status, 401);
    assert.match(other.body, /for another audience/);
  });

  test('a provider that cannot be reached: its tokens get UNAVAILABLE / 503 naming it, not a silent 401', async () => {
    const token = await provider.mint({ iss: 'http://127.0.0.1:1' });
    const grpc = await grpcRead(gw.gateway.grpcUrl, { token });
    assert.equal(grpc.code, Code.Unavailable);
    assert.match(grpc.message, /OIDC provider down \(http:\/\/127\.0\.0\.1:1\) cannot be reached/);
    const rest = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token });
    assert.equal(rest.status, 503);
    assert.match(rest.body.message!, /OIDC provider down .* cannot be reached/);
  });

  test('GET /auth/providers lists the sign-in options without credentials; nothing secret in it', async () => {
    const r = await fetch(`${gw.gateway.httpUrl}/auth/providers`);
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), {
      providers: [
        {
          name: 'corp',
          displayName: 'corp',
          issuer: provider.issuer,
          cliClientId: CLI_CLIENT_ID,
          scopes: ['openid', 'profile', 'email', 'offline_access'],
        },
        {
          name: 'down',
          displayName: 'down',
          issuer: 'http://127.0.0.1:1',
          cliClientId: DASHBOARD_CLIENT_ID,
          scopes: ['openid', 'profile', 'email', 'offline_access'],
        },
      ],
    });
  });

  test('refusals name the reason: unknown issuer, another audience, expired, no username', async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['unknown issuer', { iss: 'https://elsewhere.example' }, /issuer "https:\/\/elsewhere.example" is none of the OIDC providers/],
      ['another audience', { aud: 'some-other-app' }, /token of OIDC provider corp is for another audience/],
      ['expired', { iat: 1_000, exp: 2_000 }, /token of OIDC provider corp expired/],
      ['not yet valid', { nbf: Math.floor(Date.now() / 1000) + 3600 }, /not yet valid \(nbf\)/],
      ['no username', { sub: undefined }, /has no string "sub" claim/],
    ];
    for (const [what, claims, message] of cases) {
      const token = await provider.mint(claims);
      const grpc = await grpcRead(gw.gateway.grpcUrl, { token });
      assert.equal(grpc.code, Code.Unauthenticated, what);
      assert.match(grpc.message, message, what);
      const rest = await restCall(gw.gateway.httpUrl, 'GET', '/armory/clouddrivers', { token });
      assert.deepEqual([rest.status, rest.body.error], [401, 'unauthenticated'], what);
    }
  });

  test('key rotation: a token with the new key id is accepted at once, one signed with a rotated-out key is refused', async () => {
    const old = await provider.mint({ sub: 'alice' });
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: old })).code, 'ok');
    provider.rotateKeys();
    const fresh = await provider.mint({ sub: 'alice' });
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: fresh })).code, 'ok', 'the new key id is fetched');
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: old })).code, 'ok', 'the old key is still published');
    provider.dropOldKeys();
    // jwksCacheSeconds is 1: once it has passed, the keys are fetched again and the old one is gone.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const r = await grpcRead(gw.gateway.grpcUrl, { token: old });
    assert.equal(r.code, Code.Unauthenticated);
    assert.match(r.message, /signed with a key the provider no longer publishes \(rotated out\)/);
    assert.equal((await grpcRead(gw.gateway.grpcUrl, { token: fresh })).code, 'ok');
  });

  test('an unknown key id fetches the keys once per cooldown, concurrent tokens share the fetch (driven clock)', async () => {
    let clock = 1_000_000;
    const resolve = createSigningKeys({ jwksUri: `${provider.issuer}/jwks`, cacheMs: 600_000, cooldownMs: 30_000, now: () => clock });
    const check = (token: string) =>
      jwtVerify(token, resolve).then(
        () => 'ok',
        (err: Error) => err.constructor.name,
      );
    const fetches = () => provider.requests('/jwks');
    const start = fetches();
    assert.equal(await check(await provider.mint({})), 'ok');
    assert.equal(fetches(), start + 1, 'the first token fetches the keys');
    provider.rotateKeys();
    const rotated = await provider.mint({});
    // Within the cooldown of the first fetch, the new key id is not fetched: refused for now.
    clock += 10_000;
    assert.equal(await check(rotated), 'JWKSNoMatchingKey');
    assert.equal(fetches(), start + 1);
    // After it, the new key id fetches the keys once, however many tokens ask at the same time.
    clock += 30_000;
    assert.deepEqual(await Promise.all([check(rotated), check(rotated), check(rotated)]), ['ok', 'ok', 'ok']);
    assert.equal(fetches(), start + 2);
    // Made-up key ids right after: no fetch.
    const forged = forgeKid(rotated, 'never-published');
    for (let i = 0; i < 5; i++) assert.equal(await check(forged), 'JWKSNoMatchingKey');
    assert.equal(fetches(), start + 2, 'unknown key ids do not hammer the provider');
  });
});

/** The token with another key id in its header (its signature no longer matters: no key of that id exists). */
function forgeKid(token: string, kid: string): string {
  const [header, ...rest] = token.split('.');
  const decoded = JSON.parse(Buffer.from(header!, 'base64url').toString('utf8')) as Record<string, unknown>;
  return [Buffer.from(JSON.stringify({ ...decoded, kid })).toString('base64url'), ...rest].join('.');
}
