/**
 * A session's provider tokens in its row (src/gateway/sign-in/session-tokens.ts, docs/sign-in.md "Renewal and
 * timeouts"): sealed to the row's key, so tokens copied to another row do not open; whole or refused; and renewed a
 * minute before the shorter of the lifetimes the provider stated ends, on the gateway's clock.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { openTokens, refreshAtOf, type SessionTokens, sealTokens } from '../../src/gateway/sign-in/session-tokens.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const keys = createKeyRing({ insecure: true, logger: createSilentLogger() });
const ROW = 'a'.repeat(64);
const OTHER_ROW = 'b'.repeat(64);
const TOKENS: SessionTokens = { idToken: 'id.token.x', accessToken: 'access-x', refreshToken: 'refresh-x' };
const NOW = 1_800_000_000_000;
/** Seconds after NOW at which tokens with these lifetimes are renewed. */
const renewedAfter = (lifetimes: Parameters<typeof refreshAtOf>[1]) => (refreshAtOf(NOW, lifetimes).getTime() - NOW) / 1000;

describe("a session's sealed tokens", () => {
  test('open as they were sealed, for the same row, showing none of them in the row', async () => {
    const sealed = await sealTokens(keys, ROW, TOKENS);
    assert.doesNotMatch(JSON.stringify(sealed), /id\.token|access-x|refresh-x/);
    assert.deepEqual(await openTokens(keys, ROW, sealed), TOKENS);
  });

  test('without a refresh token (no offline_access) they open without one', async () => {
    const sealed = await sealTokens(keys, ROW, { idToken: 'i', accessToken: 'a' });
    assert.deepEqual(await openTokens(keys, ROW, sealed), { idToken: 'i', accessToken: 'a', refreshToken: undefined });
  });

  test("copied into another session's row they do not open", async () => {
    const sealed = await sealTokens(keys, ROW, TOKENS);
    await assert.rejects(openTokens(keys, OTHER_ROW, sealed), /does not open \(altered, or sealed for another place\)/);
  });

  test('tokens sealed incomplete are refused as such; a refresh token of another type is dropped', async () => {
    const incomplete = (value: unknown) => sealTokens(keys, ROW, value as SessionTokens);
    const refused = { message: 'the sealed tokens are incomplete' };
    await assert.rejects(openTokens(keys, ROW, await incomplete({ accessToken: 'a' })), refused);
    await assert.rejects(openTokens(keys, ROW, await incomplete({ idToken: 'i' })), refused);
    await assert.rejects(openTokens(keys, ROW, await incomplete({ idToken: 1, accessToken: 'a' })), refused);
    await assert.rejects(openTokens(keys, ROW, await incomplete(null)), refused);
    assert.deepEqual(await openTokens(keys, ROW, await incomplete({ idToken: 'i', accessToken: 'a', refreshToken: 7 })), {
      idToken: 'i',
      accessToken: 'a',
      refreshToken: undefined,
    });
  });
});

describe('when tokens are renewed', () => {
  test("a minute before the access token's lifetime ends", () => {
    assert.equal(renewedAfter({ expiresIn: 3600 }), 3540);
  });

  test("a minute before the ID token's lifetime (exp - iat) ends, whatever the provider's clock says", () => {
    assert.equal(renewedAfter({ idTokenIat: 1_000, idTokenExp: 1_900 }), 840);
  });

  test('by the shorter of the two, whichever it is', () => {
    assert.equal(renewedAfter({ expiresIn: 3600, idTokenIat: 1_000, idTokenExp: 1_600 }), 540);
    assert.equal(renewedAfter({ expiresIn: 600, idTokenIat: 1_000, idTokenExp: 4_600 }), 540);
  });

  test('half-way through a lifetime of under two minutes', () => {
    assert.equal(renewedAfter({ expiresIn: 100 }), 50);
    assert.equal(renewedAfter({ expiresIn: 120 }), 60);
    assert.equal(renewedAfter({ expiresIn: 121 }), 61);
  });

  test('after four minutes when the provider states no usable lifetime (five minutes assumed)', () => {
    assert.equal(renewedAfter({}), 240);
    assert.equal(renewedAfter({ expiresIn: 0 }), 240);
    assert.equal(renewedAfter({ expiresIn: -30 }), 240);
    assert.equal(renewedAfter({ expiresIn: Number.POSITIVE_INFINITY }), 240);
    assert.equal(renewedAfter({ expiresIn: Number.NaN }), 240);
    assert.equal(renewedAfter({ idTokenExp: 1_900 }), 240);
    assert.equal(renewedAfter({ idTokenIat: 1_000 }), 240);
    assert.equal(renewedAfter({ idTokenIat: 1_900, idTokenExp: 1_000 }), 240);
  });

  test('an unusable lifetime does not hide the usable one', () => {
    assert.equal(renewedAfter({ expiresIn: 0, idTokenIat: 1_000, idTokenExp: 1_900 }), 840);
    assert.equal(renewedAfter({ expiresIn: 3600, idTokenIat: 1_900, idTokenExp: 1_000 }), 3540);
  });
});
