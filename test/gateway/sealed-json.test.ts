/**
 * What sign-in keeps sealed with the key ring (src/gateway/sign-in/sealed-json.ts): a value opens only with a ring
 * holding its key and only in the context it was sealed for; an altered, moved or foreign value is refused with a
 * message saying why (never quoting the value); and the cookie form of an envelope reads back, anything else not.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createKeyRing } from '../../src/gateway/secrets/key-ring.js';
import { envelopeFromCookie, envelopeToCookie, openJson, sealJson } from '../../src/gateway/sign-in/sealed-json.js';
import { createSilentLogger } from '../../src/shared/logger.js';

const logger = createSilentLogger();
const keys = createKeyRing({ insecure: true, logger });
/** Another replica with its own key, none of this one's. */
const otherKeys = createKeyRing({ insecure: true, logger });
const VALUE = { state: 'st-1', nested: { list: [1, 'two', null], flag: true }, text: 'é €' };
const CONTEXT = 'outpost-login:corp';

const refusedWith = (message: string) => (err: unknown) => err instanceof Error && err.message === message;

describe('sealing and opening', () => {
  test('a value opens as it was sealed, with the key ring that sealed it, in the same context', async () => {
    const envelope = await sealJson(keys, VALUE, CONTEXT);
    assert.deepEqual(await openJson(keys, envelope, CONTEXT), VALUE);
  });

  test('the envelope names the active key and does not show the value', async () => {
    const envelope = await sealJson(keys, { password: 'hunter2-sealed' }, CONTEXT);
    assert.equal(envelope.kid, (await keys.active()).id);
    assert.doesNotMatch(JSON.stringify(envelope), /hunter2/);
  });

  test('a value moved to another context does not open there', async () => {
    const envelope = await sealJson(keys, VALUE, CONTEXT);
    await assert.rejects(
      openJson(keys, envelope, 'outpost-login:other'),
      refusedWith('does not open (altered, or sealed for another place)'),
    );
  });

  test('an altered value does not open', async () => {
    const envelope = await sealJson(keys, VALUE, CONTEXT);
    const data = Buffer.from(envelope.data, 'base64');
    data[0] = data[0]! ^ 1;
    await assert.rejects(
      openJson(keys, { ...envelope, data: data.toString('base64') }, CONTEXT),
      refusedWith('does not open (altered, or sealed for another place)'),
    );
  });

  test('a value sealed with a key this ring does not hold is refused naming the key and the setting', async () => {
    const envelope = await sealJson(otherKeys, VALUE, CONTEXT);
    await assert.rejects(
      openJson(keys, envelope, CONTEXT),
      refusedWith(`sealed with key ${JSON.stringify(envelope.kid)}, which secrets.keyFile no longer holds`),
    );
  });

  test('what is not an envelope is refused as such', async () => {
    for (const value of [undefined, null, 'text', {}, { v: 2, kid: 'k', iv: '', tag: '', data: '' }, VALUE]) {
      await assert.rejects(openJson(keys, value, CONTEXT), refusedWith('not a sealed value'), JSON.stringify(value));
    }
  });
});

describe('an envelope as cookie text', () => {
  test('is base64url only (safe in a cookie) and reads back to the same envelope, which still opens', async () => {
    const envelope = await sealJson(keys, VALUE, CONTEXT);
    const text = envelopeToCookie(envelope);
    assert.match(text, /^[A-Za-z0-9_-]+$/);
    assert.deepEqual(envelopeFromCookie(text), envelope);
    assert.deepEqual(await openJson(keys, envelopeFromCookie(text), CONTEXT), VALUE);
  });

  test('cookie text that is not an envelope gives none', () => {
    const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
    for (const text of ['', 'not base64 at all!', b64('{"v":1'), b64('null'), b64('{"v":1,"kid":"k"}'), b64('"text"')]) {
      assert.equal(envelopeFromCookie(text), undefined, text);
    }
  });
});
