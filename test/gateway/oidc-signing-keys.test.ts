/**
 * A provider's signing keys as the gateway keeps them (src/gateway/auth/oidc-signing-keys.ts), against a JWKS served on
 * loopback and a clock the test drives: the keys are fetched on first use and kept exactly `cacheMs`, a key the
 * provider withdrew is refused once they are fetched again, a new key id fetches them at once unless the last fetch is
 * younger than `cooldownMs`, tokens arriving together share one fetch, and tokens the keys cannot serve (made-up key
 * ids, algorithms a JWKS has no key for) never make the gateway hammer the provider. A JWKS that cannot be read says why.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jwtVerify } from 'jose';
import { createSigningKeys } from '../../src/gateway/auth/oidc-signing-keys.js';
import { type StubIssuer, startStubIssuer } from '../../testkit/oidc-stub-issuer.js';

const CACHE_MS = 600_000;
const COOLDOWN_MS = 30_000;

let stub: StubIssuer;
before(async () => {
  stub = await startStubIssuer();
  for (const kid of ['k1', 'k2', 'k3']) await stub.addKey(kid);
});
after(() => stub.close());

/** Claims a verifier accepts for the next hour (of the real clock, which jose reads). */
const claims = () => ({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 });

/** A resolver on the stub's JWKS with a driven clock; `check` verifies a token with it: 'ok' or jose's error name. */
function keysWithClock(options: { cacheMs?: number; cooldownMs?: number } = {}) {
  const clock = { now: 5_000_000 };
  const resolve = createSigningKeys({
    jwksUri: stub.jwksUri,
    cacheMs: options.cacheMs ?? CACHE_MS,
    cooldownMs: options.cooldownMs ?? COOLDOWN_MS,
    now: () => clock.now,
  });
  const check = (token: string) =>
    jwtVerify(token, resolve).then(
      () => 'ok',
      (err: Error) => (err as { code?: string }).code ?? err.message,
    );
  return { clock, check };
}

const fetches = () => stub.requests('/jwks');

/** The token with its header's fields replaced (its signature no longer matters for what is tested). */
function withHeader(token: string, header: Record<string, unknown>): string {
  const [h, ...rest] = token.split('.');
  const decoded = JSON.parse(Buffer.from(h!, 'base64url').toString('utf8')) as Record<string, unknown>;
  return [Buffer.from(JSON.stringify({ ...decoded, ...header })).toString('base64url'), ...rest].join('.');
}

describe('signing keys of an OIDC provider', { concurrency: false }, () => {
  test('the keys are fetched on first use, as JSON, and kept exactly cacheMs; then fetched again', async () => {
    stub.publish('k1');
    const { clock, check } = keysWithClock();
    const token = await stub.sign(claims(), 'k1');
    const start = fetches();
    assert.equal(await check(token), 'ok');
    assert.equal(fetches(), start + 1, 'the first token fetches the keys');
    assert.equal(stub.jwksAccept, 'application/json', 'the JWKS is asked for as JSON');
    clock.now += CACHE_MS - 1;
    assert.equal(await check(token), 'ok');
    assert.equal(fetches(), start + 1, 'within cacheMs the kept keys serve');
    clock.now += 1;
    assert.equal(await check(token), 'ok');
    assert.equal(fetches(), start + 2, 'once cacheMs has passed, the keys are fetched again');
    assert.equal(await check(token), 'ok');
    assert.equal(fetches(), start + 2, 'and kept again from then');
  });

  test('a key the provider stopped publishing is accepted while kept, refused once the keys are fetched again', async () => {
    stub.publish('k1', 'k2');
    const { clock, check } = keysWithClock();
    const old = await stub.sign(claims(), 'k1');
    assert.equal(await check(old), 'ok');
    stub.publish('k2');
    clock.now += CACHE_MS - 1;
    assert.equal(await check(old), 'ok', 'the kept keys still hold it');
    clock.now += 1;
    assert.equal(await check(old), 'ERR_JWKS_NO_MATCHING_KEY', 'rotated out: refused');
    assert.equal(await check(await stub.sign(claims(), 'k2')), 'ok');
  });

  test('a new key id fetches the keys again, but not within cooldownMs of the last fetch; made-up ids do not hammer', async () => {
    stub.publish('k1');
    const { clock, check } = keysWithClock();
    assert.equal(await check(await stub.sign(claims(), 'k1')), 'ok');
    const start = fetches();
    stub.publish('k1', 'k2');
    const rotated = await stub.sign(claims(), 'k2');
    clock.now += COOLDOWN_MS - 1;
    assert.equal(await check(rotated), 'ERR_JWKS_NO_MATCHING_KEY', 'within the cooldown: refused for now');
    assert.equal(fetches(), start, 'and nothing fetched');
    clock.now += 1;
    assert.equal(await check(rotated), 'ok', 'the cooldown over, the new key id is fetched and accepted');
    assert.equal(fetches(), start + 1);
    const forged = await stub.sign(claims(), 'k1', { kid: 'never-published' });
    for (let i = 0; i < 5; i++) assert.equal(await check(forged), 'ERR_JWKS_NO_MATCHING_KEY');
    clock.now += COOLDOWN_MS - 1;
    assert.equal(await check(forged), 'ERR_JWKS_NO_MATCHING_KEY');
    assert.equal(fetches(), start + 1, 'made-up key ids within the cooldown fetch nothing');
    clock.now += 1;
    assert.equal(await check(forged), 'ERR_JWKS_NO_MATCHING_KEY', 'a key id never published stays refused');
    assert.equal(fetches(), start + 2, 'at most one fetch per cooldown');
  });

  test('tokens with a new key id arriving together share one fetch, and all are accepted', async () => {
    stub.publish('k1');
    const { clock, check } = keysWithClock();
    assert.equal(await check(await stub.sign(claims(), 'k1')), 'ok');
    const start = fetches();
    stub.publish('k1', 'k3');
    const rotated = await stub.sign(claims(), 'k3');
    clock.now += COOLDOWN_MS;
    assert.deepEqual(await Promise.all([check(rotated), check(rotated), check(rotated), check(rotated)]), ['ok', 'ok', 'ok', 'ok']);
    assert.equal(fetches(), start + 1);
  });

  test('a token whose algorithm no JWKS key can serve (HS256, none) is refused as such, and fetches nothing', async () => {
    stub.publish('k1');
    const { clock, check } = keysWithClock();
    const token = await stub.sign(claims(), 'k1');
    assert.equal(await check(token), 'ok');
    const start = fetches();
    clock.now += COOLDOWN_MS;
    assert.equal(await check(withHeader(token, { alg: 'HS256' })), 'ERR_JOSE_NOT_SUPPORTED');
    assert.equal(await check(withHeader(token, { alg: 'none' })), 'ERR_JOSE_NOT_SUPPORTED');
    assert.equal(fetches(), start, 'however long since the last fetch');
  });

  test('a JWKS that cannot be read says why, and the next token tries again', async () => {
    stub.publish('k1');
    const { check } = keysWithClock();
    const token = await stub.sign(claims(), 'k1');
    stub.jwksAnswer({ status: 500, body: '{"keys":[]}' });
    assert.equal(await check(token), `the JWKS at ${stub.jwksUri} answered HTTP 500`);
    stub.jwksAnswer({ status: 200, body: 'null' });
    assert.equal(await check(token), `the JWKS at ${stub.jwksUri} has no "keys" array`);
    stub.jwksAnswer({ status: 200, body: '{"keys":{}}' });
    assert.equal(await check(token), `the JWKS at ${stub.jwksUri} has no "keys" array`);
    stub.jwksAnswer(undefined);
    assert.equal(await check(token), 'ok', 'a provider back up serves the keys at the next token');
  });

  test('without a clock given, the real one keeps the keys', async () => {
    stub.publish('k1');
    const resolve = createSigningKeys({ jwksUri: stub.jwksUri, cacheMs: CACHE_MS, cooldownMs: COOLDOWN_MS });
    const token = await stub.sign(claims(), 'k1');
    const start = fetches();
    await jwtVerify(token, resolve);
    await jwtVerify(token, resolve);
    assert.equal(fetches(), start + 1);
  });
});
