/**
 * The HS256 tokens replicas present to each other (src/gateway/auth/replica-token.ts): the claims a signer puts in
 * them, its cache and renewal, the secret file's rules (32 bytes after trimming, re-read when rotated), and what the
 * verifier refuses — another secret, issuer, audience or algorithm, an expired token, a lifetime too long. A replica
 * token admits internal routes and vouches for forwarded callers, so each of these is pinned here. Every token is
 * minted inside its test; time is the mocked clock of node:test where it matters, never the wall clock.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, SignJWT } from 'jose';
import { createReplicaTokenSigner, createReplicaTokenVerifier, REPLICA_ISSUER } from '../../src/gateway/auth/replica-token.js';
import type { Logger } from '../../src/shared/logger.js';

const dir = mkdtempSync(join(tmpdir(), 'replica-token-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SECRET = 'a-replica-secret-of-at-least-32-bytes';
let files = 0;

/** A new secret file holding `contents`. */
function secretFile(contents: string): string {
  const path = join(dir, `secret-${++files}`);
  writeFileSync(path, contents);
  return path;
}

/** A logger that keeps what `error` hears. */
function recordingLogger(): { logger: Logger; errors: { err: string; msg: string }[] } {
  const errors: { err: string; msg: string }[] = [];
  const error = (fields: { err: string }, msg: string) => errors.push({ err: fields.err, msg });
  return { logger: { error } as unknown as Logger, errors };
}

/** A token signed with jose directly, with the given claims (seconds since the epoch). */
function sign(
  claims: { iss?: string; aud?: string; sub?: string; iat: number; exp: number },
  secret = SECRET,
  alg = 'HS256',
): Promise<string> {
  const jwt = new SignJWT({}).setProtectedHeader({ alg }).setIssuedAt(claims.iat).setExpirationTime(claims.exp);
  if (claims.iss !== undefined) jwt.setIssuer(claims.iss);
  if (claims.aud !== undefined) jwt.setAudience(claims.aud);
  if (claims.sub !== undefined) jwt.setSubject(claims.sub);
  return jwt.sign(new TextEncoder().encode(secret));
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('the signer', () => {
  test('signs HS256 with issuer and audience outpost-replica, the replica as subject, for 60 seconds', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_900 });
    return (async () => {
      const token = await createReplicaTokenSigner(secretFile(SECRET), 'gw-a').token();
      assert.equal(REPLICA_ISSUER, 'outpost-replica');
      assert.deepEqual(decodeProtectedHeader(token), { alg: 'HS256', typ: 'JWT' });
      assert.deepEqual(decodeJwt(token), {
        iss: 'outpost-replica',
        aud: 'outpost-replica',
        sub: 'gw-a',
        iat: 1_700_000_000,
        exp: 1_700_000_060,
      });
    })();
  });

  test('reuses its token for half its life, then signs a new one', async (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: 1_700_000_000_000 });
    const path = secretFile(SECRET);
    const signer = createReplicaTokenSigner(path, 'gw-a');
    const first = await signer.token();
    // a rotated secret shows which token is the cached one
    writeFileSync(path, `${SECRET}-rotated`);
    t.mock.timers.tick(29_999);
    assert.equal(await signer.token(), first);
    t.mock.timers.tick(1);
    const second = await signer.token();
    assert.notEqual(second, first);
    assert.equal(decodeJwt(second).iat, 1_700_000_030);
    const verifier = createReplicaTokenVerifier(path, recordingLogger().logger);
    assert.equal((await verifier.verify(second)).subject, 'gw-a');
    await assert.rejects(verifier.verify(first), { message: '[unauthenticated] replica token signature invalid' });
  });

  test('uses the secret trimmed of surrounding whitespace', async () => {
    const token = await createReplicaTokenSigner(secretFile(`  ${SECRET}\n`), 'gw-a').token();
    const verifier = createReplicaTokenVerifier(secretFile(SECRET), recordingLogger().logger);
    assert.equal((await verifier.verify(token)).subject, 'gw-a');
  });

  test('keeps signing with the last secret when the file disappears, and logs it once', async () => {
    const { logger, errors } = recordingLogger();
    const path = secretFile(SECRET);
    const signer = createReplicaTokenSigner(path, 'gw-a', logger);
    rmSync(path);
    const token = await signer.token();
    const verifier = createReplicaTokenVerifier(secretFile(SECRET), recordingLogger().logger);
    assert.equal((await verifier.verify(token)).subject, 'gw-a');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.msg, 'replica secret unreadable');
    assert.match(errors[0]?.err ?? '', /^auth\.replicaSecretFile: cannot read .*ENOENT/);
  });

  test('needs no logger when the file disappears', async () => {
    const path = secretFile(SECRET);
    const signer = createReplicaTokenSigner(path, 'gw-a');
    rmSync(path);
    assert.equal(decodeJwt(await signer.token()).sub, 'gw-a');
  });

  test('refuses a secret file it cannot read, or one shorter than 32 bytes after trimming', () => {
    const missing = join(dir, 'missing');
    assert.throws(() => createReplicaTokenSigner(missing, 'gw-a'), {
      message: new RegExp(`^auth\\.replicaSecretFile: cannot read ${missing}: `),
    });
    const short = secretFile(` ${'x'.repeat(31)} \n`);
    assert.throws(() => createReplicaTokenSigner(short, 'gw-a'), { message: `auth.replicaSecretFile: ${short} holds fewer than 32 bytes` });
    assert.doesNotThrow(() => createReplicaTokenSigner(secretFile('x'.repeat(32)), 'gw-a'));
  });

  test('counts bytes, not characters', () => {
    assert.doesNotThrow(() => createReplicaTokenSigner(secretFile('é'.repeat(16)), 'gw-a'));
    assert.throws(() => createReplicaTokenSigner(secretFile(`${'é'.repeat(15)}x`), 'gw-a'), { message: /holds fewer than 32 bytes$/ });
  });

  test('fails to sign once the file is rotated to a short secret', async () => {
    const path = secretFile(SECRET);
    const signer = createReplicaTokenSigner(path, 'gw-a');
    writeFileSync(path, 'short');
    await assert.rejects(signer.token(), { message: `auth.replicaSecretFile: ${path} holds fewer than 32 bytes` });
  });
});

describe('the verifier', () => {
  test('accepts a signer’s token and names its replica', async () => {
    const path = secretFile(SECRET);
    const token = await createReplicaTokenSigner(path, 'gw-b').token();
    const verified = await createReplicaTokenVerifier(path, recordingLogger().logger).verify(token);
    assert.equal(verified.subject, 'gw-b');
    assert.equal(verified.expiresAt, (decodeJwt(token).exp as number) * 1000);
  });

  test('refuses another secret, issuer, audience or algorithm', async () => {
    const verifier = createReplicaTokenVerifier(secretFile(SECRET), recordingLogger().logger);
    const iat = nowSeconds();
    const claims = { iss: REPLICA_ISSUER, aud: REPLICA_ISSUER, sub: 'gw-a', iat, exp: iat + 60 };
    assert.equal((await verifier.verify(await sign(claims))).subject, 'gw-a');
    await assert.rejects(verifier.verify(await sign(claims, `${SECRET}-other`)), {
      message: '[unauthenticated] replica token signature invalid',
    });
    await assert.rejects(verifier.verify(await sign({ ...claims, iss: 'someone' })), {
      message: '[unauthenticated] replica token issuer (iss) does not match the expected issuer',
    });
    await assert.rejects(verifier.verify(await sign({ ...claims, aud: 'someone' })), {
      message: '[unauthenticated] replica token audience (aud) does not match the expected audience',
    });
    await assert.rejects(verifier.verify(await sign(claims, SECRET, 'HS384')), {
      message: '[unauthenticated] replica token algorithm not allowed',
    });
    await assert.rejects(verifier.verify(await sign({ ...claims, sub: undefined })), {
      message: '[unauthenticated] replica token has no string "sub" claim to name its subject',
    });
  });

  test('allows 30 seconds of clock skew past expiry, no more', async () => {
    const verifier = createReplicaTokenVerifier(secretFile(SECRET), recordingLogger().logger);
    const now = nowSeconds();
    const claims = { iss: REPLICA_ISSUER, aud: REPLICA_ISSUER, sub: 'gw-a' };
    assert.equal((await verifier.verify(await sign({ ...claims, iat: now - 80, exp: now - 25 }))).subject, 'gw-a');
    await assert.rejects(verifier.verify(await sign({ ...claims, iat: now - 100, exp: now - 40 })), {
      message: '[unauthenticated] replica token expired',
    });
  });

  test('accepts a lifetime of up to 120 seconds', async () => {
    const verifier = createReplicaTokenVerifier(secretFile(SECRET), recordingLogger().logger);
    const iat = nowSeconds();
    const claims = { iss: REPLICA_ISSUER, aud: REPLICA_ISSUER, sub: 'gw-a', iat };
    assert.equal((await verifier.verify(await sign({ ...claims, exp: iat + 120 }))).subject, 'gw-a');
    await assert.rejects(verifier.verify(await sign({ ...claims, exp: iat + 121 })), {
      message:
        '[unauthenticated] replica token lifetime (exp - iat) of 121 s exceeds the longest accepted 120 s (auth.jwt.maxLifetimeSeconds)',
    });
  });

  test('follows a rotated secret file', async () => {
    const path = secretFile(SECRET);
    const verifier = createReplicaTokenVerifier(path, recordingLogger().logger);
    const rotated = `${SECRET}-rotated`;
    writeFileSync(path, rotated);
    const token = await createReplicaTokenSigner(secretFile(rotated), 'gw-a').token();
    assert.equal((await verifier.verify(token)).subject, 'gw-a');
  });

  test('keeps the last secret when the file disappears, and logs it', async () => {
    const { logger, errors } = recordingLogger();
    const path = secretFile(SECRET);
    const verifier = createReplicaTokenVerifier(path, logger);
    rmSync(path);
    const token = await createReplicaTokenSigner(secretFile(SECRET), 'gw-a').token();
    assert.equal((await verifier.verify(token)).subject, 'gw-a');
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.msg, 'replica secret unreadable; keeping the last one');
    assert.match(errors[0]?.err ?? '', /^auth\.replicaSecretFile: cannot read .*ENOENT/);
  });

  test('refuses a secret file it cannot read, or one shorter than 32 bytes', () => {
    const { logger } = recordingLogger();
    const missing = join(dir, 'missing-too');
    assert.throws(() => createReplicaTokenVerifier(missing, logger), {
      message: new RegExp(`^auth\\.replicaSecretFile: cannot read ${missing}: `),
    });
    const short = secretFile('x'.repeat(31));
    assert.throws(() => createReplicaTokenVerifier(short, logger), {
      message: `auth.replicaSecretFile: ${short} holds fewer than 32 bytes`,
    });
  });
});
