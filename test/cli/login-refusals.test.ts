/**
 * What `outpost login`, `credential --gateway` and `kubeconfig --exec --oidc` refuse, and how: an unknown provider
 * and several providers with none chosen (exit 2, listing them), a gateway without auth.oidc (GET /auth/providers
 * 404: "this gateway has no sign-in providers"), nothing at the URL (exit 3), a loopback sign-in nobody completes
 * (--timeout), the plugin of someone not signed in (exit 2, "run outpost login --gateway URL"); and the exec entry
 * `kubeconfig --exec --oidc` writes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { listLogins } from '../../src/client/login/login-store.js';
import { startAuthGateway } from '../../testkit/auth-helpers.js';
import { writeKeyFile } from '../../testkit/sign-in-gateway.js';
import { corpProviderConfig, startTestOidcProvider, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import type { TestGateway } from '../../testkit/test-gateway.js';
import { cacheSignIn, runSignInCli, scratchConfig } from './login-helpers.js';

describe('sign-in refusals', () => {
  let provider: TestOidcProvider;
  let two: TestGateway;
  let none: TestGateway;
  const scratch = scratchConfig();
  const env = scratch.env;
  before(async () => {
    provider = await startTestOidcProvider();
    provider.configure({ dashboardRedirectUris: ['http://127.0.0.1/unused'] });
    const corp = corpProviderConfig(provider.issuer);
    const other = { name: 'other', issuer: 'https://login.other.example', clientId: 'outpost' };
    two = await startAuthGateway({ auth: { oidc: { providers: [corp, other] } }, secrets: { keyFile: writeKeyFile(scratch.dir) } });
    none = await startAuthGateway({ auth: { tokens: [{ subject: 'ci', token: 'ci-token-0123456789abcdef' }] } });
  });
  after(async () => {
    await two?.close();
    await none?.close();
    await provider?.close();
    scratch.remove();
  });

  const login = (gateway: string, ...args: string[]) => runSignInCli(['login', '--gateway', gateway, '--no-browser', ...args], env);

  test('several providers and none chosen, or an unknown one: exit 2 listing them, nothing cached', async () => {
    const url = two.gateway.httpUrl;
    const several = await login(url);
    assert.equal(several.code, 2);
    assert.equal(
      several.err,
      `error: the gateway at ${url} has several sign-in providers: pick one with --provider NAME (corp (Corp SSO), other)\n`,
    );
    const unknown = await login(url, '--provider', 'nope');
    assert.deepEqual(
      [unknown.code, unknown.err],
      [2, `error: the gateway at ${url} has no sign-in provider "nope"; it has: corp (Corp SSO), other\n`],
    );
    const fromEnv = await runSignInCli(['login', '--gateway', url, '--no-browser'], { ...env, OUTPOST_PROVIDER: 'nope' });
    assert.match(fromEnv.err, /no sign-in provider "nope"/);
    const flow = await login(url, '--flow', 'sideways');
    assert.equal(flow.code, 2);
    assert.match(flow.err, /argument 'sideways' is invalid. Allowed choices are device, loopback/);
    assert.deepEqual(listLogins(env, url), []);
  });

  test('a gateway without auth.oidc: "this gateway has no sign-in providers"; nothing at the URL: exit 3', async () => {
    const r = await login(none.gateway.httpUrl);
    assert.equal(r.code, 1);
    assert.match(r.err, /^error: this gateway has no sign-in providers \(GET http:\/\/127\.0\.0\.1:\d+\/auth\/providers answered 404\)/);
    const nothing = await login('http://127.0.0.1:9');
    assert.equal(nothing.code, 3);
    assert.match(nothing.err, /^error: cannot reach the gateway at http:\/\/127\.0\.0\.1:9 \(ECONNREFUSED/);
    const tls = await login(none.gateway.httpUrl, '--insecure-skip-tls-verify');
    assert.deepEqual([tls.code, tls.err], [2, 'error: --ca-file and --insecure-skip-tls-verify need an https:// gateway\n']);
  });

  test('a loopback sign-in nobody completes ends at --timeout with a clear error; its listener is gone', async () => {
    const r = await login(two.gateway.httpUrl, '--provider', 'corp', '--flow', 'loopback', '--timeout', '1s');
    assert.equal(r.code, 1);
    const [, redirect] = /waiting at (http:\/\/127\.0\.0\.1:\d+\/callback)/.exec(r.err) ?? [];
    assert.ok(redirect, r.err);
    assert.match(r.err, /^ {2}http:\/\/127\.0\.0\.1:\d+\/auth\?.*code_challenge_method=S256/m);
    assert.match(
      r.err,
      new RegExp(`error: no sign-in came back to ${redirect} within 1 s: run outpost login --gateway \\S+ --provider corp`),
    );
    await assert.rejects(fetch(redirect!), /fetch failed/);
  });

  test('the plugin of someone not signed in exits 2 saying which login to run; signed in, it serves the ID token', async () => {
    const url = two.gateway.httpUrl;
    const r = await runSignInCli(['credential', '--gateway', url], env);
    assert.deepEqual([r.code, r.out, r.err], [2, '', `error: not signed in to ${url}: run outpost login --gateway ${url}\n`]);
    const both = await runSignInCli(['credential', '--gateway', url, '--token-file', '/x'], env);
    assert.deepEqual([both.code, both.err], [2, 'error: --gateway and --token-file exclude each other: give one\n']);

    const stored = await cacheSignIn(env, provider, { gateway: url });
    const served = await runSignInCli(['credential', '--gateway', `${url}/`], env);
    assert.equal(served.code, 0, served.err);
    assert.deepEqual(JSON.parse(served.out), {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: stored.idToken, expirationTimestamp: stored.expiresAt.replace(/\.\d+Z$/, 'Z') },
    });
  });

  test('kubeconfig --exec --oidc writes an exec entry running "outpost credential --gateway URL [--provider P]"', async () => {
    const kubeconfig = join(scratch.dir, 'kubeconfig');
    const base = ['kubeconfig', '--account', 'prod', '--gateway', 'https://outpost.example.com/', '--kubeconfig', kubeconfig];
    const r = await runSignInCli([...base, '--exec', '--oidc', '--provider', 'corp'], env);
    assert.equal(r.code, 0, r.err);
    assert.match(
      r.err,
      /note: not signed in to https:\/\/outpost\.example\.com with provider corp: run outpost login --gateway https:\/\/outpost\.example\.com --provider corp before kubectl/,
    );
    const user = (
      parse(readFileSync(kubeconfig, 'utf8')) as { users: { name: string; user: { exec: { args: string[]; command: string } } }[] }
    ).users[0]!;
    assert.deepEqual(user.user.exec.args, ['credential', '--gateway', 'https://outpost.example.com', '--provider', 'corp']);
    assert.match(user.user.exec.command, /bin\/outpost\.js$/);
    for (const [flags, message] of [
      [['--oidc'], '--oidc needs --exec'],
      [['--exec', '--oidc', '--token-file', kubeconfig], '--oidc and --token-file exclude each other'],
      [['--provider', 'corp'], '--provider goes with --exec --oidc'],
      [['--exec', '--oidc', '--provider', 'Not_A_Name'], 'invalid provider name "Not_A_Name"'],
    ] as const) {
      const refused = await runSignInCli([...base, ...flags], env);
      assert.equal(refused.code, 2, flags.join(' '));
      assert.match(refused.err, new RegExp(`^error: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`), flags.join(' '));
    }
  });
});
