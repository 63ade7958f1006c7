/**
 * JWT bearer verification as a unit (src/gateway/auth/jwt-tokens.ts): the issuer, audience, algorithms, clock
 * tolerance, required `exp`, longest lifetime and subject claim a token must satisfy, the exact refusal each failure
 * gives (always UNAUTHENTICATED, never naming the key), and the verifier built from `auth.jwt` with a secret or a
 * public key file. A check that can be dropped unnoticed here lets a forged, foreign or everlasting token in, so each
 * one is pinned. Tokens are signed inside each test (a shard imports every file first); times are hours away from now,
 * never a sub-second margin.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { type JWTPayload, SignJWT } from 'jose';
import {
  createJwtVerifier,
  createJwtVerifierFor,
  type JwtExpectations,
  looksLikeJwt,
  unverifiedIssuer,
} from '../../src/gateway/auth/jwt-tokens.js';
import type { Logger } from '../../src/shared/logger.js';

const SECRET = 'a-secret-of-at-least-thirty-two-bytes!!';
const ISS = 'https://issuer.example';
const AUD = 'outpost';
const HOUR = 3600;

const now = () => Math.floor(Date.now() / 1000);
const key = (secret = SECRET) => new TextEncoder().encode(secret);

async function sign(claims: JWTPayload, options: { alg?: string; secret?: string } = {}): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg: options.alg ?? 'HS256' }).sign(key(options.secret));
}

/** Claims of a token the default expectations accept: issued now, living an hour. */
function good(extra: JWTPayload = {}): JWTPayload {
  const iat = now();
  return { iss: ISS, aud: AUD, sub: 'alice', iat, exp: iat + HOUR, ...extra };
}

function expectations(over: Partial<JwtExpectations> = {}): JwtExpectations {
  return {
    issuer: ISS,
    audience: AUD,
    algorithms: ['HS256'],
    subjectClaim: 'sub',
    clockToleranceSeconds: 0,
    maxLifetimeSeconds: 2 * HOUR,
    key: async () => key(),
    what: 'token',
    ...over,
  };
}

async function refusal(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(
    () => assert.fail('expected a refusal'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof ConnectError, String(err));
  assert.equal(err.code, Code.Unauthenticated);
  return err.rawMessage;
}

/** The refusal explaining a verification error shaped like one of jose's (thrown while resolving the key). */
function explained(thrown: object, what = 'token'): Promise<string> {
  const verifier = createJwtVerifierFor(
    expectations({
      what,
      key: async () => {
        throw thrown;
      },
    }),
  );
  return refusal(verifier.verify('x.y.z'));
}

describe('looksLikeJwt', () => {
  test('three base64url parts of any length are a JWT shape, the signature may be empty', () => {
    assert.equal(looksLikeJwt('a.b.c'), true);
    assert.equal(looksLikeJwt('abc.def.ghi'), true);
    assert.equal(looksLikeJwt('AZaz09_-.AZaz09_-.AZaz09_-'), true);
    assert.equal(looksLikeJwt('ab.cd.'), true);
  });

  test('other shapes are not', () => {
    for (const token of [
      '',
      'a.b',
      '.b.c',
      'a..c',
      'a.b.c.d',
      ' a.b.c',
      'a.b.c ',
      'a+b.c.d',
      'a.b/c.d',
      'a.b.c=',
      'a=.b.c',
      'a.b=.c',
      'opaque-static-token',
    ]) {
      assert.equal(looksLikeJwt(token), false, token);
    }
  });
});

describe('unverifiedIssuer', () => {
  test('reads a string iss without verifying anything', async () => {
    assert.equal(unverifiedIssuer(await sign({ iss: ISS }, { secret: 'some-other-secret-entirely-unknown' })), ISS);
  });

  test('is undefined for a missing or non-string iss and for garbage', async () => {
    assert.equal(unverifiedIssuer(await sign({ sub: 'alice' })), undefined);
    assert.equal(unverifiedIssuer(await sign({ iss: 42 } as unknown as JWTPayload)), undefined);
    assert.equal(unverifiedIssuer('a.b.c'), undefined);
    assert.equal(unverifiedIssuer('not a token'), undefined);
  });
});

describe('createJwtVerifierFor', () => {
  test('accepts a good token with its subject, payload and expiry in milliseconds', async () => {
    const claims = good();
    const verified = await createJwtVerifierFor(expectations()).verify(await sign(claims));
    assert.equal(verified.subject, 'alice');
    assert.equal(verified.expiresAt, (claims.exp as number) * 1000);
    assert.deepEqual(verified.payload, claims);
  });

  test('refuses a token signed with another key', async () => {
    const token = await sign(good(), { secret: 'another-secret-of-thirty-two-bytes!!' });
    assert.equal(await refusal(createJwtVerifierFor(expectations()).verify(token)), 'token signature invalid');
  });

  test('refuses another issuer and another audience', async () => {
    const verifier = createJwtVerifierFor(expectations());
    assert.equal(
      await refusal(verifier.verify(await sign(good({ iss: 'https://elsewhere.example' })))),
      'token issuer (iss) does not match the expected issuer',
    );
    assert.equal(
      await refusal(verifier.verify(await sign(good({ aud: 'someone-else' })))),
      'token audience (aud) does not match the expected audience',
    );
  });

  test('refuses an algorithm outside the list, and accepts any the key fits when there is no list', async () => {
    const token = await sign(good(), { alg: 'HS384' });
    assert.equal(await refusal(createJwtVerifierFor(expectations()).verify(token)), 'token algorithm not allowed');
    const verified = await createJwtVerifierFor(expectations({ algorithms: undefined })).verify(token);
    assert.equal(verified.subject, 'alice');
  });

  test('refuses an expired token, unless the clock tolerance covers it', async () => {
    const exp = now() - 100;
    const token = await sign(good({ iat: exp - HOUR, exp }));
    assert.equal(await refusal(createJwtVerifierFor(expectations()).verify(token)), 'token expired');
    const verified = await createJwtVerifierFor(expectations({ clockToleranceSeconds: HOUR })).verify(token);
    assert.equal(verified.expiresAt, exp * 1000);
  });

  test('refuses a token not yet valid', async () => {
    const token = await sign(good({ nbf: now() + HOUR }));
    assert.equal(await refusal(createJwtVerifierFor(expectations()).verify(token)), 'token not yet valid (nbf)');
  });

  test('refuses a token without exp, or with an exp that is not a number', async () => {
    const verifier = createJwtVerifierFor(expectations());
    const { exp: _, ...noExp } = good();
    assert.equal(await refusal(verifier.verify(await sign(noExp))), 'token has no exp claim');
    assert.equal(
      await refusal(verifier.verify(await sign(good({ exp: 'tomorrow' } as unknown as JWTPayload)))),
      'token exp claim invalid: invalid',
    );
  });

  test('refuses another invalid claim naming it', async () => {
    const token = await sign(good({ iat: 'yesterday' } as unknown as JWTPayload));
    assert.equal(await refusal(createJwtVerifierFor(expectations()).verify(token)), 'token claim iat invalid: invalid');
  });

  test('refuses a malformed token', async () => {
    const message = await refusal(createJwtVerifierFor(expectations()).verify('a.b.c'));
    assert.match(message, /^token malformed: \S/);
  });

  test('accepts a lifetime of exactly the maximum and refuses one second more', async () => {
    const iat = now();
    const verifier = createJwtVerifierFor(expectations());
    const verified = await verifier.verify(await sign(good({ iat, exp: iat + 2 * HOUR })));
    assert.equal(verified.subject, 'alice');
    assert.equal(
      await refusal(verifier.verify(await sign(good({ iat, exp: iat + 2 * HOUR + 1 })))),
      'token lifetime (exp - iat) of 7201 s exceeds the longest accepted 7200 s (auth.jwt.maxLifetimeSeconds)',
    );
  });

  test('measures the lifetime from iat when there is one, even long ago or ahead', async () => {
    const verifier = createJwtVerifierFor(expectations());
    const t = now();
    // issued long ago, expiring within the hour: exp - iat is far above the maximum although exp - now is not
    assert.equal(
      await refusal(verifier.verify(await sign(good({ iat: t - 10 * HOUR, exp: t + HOUR })))),
      'token lifetime (exp - iat) of 39600 s exceeds the longest accepted 7200 s (auth.jwt.maxLifetimeSeconds)',
    );
    // issued ahead for one hour: exp - iat is within the maximum although exp - now is not
    const verified = await verifier.verify(await sign(good({ iat: t + 10 * HOUR, exp: t + 11 * HOUR })));
    assert.equal(verified.subject, 'alice');
  });

  test('measures the lifetime from now when there is no iat', async () => {
    const verifier = createJwtVerifierFor(expectations());
    const { iat: _, ...claims } = good();
    const exp = now() + 10 * HOUR;
    const message = await refusal(verifier.verify(await sign({ ...claims, exp })));
    const m = /^token lifetime \(exp - iat\) of (\d+) s exceeds the longest accepted 7200 s \(auth\.jwt\.maxLifetimeSeconds\)$/.exec(
      message,
    );
    assert.ok(m, message);
    const lifetime = Number(m[1]);
    assert.ok(lifetime > 9 * HOUR && lifetime <= 10 * HOUR, message);
    const verified = await verifier.verify(await sign({ ...claims, exp: now() + HOUR }));
    assert.equal(verified.subject, 'alice');
  });

  test('requires the subject claim to be a non-empty string', async () => {
    const verifier = createJwtVerifierFor(expectations());
    const { sub: _, ...noSub } = good();
    for (const claims of [noSub, good({ sub: '' }), good({ sub: 7 } as unknown as JWTPayload)]) {
      assert.equal(await refusal(verifier.verify(await sign(claims))), 'token has no string "sub" claim to name its subject');
    }
  });

  test('reads the subject from the configured claim', async () => {
    const verifier = createJwtVerifierFor(expectations({ subjectClaim: 'email', what: 'replica token' }));
    const verified = await verifier.verify(await sign(good({ email: 'alice@example.com' })));
    assert.equal(verified.subject, 'alice@example.com');
    assert.equal(await refusal(verifier.verify(await sign(good()))), 'replica token has no string "email" claim to name its subject');
  });

  test('prefixes every refusal with what is verified', async () => {
    const verifier = createJwtVerifierFor(expectations({ what: 'replica token' }));
    assert.equal(
      await refusal(verifier.verify(await sign(good({ iss: 'https://elsewhere.example' })))),
      'replica token issuer (iss) does not match the expected issuer',
    );
    const iat = now();
    assert.equal(
      await refusal(verifier.verify(await sign(good({ iat, exp: iat + 3 * HOUR })))),
      'replica token lifetime (exp - iat) of 10800 s exceeds the longest accepted 7200 s (auth.jwt.maxLifetimeSeconds)',
    );
  });
});

describe('the refusal message of each verification error', () => {
  const claim = 'ERR_JWT_CLAIM_VALIDATION_FAILED';

  test('expiry, signature and algorithm', async () => {
    assert.equal(await explained({ code: 'ERR_JWT_EXPIRED', claim: 'exp' }), 'token expired');
    assert.equal(await explained({ code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' }), 'token signature invalid');
    assert.equal(await explained({ code: 'ERR_JOSE_ALG_NOT_ALLOWED' }), 'token algorithm not allowed');
  });

  test('exp missing or invalid, with the reason, else the message, else nothing', async () => {
    assert.equal(await explained({ code: claim, claim: 'exp', reason: 'missing' }), 'token has no exp claim');
    assert.equal(await explained({ code: claim, claim: 'exp', reason: 'invalid', message: 'm' }), 'token exp claim invalid: invalid');
    assert.equal(await explained({ code: claim, claim: 'exp', message: 'must be a number' }), 'token exp claim invalid: must be a number');
    assert.equal(await explained({ code: claim, claim: 'exp' }), 'token exp claim invalid:');
  });

  test('nbf, aud and iss, whatever the reason', async () => {
    assert.equal(await explained({ code: claim, claim: 'nbf', reason: 'missing' }), 'token not yet valid (nbf)');
    assert.equal(
      await explained({ code: claim, claim: 'aud', reason: 'missing' }),
      'token audience (aud) does not match the expected audience',
    );
    assert.equal(
      await explained({ code: claim, claim: 'iss', reason: 'missing' }),
      'token issuer (iss) does not match the expected issuer',
    );
  });

  test('another claim, named or not, with the reason, else the message, else nothing', async () => {
    assert.equal(
      await explained({ code: claim, claim: 'typ', reason: 'check_failed', message: 'm' }),
      'token claim typ invalid: check_failed',
    );
    assert.equal(await explained({ code: claim, claim: 'iat', message: 'must be a number' }), 'token claim iat invalid: must be a number');
    assert.equal(await explained({ code: claim }), 'token claim ? invalid:');
  });

  test('malformed tokens of each kind, with the message or nothing', async () => {
    for (const code of ['ERR_JWS_INVALID', 'ERR_JWT_INVALID', 'ERR_JOSE_NOT_SUPPORTED']) {
      assert.equal(await explained({ code, message: 'Invalid Compact JWS' }), 'token malformed: Invalid Compact JWS', code);
      assert.equal(await explained({ code }), 'token malformed:', code);
    }
  });

  test('anything else is just invalid, with the prefix', async () => {
    assert.equal(await explained(new Error('key file gone')), 'token invalid');
    assert.equal(await explained({ code: 'ERR_SOMETHING_NEW', message: 'm' }, 'replica token'), 'replica token invalid');
    assert.equal(await explained({ code: 'ERR_JWT_EXPIRED' }, 'replica token'), 'replica token expired');
  });
});

describe('createJwtVerifier from auth.jwt', () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-jwt-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const file = (contents: string) => {
    const path = join(dir, `key-${n++}`);
    writeFileSync(path, contents);
    return path;
  };

  function recordingLogger() {
    const errors: unknown[][] = [];
    const logger = { error: (...args: unknown[]) => errors.push(args) } as unknown as Logger;
    return { logger, errors };
  }

  const base = {
    issuer: ISS,
    audience: AUD,
    subjectClaim: 'sub',
    groupsClaim: 'groups',
    clockToleranceSeconds: 0,
    maxLifetimeSeconds: 2 * HOUR,
  };

  test('a secret file: trimmed, every HMAC algorithm by default, refusals prefixed "token"', async () => {
    const verifier = createJwtVerifier({ ...base, secretFile: file(`  ${SECRET}\n`) }, recordingLogger().logger);
    for (const alg of ['HS256', 'HS384', 'HS512']) {
      assert.equal((await verifier.verify(await sign(good(), { alg }))).subject, 'alice', alg);
    }
    assert.equal(
      await refusal(verifier.verify(await sign(good({ aud: 'someone-else' })))),
      'token audience (aud) does not match the expected audience',
    );
  });

  test('a secret file refuses a public-key algorithm as not allowed', async () => {
    const { privateKey } = generateKeyPairSync('ed25519');
    const token = await new SignJWT(good()).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);
    const verifier = createJwtVerifier({ ...base, secretFile: file(SECRET) }, recordingLogger().logger);
    assert.equal(await refusal(verifier.verify(token)), 'token algorithm not allowed');
  });

  test('a secret file with configured algorithms keeps exactly those', async () => {
    const verifier = createJwtVerifier({ ...base, algorithms: ['HS256'], secretFile: file(SECRET) }, recordingLogger().logger);
    assert.equal((await verifier.verify(await sign(good()))).subject, 'alice');
    assert.equal(await refusal(verifier.verify(await sign(good(), { alg: 'HS512' }))), 'token algorithm not allowed');
  });

  test('a secret file that turns unreadable is logged and its last key kept', async () => {
    const path = file(SECRET);
    const { logger, errors } = recordingLogger();
    const verifier = createJwtVerifier({ ...base, secretFile: path }, logger);
    assert.equal((await verifier.verify(await sign(good()))).subject, 'alice');
    rmSync(path);
    assert.equal((await verifier.verify(await sign(good()))).subject, 'alice');
    assert.equal(errors.length, 1);
    const [fields, message] = errors[0] as [{ err: string }, string];
    assert.equal(message, 'JWT key file unreadable; keeping the last key');
    assert.match(fields.err, /^auth\.jwt\.secretFile: cannot read /);
  });

  test('a rotated secret file takes effect', async () => {
    const path = file(SECRET);
    const verifier = createJwtVerifier({ ...base, secretFile: path }, recordingLogger().logger);
    assert.equal((await verifier.verify(await sign(good()))).subject, 'alice');
    const rotated = 'a-rotated-secret-of-thirty-two-bytes, longer';
    writeFileSync(path, rotated);
    assert.equal((await verifier.verify(await sign(good(), { secret: rotated }))).subject, 'alice');
    assert.equal(await refusal(verifier.verify(await sign(good()))), 'token signature invalid');
  });

  test('a missing secret or public key file is named at start', () => {
    const missing = join(dir, 'missing');
    assert.throws(
      () => createJwtVerifier({ ...base, secretFile: missing }, recordingLogger().logger),
      (err: Error) => err.message.startsWith(`auth.jwt.secretFile: cannot read ${missing}`),
    );
    assert.throws(
      () => createJwtVerifier({ ...base, publicKeyFile: missing }, recordingLogger().logger),
      (err: Error) => err.message.startsWith(`auth.jwt.publicKeyFile: cannot read ${missing}`),
    );
  });

  test('a public key file verifies tokens its private key signed, any algorithm the key fits by default', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const verifier = createJwtVerifier({ ...base, publicKeyFile: file(pem) }, recordingLogger().logger);
    const token = await new SignJWT(good()).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);
    const verified = await verifier.verify(token);
    assert.equal(verified.subject, 'alice');
    assert.equal((await verifier.verify(token)).subject, 'alice');
    const other = generateKeyPairSync('ed25519').privateKey;
    const forged = await new SignJWT(good()).setProtectedHeader({ alg: 'EdDSA' }).sign(other);
    assert.equal(await refusal(verifier.verify(forged)), 'token signature invalid');
  });

  test('a public key file that is not a PEM public key is refused at start, naming it', () => {
    const path = file('not a key');
    assert.throws(
      () => createJwtVerifier({ ...base, publicKeyFile: path }, recordingLogger().logger),
      (err: Error) => err.message.startsWith(`auth.jwt.publicKeyFile: ${path} is not a PEM public key: `),
    );
  });

  test('a public key file that turns unreadable is logged naming it', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const path = file(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    const { logger, errors } = recordingLogger();
    const verifier = createJwtVerifier({ ...base, publicKeyFile: path }, logger);
    rmSync(path);
    const token = await new SignJWT(good()).setProtectedHeader({ alg: 'EdDSA' }).sign(privateKey);
    assert.equal((await verifier.verify(token)).subject, 'alice');
    assert.equal(errors.length, 1);
    assert.match((errors[0] as [{ err: string }])[0].err, /^auth\.jwt\.publicKeyFile: cannot read /);
  });
});
