/**
 * `outpost credential`, the exec credential plugin: the ExecCredential on stdout (and nothing else), a JWT's expiry
 * as status.expirationTimestamp, and its refusals (no token, an expired JWT, a wrong KUBERNETES_EXEC_INFO) on stderr.
 */
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { jwtExpiry, rfc3339 } from '../../src/client/kube-token.js';
import { createScratch, fakeJwt, runKubeCli } from './kubeconfig-helpers.js';

const scratch = createScratch();
after(() => scratch.cleanup());

const NOW = new Date('2026-06-01T12:00:00Z');
const V1_INFO = JSON.stringify({
  apiVersion: 'client.authentication.k8s.io/v1',
  kind: 'ExecCredential',
  spec: { interactive: false },
});

describe('outpost credential', () => {
  test('prints a v1 ExecCredential with the token from OUTPOST_TOKEN (no expiry for an opaque token)', async () => {
    const r = await runKubeCli(['credential'], { env: { OUTPOST_TOKEN: ' opaque-token\n', KUBERNETES_EXEC_INFO: V1_INFO }, now: NOW });
    assert.equal(r.code, 0, r.err);
    assert.equal(r.err, '');
    assert.deepEqual(JSON.parse(r.out), {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'opaque-token' },
    });
  });

  test('--token-file wins over OUTPOST_TOKEN and is trimmed', async () => {
    const file = scratch.file('token', '\n  from-file \n');
    const r = await runKubeCli(['credential', '--token-file', file], { env: { OUTPOST_TOKEN: 'from-env' }, now: NOW });
    assert.equal(r.code, 0, r.err);
    assert.equal(JSON.parse(r.out).status.token, 'from-file');
  });

  test('a JWT: its exp claim becomes status.expirationTimestamp in RFC 3339', async () => {
    const exp = Math.floor(NOW.getTime() / 1000) + 3600;
    const jwt = fakeJwt({ sub: 'alice', exp });
    const r = await runKubeCli(['credential'], { env: { OUTPOST_TOKEN: jwt }, now: NOW });
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(JSON.parse(r.out).status, { token: jwt, expirationTimestamp: '2026-06-01T13:00:00Z' });
    assert.match(JSON.parse(r.out).status.expirationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // without exp, or not a JWT: no expiry
    assert.equal(jwtExpiry(fakeJwt({ sub: 'alice' })), undefined);
    assert.equal(jwtExpiry('a.b.c'), undefined, 'middle part not JSON');
    assert.equal(jwtExpiry('abc'), undefined);
    assert.equal(jwtExpiry(fakeJwt({ exp: 'soon' })), undefined);
    assert.equal(rfc3339(new Date(Date.UTC(2030, 0, 2, 3, 4, 5, 678))), '2030-01-02T03:04:05Z');
  });
});

describe('outpost credential refuses: stderr, exit 1 or 2, nothing on stdout', () => {
  const expired = fakeJwt({ exp: Math.floor(NOW.getTime() / 1000) - 60 });
  const cases: [string, string[], NodeJS.ProcessEnv, number, RegExp][] = [
    ['no token', [], {}, 2, /no token: pass --token-file FILE or set OUTPOST_TOKEN/],
    ['an empty OUTPOST_TOKEN', [], { OUTPOST_TOKEN: '' }, 2, /OUTPOST_TOKEN is empty/],
    ['a missing token file', ['--token-file', '/nonexistent/token'], {}, 2, /cannot read the token file \/nonexistent\/token/],
    ['an expired JWT', [], { OUTPOST_TOKEN: expired }, 1, /expired at 2026-06-01T11:59:00Z/],
    [
      'a v1beta1 request from kubectl',
      [],
      {
        OUTPOST_TOKEN: 't',
        KUBERNETES_EXEC_INFO: JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1beta1', kind: 'ExecCredential' }),
      },
      2,
      /asked for an ExecCredential of apiVersion "client.authentication.k8s.io\/v1beta1"; this plugin speaks only client.authentication.k8s.io\/v1/,
    ],
    [
      'KUBERNETES_EXEC_INFO that is not JSON',
      [],
      { OUTPOST_TOKEN: 't', KUBERNETES_EXEC_INFO: '{nope' },
      2,
      /KUBERNETES_EXEC_INFO is not JSON/,
    ],
    ['an unknown flag', ['--token'], { OUTPOST_TOKEN: 't' }, 2, /unknown option '--token'/],
  ];
  for (const [what, args, env, code, message] of cases) {
    test(what, async () => {
      const r = await runKubeCli(['credential', ...args], { env, now: NOW });
      assert.equal(r.code, code, r.err);
      assert.match(r.err, message);
      assert.equal(r.out, '');
    });
  }

  test('an empty token file', async () => {
    const r = await runKubeCli(['credential', '--token-file', scratch.file('empty', ' \n')], { env: { OUTPOST_TOKEN: 't' }, now: NOW });
    assert.equal(r.code, 2);
    assert.match(r.err, /the token file .*empty is empty/);
    assert.equal(r.out, '');
  });
});
