/**
 * The OIDC providers of `auth.oidc` as the gateway checks their bearer tokens (src/gateway/auth/oidc-issuers.ts),
 * against a provider on loopback (testkit/oidc-stub-issuer.ts): discovery on first use and kept, a failed discovery
 * retried at most every 10 s (UNAVAILABLE naming the provider meanwhile), the signing keys kept `jwksCacheSeconds` and
 * refetched for a new key id at most every `jwksCooldownSeconds` (the signing-key clock driven through `now`), the
 * checks of `iss`, `aud`, `exp` and `nbf` with their exact refusals, and the identity `oidc:<provider>:<username>` with
 * the prefixed groups. A check that could go missing unnoticed here would let a foreign or stale token in.
 */
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, mock, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import * as client from 'openid-client';
import { claimedGroups, createOidcIssuers, discoveryOptions, type OidcIssuer } from '../../src/gateway/auth/oidc-issuers.js';
import { oidcSchema } from '../../src/gateway/config/oidc-schema.js';
import type { Logger } from '../../src/shared/logger.js';
import { DISCOVERY_PATH, type StubIssuer, startStubIssuer } from '../../testkit/oidc-stub-issuer.js';

let stub: StubIssuer;
before(async () => {
  stub = await startStubIssuer();
  for (const kid of ['k1', 'k2', 'k3']) await stub.addKey(kid);
});
after(() => stub.close());
afterEach(() => {
  stub.publish('k1');
  stub.discovery(undefined);
  stub.jwksAnswer(undefined);
});

/** A logger that records what it says, level by level. */
function recordingLogger() {
  const lines: { level: string; fields: unknown; message: string }[] = [];
  const at = (level: string) => (fields: unknown, message: string) => lines.push({ level, fields, message });
  return { logger: { info: at('info'), warn: at('warn') } as unknown as Logger, lines };
}

/** The providers of `auth.oidc` with these provider settings (after the schema's defaults). */
function issuersOf(providers: Record<string, unknown>[], now?: () => number) {
  const { logger, lines } = recordingLogger();
  const issuers = createOidcIssuers(oidcSchema.parse({ providers }), logger, now);
  return { issuers, lines };
}

/** The one provider `corp` on the stub, with the CLI's client and an API audience. */
function corp(over: Record<string, unknown> = {}, now?: () => number) {
  const { issuers, lines } = issuersOf(
    [
      {
        name: 'corp',
        issuer: stub.issuer,
        clientId: 'outpost-dashboard',
        cliClientId: 'outpost-cli',
        audiences: ['outpost-api'],
        groupsPrefix: 'corp:',
        ...over,
      },
    ],
    now,
  );
  return { corp: issuers.byName('corp')!, lines };
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Claims the provider `corp` accepts: its issuer, the dashboard's audience, alive for an hour. */
function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const iat = nowSeconds();
  return { iss: stub.issuer, aud: 'outpost-dashboard', sub: 'alice', iat, exp: iat + 3600, ...extra };
}

/** The refusal of a token: its code and message (never an accepted token). */
async function refusal(issuer: OidcIssuer, token: string): Promise<{ code: Code; message: string }> {
  const err = await issuer.verify(token).then(
    () => assert.fail('the token was accepted'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConnectError, `a ConnectError, not ${String(err)}`);
  return { code: err.code, message: err.rawMessage };
}

const unauthenticated = (message: string) => ({ code: Code.Unauthenticated, message });
const unavailable = (why: string) => ({ code: Code.Unavailable, message: `OIDC provider corp (${stub.issuer}) cannot be reached: ${why}` });

describe('OIDC issuers', { concurrency: false }, () => {
  test('no auth.oidc: no provider, and no issuer or name finds one', () => {
    const issuers = createOidcIssuers(undefined, recordingLogger().logger);
    assert.deepEqual(issuers.all(), []);
    assert.equal(issuers.byIssuer(stub.issuer), undefined);
    assert.equal(issuers.byName('corp'), undefined);
  });

  test('a provider is found by its exact issuer and by its name, nothing else', () => {
    const { issuers } = issuersOf([
      { name: 'corp', issuer: stub.issuer, clientId: 'a' },
      { name: 'other', issuer: 'https://login.example.com/oauth2/default', clientId: 'b' },
    ]);
    assert.deepEqual(
      issuers.all().map((i) => i.config.name),
      ['corp', 'other'],
    );
    assert.equal(issuers.byIssuer(stub.issuer)?.config.name, 'corp');
    assert.equal(issuers.byIssuer('https://login.example.com/oauth2/default')?.config.name, 'other');
    assert.equal(issuers.byIssuer(`${stub.issuer}/`), undefined, 'a trailing slash is another issuer');
    assert.equal(issuers.byIssuer('https://login.example.com/oauth2'), undefined, 'a prefix is another issuer');
    assert.equal(issuers.byName('other')?.config.issuer, 'https://login.example.com/oauth2/default');
    assert.equal(issuers.byName('corp')?.config.issuer, stub.issuer);
    assert.equal(issuers.byName('cor'), undefined);
  });

  test('plain http is allowed to a (loopback) http issuer only, never to an https one', () => {
    assert.deepEqual(discoveryOptions('http://127.0.0.1:8080'), { execute: [client.allowInsecureRequests] });
    assert.deepEqual(discoveryOptions('https://login.example.com/oauth2/default'), {});
    assert.deepEqual(discoveryOptions('https://login.example.com/http:'), {});
  });

  test('nothing is fetched before a token needs it; discovery and keys are then read once and kept', async () => {
    const before = [stub.requests(DISCOVERY_PATH), stub.requests('/jwks')];
    const { corp: issuer, lines } = corp();
    assert.deepEqual([stub.requests(DISCOVERY_PATH), stub.requests('/jwks')], before, 'nothing at creation');
    const token = await stub.sign(claims(), 'k1');
    assert.equal((await issuer.verify(token)).subject, 'corp:alice');
    assert.equal((await issuer.verify(token)).subject, 'corp:alice');
    assert.deepEqual([stub.requests(DISCOVERY_PATH), stub.requests('/jwks')], [before[0]! + 1, before[1]! + 1]);
    const metadata = await issuer.serverMetadata();
    assert.equal(metadata.issuer, stub.issuer);
    assert.equal(metadata.jwks_uri, stub.jwksUri);
    assert.equal(stub.requests(DISCOVERY_PATH), before[0]! + 1, 'the metadata is the kept discovery');
    assert.deepEqual(lines, [{ level: 'info', fields: { provider: 'corp', issuer: stub.issuer }, message: 'OIDC provider discovered' }]);
  });

  test('a token names oidc:<provider>:<username> with its groups prefixed, and when it expires', async () => {
    const { corp: issuer } = corp();
    const exp = nowSeconds() + 1800;
    const token = await stub.sign(claims({ exp, groups: ['platform-admins', '', 7, null, 'everyone'] }), 'k1');
    assert.deepEqual(await issuer.verify(token), {
      provider: 'corp',
      subject: 'corp:alice',
      groups: ['corp:platform-admins', 'corp:everyone'],
      expiresAt: exp * 1000,
    });
  });

  test('the username and groups claims are the configured ones', async () => {
    const { corp: issuer } = corp({ usernameClaim: 'email', groupsClaim: 'roles', groupsPrefix: 'okta:' });
    const token = await stub.sign(claims({ email: 'alice@example.com', groups: ['ignored'], roles: 'admins' }), 'k1');
    const identity = await issuer.verify(token);
    assert.equal(identity.subject, 'corp:alice@example.com');
    assert.deepEqual(identity.groups, ['okta:admins']);
  });

  test('a groups claim is an array of strings or one string; anything else names no group', () => {
    const { corp: issuer } = corp();
    const groupsOf = (groups: unknown) => issuer.identityOf({ sub: 'alice', exp: 1, groups }).groups;
    assert.deepEqual(groupsOf('developers'), ['corp:developers']);
    assert.deepEqual(groupsOf(''), []);
    assert.deepEqual(groupsOf(undefined), []);
    assert.deepEqual(groupsOf(42), []);
    assert.deepEqual(groupsOf({ 0: 'admins' }), []);
    assert.deepEqual(groupsOf(['a', '', 'b']), ['corp:a', 'corp:b']);
    assert.deepEqual(claimedGroups(['x', 1, 'y']), ['x', 'y']);
    assert.deepEqual(claimedGroups('x'), ['x']);
  });

  test('a token without a usable username claim is refused, naming the claim', async () => {
    const { corp: issuer } = corp();
    const message = 'token of OIDC provider corp has no string "sub" claim to name the person (usernameClaim)';
    for (const sub of [undefined, '', 42, ['alice']]) {
      assert.deepEqual(await refusal(issuer, await stub.sign(claims({ sub }), 'k1')), unauthenticated(message), String(sub));
    }
    const { corp: byEmail } = corp({ usernameClaim: 'email' });
    assert.deepEqual(
      await refusal(byEmail, await stub.sign(claims(), 'k1')),
      unauthenticated('token of OIDC provider corp has no string "email" claim to name the person (usernameClaim)'),
    );
  });

  test('the audiences accepted: the client id, the CLI client id, the listed audiences; any other is refused naming them', async () => {
    const { corp: issuer } = corp();
    for (const aud of ['outpost-dashboard', 'outpost-cli', 'outpost-api', ['https://other.example', 'outpost-api']]) {
      assert.equal((await issuer.verify(await stub.sign(claims({ aud }), 'k1'))).subject, 'corp:alice', String(aud));
    }
    assert.deepEqual(
      await refusal(issuer, await stub.sign(claims({ aud: 'some-other-app' }), 'k1')),
      unauthenticated('token of OIDC provider corp is for another audience: accepted are outpost-dashboard, outpost-cli, outpost-api'),
    );
    const { corp: plain } = corp({ cliClientId: undefined, audiences: undefined });
    assert.deepEqual(
      await refusal(plain, await stub.sign(claims({ aud: 'outpost-cli' }), 'k1')),
      unauthenticated('token of OIDC provider corp is for another audience: accepted are outpost-dashboard'),
    );
    const { corp: same } = corp({ cliClientId: 'outpost-dashboard', audiences: ['outpost-dashboard'] });
    assert.deepEqual(
      await refusal(same, await stub.sign(claims({ aud: 'outpost-api' }), 'k1')),
      unauthenticated('token of OIDC provider corp is for another audience: accepted are outpost-dashboard'),
    );
  });

  test('iss must be exactly the configured issuer, even signed with the provider key', async () => {
    const { corp: issuer } = corp();
    for (const iss of [`${stub.issuer}/`, 'https://elsewhere.example', undefined]) {
      assert.deepEqual(
        await refusal(issuer, await stub.sign(claims({ iss }), 'k1')),
        unauthenticated(`token of OIDC provider corp issuer (iss) does not match ${stub.issuer}`),
        String(iss),
      );
    }
  });

  test('exp is required and checked with clockToleranceSeconds of skew, nbf too', async (t) => {
    // The clock stands still (jose reads Date): the skew windows below do not shrink on a slow machine.
    t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
    const { corp: issuer } = corp();
    const now = nowSeconds();
    const refused = async (extra: Record<string, unknown>) => refusal(issuer, await stub.sign(claims(extra), 'k1'));
    assert.deepEqual(await refused({ exp: undefined }), unauthenticated('token of OIDC provider corp has no valid exp claim'));
    assert.deepEqual(await refused({ exp: 'tomorrow' }), unauthenticated('token of OIDC provider corp has no valid exp claim'));
    assert.deepEqual(await refused({ iat: now - 7200, exp: now - 120 }), unauthenticated('token of OIDC provider corp expired'));
    assert.deepEqual(await refused({ nbf: now + 3600 }), unauthenticated('token of OIDC provider corp not yet valid (nbf)'));
    assert.deepEqual(await refused({ iat: 'now' }), unauthenticated('token of OIDC provider corp claim iat invalid: invalid'));
    // Within the default 30 s of skew: accepted.
    const lateExp = await stub.sign(claims({ iat: now - 3600, exp: now - 10 }), 'k1');
    const earlyNbf = await stub.sign(claims({ nbf: now + 10 }), 'k1');
    assert.equal((await issuer.verify(lateExp)).subject, 'corp:alice');
    assert.equal((await issuer.verify(earlyNbf)).subject, 'corp:alice');
    const { corp: strict } = corp({ clockToleranceSeconds: 0 });
    assert.deepEqual(await refusal(strict, lateExp), unauthenticated('token of OIDC provider corp expired'));
    assert.deepEqual(await refusal(strict, earlyNbf), unauthenticated('token of OIDC provider corp not yet valid (nbf)'));
  });

  test('a forged signature, an algorithm without a key, a malformed token: each refused saying so', async () => {
    const { corp: issuer } = corp();
    stub.publish('k1', 'k2');
    const signedByK2 = await stub.sign(claims(), 'k2', { kid: 'k1' });
    assert.deepEqual(await refusal(issuer, signedByK2), unauthenticated('token of OIDC provider corp signature invalid'));
    const token = await stub.sign(claims(), 'k1');
    const [, payload, signature] = token.split('.');
    const hs256 = `${Buffer.from(JSON.stringify({ alg: 'HS256', kid: 'k1' })).toString('base64url')}.${payload}.${signature}`;
    assert.deepEqual(await refusal(issuer, hs256), unauthenticated('token of OIDC provider corp algorithm not supported'));
    assert.deepEqual(await refusal(issuer, 'not-a-jwt'), unauthenticated('token of OIDC provider corp invalid: Invalid Compact JWS'));
  });

  test('signing keys: kept jwksCacheSeconds, a rotated-out key refused after; a new key id fetched at most every jwksCooldownSeconds', async () => {
    const clock = { now: 7_000_000 };
    const { corp: issuer } = corp({}, () => clock.now);
    stub.publish('k1', 'k2');
    const old = await stub.sign(claims(), 'k1');
    assert.equal((await issuer.verify(old)).subject, 'corp:alice');
    const fetches = stub.requests('/jwks');
    stub.publish('k2');
    clock.now += 600_000 - 1;
    assert.equal((await issuer.verify(old)).subject, 'corp:alice', 'the default 600 s of cache still hold it');
    assert.equal(stub.requests('/jwks'), fetches);
    clock.now += 1;
    const rotatedOut = 'token of OIDC provider corp is signed with a key the provider no longer publishes (rotated out) or never did';
    assert.deepEqual(await refusal(issuer, old), unauthenticated(rotatedOut));
    assert.equal(stub.requests('/jwks'), fetches + 1);
    stub.publish('k2', 'k3');
    const fresh = await stub.sign(claims(), 'k3');
    clock.now += 30_000 - 1;
    assert.deepEqual(await refusal(issuer, fresh), unauthenticated(rotatedOut), 'within the default 30 s of cooldown');
    assert.equal(stub.requests('/jwks'), fetches + 1);
    clock.now += 1;
    assert.equal((await issuer.verify(fresh)).subject, 'corp:alice', 'the cooldown over, the new key is fetched');
    assert.equal(stub.requests('/jwks'), fetches + 2);
  });

  test('signing keys that cannot be read: UNAVAILABLE naming the provider and why, not a silent refusal', async () => {
    const { corp: issuer } = corp();
    stub.jwksAnswer({ status: 503, body: '{}' });
    assert.deepEqual(
      await refusal(issuer, await stub.sign(claims(), 'k1')),
      unavailable(`its signing keys cannot be read: the JWKS at ${stub.jwksUri} answered HTTP 503`),
    );
  });

  test('a discovery document without jwks_uri: UNAVAILABLE saying so', async () => {
    const { corp: issuer, lines } = corp();
    stub.discovery({ change: ({ jwks_uri: _, ...doc }) => doc });
    assert.deepEqual(await refusal(issuer, await stub.sign(claims(), 'k1')), unavailable('the discovery document has no jwks_uri'));
    assert.deepEqual(lines, [
      {
        level: 'warn',
        fields: { provider: 'corp', issuer: stub.issuer, err: 'the discovery document has no jwks_uri' },
        message: 'OIDC provider discovery failed',
      },
    ]);
  });

  describe('a failed discovery', () => {
    afterEach(() => mock.timers.reset());

    test('is UNAVAILABLE naming the provider, and retried at most every 10 s', async () => {
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      const { corp: issuer, lines } = corp();
      const token = await stub.sign(claims(), 'k1');
      stub.discovery({ fail: { status: 500, body: '{}' } });
      const first = await refusal(issuer, token);
      assert.equal(first.code, Code.Unavailable);
      assert.match(first.message, /^OIDC provider corp \(http:\/\/127\.0\.0\.1:\d+\) cannot be reached: .+/);
      assert.equal(lines.length, 1);
      assert.deepEqual(lines[0]!.fields, {
        provider: 'corp',
        issuer: stub.issuer,
        err: first.message.replace(/^.*cannot be reached: /, ''),
      });
      assert.equal(lines[0]!.message, 'OIDC provider discovery failed');
      const tried = stub.requests(DISCOVERY_PATH);
      stub.discovery(undefined);
      const moments = unavailable('its discovery failed moments ago; retrying shortly');
      assert.deepEqual(await refusal(issuer, token), moments);
      await assert.rejects(
        issuer.serverMetadata(),
        (err: ConnectError) => err.code === Code.Unavailable && err.rawMessage === moments.message,
      );
      mock.timers.tick(9_999);
      assert.deepEqual(await refusal(issuer, token), moments);
      assert.equal(stub.requests(DISCOVERY_PATH), tried, 'not asked again within 10 s');
      mock.timers.tick(1);
      assert.equal((await issuer.verify(token)).subject, 'corp:alice', '10 s on, discovery is tried again and works');
      assert.equal(stub.requests(DISCOVERY_PATH), tried + 1);
    });

    test('the first discovery is never held back, whatever the clock reads (the epoch: a machine booted without a clock)', async () => {
      mock.timers.enable({ apis: ['Date'], now: 0 });
      const { corp: issuer } = corp();
      assert.equal((await issuer.serverMetadata()).issuer, stub.issuer);
    });

    test('a second failure starts its own 10 s', async () => {
      mock.timers.enable({ apis: ['Date'], now: Date.now() });
      const { corp: issuer } = corp();
      stub.discovery({ fail: { status: 500, body: '{}' } });
      await assert.rejects(issuer.serverMetadata());
      mock.timers.tick(10_000);
      const tried = stub.requests(DISCOVERY_PATH);
      await assert.rejects(
        issuer.serverMetadata(),
        (err: ConnectError) => err.code === Code.Unavailable && !/moments ago/.test(err.rawMessage),
      );
      assert.equal(stub.requests(DISCOVERY_PATH), tried + 1);
      stub.discovery(undefined);
      mock.timers.tick(9_999);
      await assert.rejects(issuer.serverMetadata(), /moments ago/);
      mock.timers.tick(1);
      assert.equal((await issuer.serverMetadata()).issuer, stub.issuer);
    });
  });
});
