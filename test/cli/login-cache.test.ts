/**
 * The sign-in cache of `outpost login` (src/client/login/): files of mode 0600 in a directory of mode 0700, one per
 * gateway and provider; a file others may read is refused; the cached ID token is renewed with its refresh token at
 * the real test provider's token endpoint once the (driven) clock is within a minute of its expiry — once, however
 * many processes ask together — and the cache rewritten; a failed renewal says to run outpost login again; it is the
 * last source of the client commands' credentials; logout removes the file and revokes the refresh token.
 */
import assert from 'node:assert/strict';
import { chmodSync, readFileSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import { resolveGatewayConnection } from '../../src/client/client-credentials.js';
import { ExitCode } from '../../src/client/errors.js';
import { listLogins, loginFile, readLogin } from '../../src/client/login/login-store.js';
import { loginTokenFor } from '../../src/client/login/login-token.js';
import { CLI_CLIENT_ID, OIDC_USERS, startTestOidcProvider, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import { cacheSignIn, runSignInCli, scratchConfig } from './login-helpers.js';
import { refusal } from './cli-refusal.js';

const GATEWAY = 'https://outpost.example.com';

/** A loopback port nothing listens on (it did a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
const at = (iso: string, offsetS: number) => () => new Date(Date.parse(iso) + offsetS * 1000);

describe('the sign-in cache', () => {
  let provider: TestOidcProvider;
  const scratch = scratchConfig();
  const env = scratch.env;
  before(async () => {
    provider = await startTestOidcProvider();
    provider.configure({ dashboardRedirectUris: ['http://127.0.0.1/unused'] });
  });
  after(async () => {
    await provider?.close();
    scratch.remove();
  });

  test('files are 0600 in a 0700 directory, one per gateway and provider; spellings of one gateway share a file', async () => {
    const stored = await cacheSignIn(env, provider, { gateway: GATEWAY });
    const file = loginFile(env, GATEWAY, 'corp');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(file)).mode & 0o777, 0o700);
    assert.equal(loginFile(env, 'HTTPS://Outpost.Example.com:443/', 'corp'), file);
    assert.notEqual(loginFile(env, 'http://outpost.example.com', 'corp'), file);
    assert.deepEqual(readLogin(file), stored);
    assert.deepEqual(
      listLogins(env, GATEWAY).map((l) => l.provider),
      ['corp'],
    );
    assert.throws(() => loginFile(env, GATEWAY, '../../etc'), /invalid provider name/);
  });

  test('a cache file that group or others may read is refused, and not used for any command', async () => {
    const file = loginFile(env, GATEWAY, 'corp');
    chmodSync(file, 0o640);
    try {
      const err = await refusal(loginTokenFor(env, GATEWAY, undefined));
      assert.equal(err.exitCode, ExitCode.USAGE);
      assert.match(err.message, /sign-in cache .* may be read by others \(mode 0640\): it holds your refresh token, so it is not used/);
      await refusal(resolveGatewayConnection(GATEWAY, {}, env));
    } finally {
      chmodSync(file, 0o600);
    }
  });

  test('the last source of a command credentials: after every other, as "outpost login (provider corp)"', async () => {
    const stored = readLogin(loginFile(env, GATEWAY, 'corp'))!;
    const connection = await resolveGatewayConnection(`${GATEWAY}/`, {}, env);
    assert.deepEqual([connection.token, connection.tokenOrigin], [stored.idToken, 'outpost login (provider corp)']);
    assert.equal((await resolveGatewayConnection(GATEWAY, {}, { ...env, OUTPOST_TOKEN: 'static-token' })).token, 'static-token');
    assert.equal((await resolveGatewayConnection('https://another.example.com', {}, env)).token, undefined);
  });

  test('within a minute of expiry (driven clock) the ID token is renewed at the provider, once, and the cache rewritten', async () => {
    const stored = await cacheSignIn(env, provider, { gateway: GATEWAY, expiresIn: 300 });
    const file = loginFile(env, GATEWAY, 'corp');
    const tokenRequests = provider.requests('/token');
    const early = await loginTokenFor(env, GATEWAY, undefined, at(stored.expiresAt, -61));
    assert.equal(early?.token, stored.idToken, 'more than a minute left: the cached token');
    assert.equal(provider.requests('/token'), tokenRequests);

    // Three processes at once, 30 s before expiry: one renewal (a rotated refresh token used twice would make the
    // provider revoke the whole sign-in), and all get the new token.
    const due = at(stored.expiresAt, -30);
    const renewed = await Promise.all([1, 2, 3].map(() => loginTokenFor(env, GATEWAY, undefined, due)));
    assert.equal(provider.requests('/token'), tokenRequests + 1);
    const token = renewed[0]!.token;
    assert.notEqual(token, stored.idToken);
    for (const r of renewed) assert.equal(r?.token, token);
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    assert.deepEqual([claims.sub, claims.aud, claims.iss, claims.groups], ['alice', CLI_CLIENT_ID, provider.issuer, OIDC_USERS.alice]);

    const rewritten = readLogin(file)!;
    assert.equal(rewritten.idToken, token);
    assert.equal(rewritten.expiresAt, new Date((claims.exp as number) * 1000).toISOString());
    assert.notEqual(rewritten.refreshToken, stored.refreshToken, 'the provider rotated the refresh token; the new one is kept');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.doesNotMatch(readFileSync(file, 'utf8'), new RegExp(stored.idToken));
    // The renewed token is fresh by the same clock: no second renewal.
    assert.equal((await loginTokenFor(env, GATEWAY, undefined, due))?.token, token);
    assert.equal(provider.requests('/token'), tokenRequests + 1);
  });

  test('an expired sign-in whose renewal fails says to run outpost login again (exit 1); one with seconds left still serves', async () => {
    const stored = await cacheSignIn(env, provider, {
      gateway: GATEWAY,
      expiresIn: -10,
      refreshToken: 'not-a-refresh-token-of-this-provider',
    });
    const err = await refusal(loginTokenFor(env, GATEWAY, undefined));
    assert.equal(err.exitCode, ExitCode.FAILED);
    assert.match(
      err.message,
      new RegExp(
        `^the sign-in with corp at ${GATEWAY} expires at ${stored.expiresAt} and could not be renewed \\(invalid_grant: .*\\): ` +
          `run outpost login --gateway ${GATEWAY} --provider corp again$`,
      ),
    );
    // Seconds left: the renewal is due and fails, and the token still serves until it expires.
    const lasting = await cacheSignIn(env, provider, {
      gateway: GATEWAY,
      expiresIn: 30,
      refreshToken: 'not-a-refresh-token-of-this-provider',
    });
    assert.equal((await loginTokenFor(env, GATEWAY, undefined))?.token, lasting.idToken);
    await cacheSignIn(env, provider, { gateway: GATEWAY, expiresIn: -10, refreshToken: null });
    assert.match((await refusal(loginTokenFor(env, GATEWAY, undefined))).message, /gave no refresh token to renew it: run outpost login/);
    const credential = await runSignInCli(['credential', '--gateway', GATEWAY], env);
    assert.equal(credential.code, ExitCode.FAILED);
    assert.match(
      credential.err,
      /^error: the sign-in with corp .* run outpost login --gateway https:\/\/outpost\.example\.com --provider corp again\n$/,
    );
    assert.equal(credential.out, '');
  });

  test('several providers signed in: one must be named (--provider or OUTPOST_PROVIDER)', async () => {
    const corp = await cacheSignIn(env, provider, { gateway: GATEWAY });
    const other = await cacheSignIn(env, provider, { gateway: GATEWAY, provider: 'other', login: 'bob' });
    const err = await refusal(resolveGatewayConnection(GATEWAY, {}, env));
    assert.equal(err.exitCode, ExitCode.USAGE);
    assert.match(
      err.message,
      /signed in to https:\/\/outpost\.example\.com with several providers \(corp, other\): pick one with --provider NAME or OUTPOST_PROVIDER/,
    );
    assert.equal((await resolveGatewayConnection(GATEWAY, { provider: 'other' }, env)).token, other.idToken);
    assert.equal((await resolveGatewayConnection(GATEWAY, {}, { ...env, OUTPOST_PROVIDER: 'corp' })).token, corp.idToken);
    const missing = await refusal(resolveGatewayConnection(GATEWAY, { provider: 'third' }, env));
    assert.match(
      missing.message,
      /not signed in to .* with provider third \(signed in with: corp, other\): run outpost login --gateway \S+ --provider third/,
    );
  });

  test('logout revokes the refresh token at the provider and removes the file; again: not signed in, exit 0', async () => {
    const refusedBoth = await runSignInCli(['logout', '--gateway', GATEWAY], env);
    assert.equal(refusedBoth.code, ExitCode.USAGE);
    assert.match(refusedBoth.err, /several providers \(corp, other\): give --provider NAME or --all/);

    const stored = readLogin(loginFile(env, GATEWAY, 'corp'))!;
    const revocations = provider.requests('/token/revocation');
    const out = await runSignInCli(['logout', '--gateway', GATEWAY, '--provider', 'corp'], env);
    assert.equal(out.code, 0, out.err);
    assert.match(out.err, /^Signed out of https:\/\/outpost\.example\.com \(provider corp\): removed /m);
    assert.equal(provider.requests('/token/revocation'), revocations + 1);
    assert.deepEqual(
      listLogins(env, GATEWAY).map((l) => l.provider),
      ['other'],
    );
    const config = await oidc.discovery(new URL(provider.issuer), CLI_CLIENT_ID, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests],
    });
    await assert.rejects(oidc.refreshTokenGrant(config, stored.refreshToken!), (err: { error?: string }) => err.error === 'invalid_grant');

    const again = await runSignInCli(['logout', '--gateway', GATEWAY, '--provider', 'corp'], env);
    assert.deepEqual([again.code, again.err], [0, 'Not signed in to https://outpost.example.com with provider corp: nothing to forget.\n']);
  });

  test('a revocation that fails is a warning; the file is removed anyway', async () => {
    const gone = await closedPort();
    await cacheSignIn(env, provider, { gateway: GATEWAY, provider: 'other', issuer: `http://127.0.0.1:${gone}` });
    const out = await runSignInCli(['logout', '--gateway', GATEWAY, '--all'], env);
    assert.equal(out.code, 0, out.err);
    assert.match(
      out.err,
      new RegExp(
        `^warning: could not revoke the refresh token at http://127\\.0\\.0\\.1:${gone} \\(cannot read the discovery document .*ECONNREFUSED.*\\); the refresh token stays valid`,
        'm',
      ),
    );
    assert.match(out.err, /Signed out of https:\/\/outpost\.example\.com \(provider other\)/);
    assert.deepEqual(listLogins(env, GATEWAY), []);
    assert.equal((await resolveGatewayConnection(GATEWAY, {}, env)).token, undefined);
  });
});
