/**
 * One sign-in in flight, kept sealed in the login cookie (src/gateway/sign-in/login-state.ts, docs/sign-in.md
 * "Signing in"): it opens only for the provider it was started with, only within ten minutes on the gateway's clock,
 * only when whole, and the page it leads to afterwards is always a path of the gateway's own origin.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { openLoginState, sameOriginPath, sealLoginState } from '../../src/gateway/sign-in/login-state.js';
import { envelopeToCookie, sealJson } from '../../src/gateway/sign-in/sealed-json.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const logger = createSilentLogger();
const keys = createKeyRing({ insecure: true, logger });
const NOW = 1_800_000_000_000;
const TEN_MINUTES = 600_000;
const SIGN_IN = { state: 'state-1', nonce: 'nonce-1', verifier: 'verifier-1', next: '/#/audit' };

/** A login cookie holding `value` as the gateway seals it for provider `corp` (to forge what it never writes). */
const forged = async (value: unknown) => envelopeToCookie(await sealJson(keys, value, 'outpost-login:corp'));

describe('the login cookie', () => {
  test('opens for its provider with the sign-in it holds, expiring ten minutes after it started', async () => {
    const cookie = await sealLoginState(keys, 'corp', SIGN_IN, NOW);
    assert.deepEqual(await openLoginState(keys, 'corp', cookie, NOW + 1000), { ...SIGN_IN, expiresAt: NOW + TEN_MINUTES });
  });

  test('is base64url text, showing neither the verifier nor the state', async () => {
    const cookie = await sealLoginState(keys, 'corp', SIGN_IN, NOW);
    assert.match(cookie, /^[A-Za-z0-9_-]+$/);
    assert.doesNotMatch(Buffer.from(cookie, 'base64url').toString('utf8'), /verifier-1|state-1|nonce-1/);
  });

  test("does not open for another provider's callback", async () => {
    const cookie = await sealLoginState(keys, 'corp', SIGN_IN, NOW);
    assert.equal(await openLoginState(keys, 'other', cookie, NOW), undefined);
  });

  test("expires by the gateway's clock: open up to the last millisecond, not at ten minutes", async () => {
    const cookie = await sealLoginState(keys, 'corp', SIGN_IN, NOW);
    assert.equal((await openLoginState(keys, 'corp', cookie, NOW + TEN_MINUTES - 1))?.state, 'state-1');
    assert.equal(await openLoginState(keys, 'corp', cookie, NOW + TEN_MINUTES), undefined);
    assert.equal(await openLoginState(keys, 'corp', cookie, NOW + 3_600_000), undefined);
  });

  test("a missing, empty, altered or foreign replica's cookie opens nothing", async () => {
    const cookie = await sealLoginState(keys, 'corp', SIGN_IN, NOW);
    const otherReplica = await sealLoginState(createKeyRing({ insecure: true, logger }), 'corp', SIGN_IN, NOW);
    assert.equal(await openLoginState(keys, 'corp', undefined, NOW), undefined);
    assert.equal(await openLoginState(keys, 'corp', '', NOW), undefined);
    assert.equal(await openLoginState(keys, 'corp', 'garbage', NOW), undefined);
    assert.equal(await openLoginState(keys, 'corp', `${cookie.slice(0, -4)}AAAA`, NOW), undefined);
    assert.equal(await openLoginState(keys, 'corp', otherReplica, NOW), undefined);
  });

  test('a sealed value missing a field, or with a field of another type, is no sign-in', async () => {
    const whole = { ...SIGN_IN, expiresAt: NOW + TEN_MINUTES };
    assert.deepEqual(await openLoginState(keys, 'corp', await forged(whole), NOW), whole);
    for (const field of ['state', 'nonce', 'verifier', 'next', 'expiresAt'] as const) {
      assert.equal(await openLoginState(keys, 'corp', await forged({ ...whole, [field]: undefined }), NOW), undefined, `no ${field}`);
      const other = field === 'expiresAt' ? String(NOW + TEN_MINUTES) : 1;
      assert.equal(
        await openLoginState(keys, 'corp', await forged({ ...whole, [field]: other }), NOW),
        undefined,
        `${field} of another type`,
      );
    }
  });

  test('a sealed next that is not a path of this origin leads to /', async () => {
    const cookie = await sealLoginState(keys, 'corp', { ...SIGN_IN, next: '//evil.example' }, NOW);
    assert.equal((await openLoginState(keys, 'corp', cookie, NOW))?.next, '/');
  });
});

describe('where a sign-in leads afterwards', () => {
  test('a path of this origin is kept as it is, with its query and fragment', () => {
    for (const next of ['/', '/#/audit', '/accounts?x=1&y=%2F', '/a/b/c', '/!', '/~', '/[x]', '/@evil.example']) {
      assert.equal(sameOriginPath(next), next, next);
    }
  });

  test('anything that could lead to another host lands on /', () => {
    for (const next of [
      '//evil.example',
      '/\\evil.example',
      '\\\\evil.example',
      'https://evil.example',
      'evil.example',
      'javascript:alert(1)',
      '/\t/evil.example',
      '/\n/evil.example',
      '/ /evil.example',
      '/a\\b',
      '/a b',
      '/\x7f',
      '/é',
      '',
    ]) {
      assert.equal(sameOriginPath(next), '/', JSON.stringify(next));
    }
  });

  test('no next at all lands on /', () => {
    assert.equal(sameOriginPath(undefined), '/');
  });
});
