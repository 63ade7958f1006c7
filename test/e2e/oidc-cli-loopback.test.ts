/**
 * `outpost login` as a person runs it (a child process) against the real test provider, with a real browser:
 * the loopback flow (`--flow loopback --no-browser`) prints the provider's URL, Chromium opens it and signs in as
 * alice, the CLI receives the code on 127.0.0.1, checks the state, caches the tokens (0600) and says who signed in,
 * and a client command is then authenticated by that sign-in; a device sign-in denied at the provider, and one whose
 * code expires, end with their own messages.
 */
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { listLogins, readLogin } from '../../src/client/login/login-store.js';
import { startAuthGateway } from '../../testkit/auth-helpers.js';
import { writeKeyFile } from '../../testkit/sign-in-gateway.js';
import { startCliChild } from '../../testkit/cli-child.js';
import { completeBrowserSignIn, denyDeviceSignIn } from '../../testkit/oidc-browser.js';
import { CLI_CLIENT_ID, corpProviderConfig, startTestOidcProvider, type TestOidcProvider } from '../../testkit/oidc-test-provider.js';
import type { TestGateway } from '../../testkit/test-gateway.js';
import { runSignInCli, scratchConfig } from '../cli/login-helpers.js';
import { launchChromium } from './browser.js';

describe('outpost login in a browser', { concurrency: false }, () => {
  let provider: TestOidcProvider;
  let gw: TestGateway;
  let browser: Browser;
  const scratch = scratchConfig();
  const setup = { dashboardRedirectUris: ['http://127.0.0.1/unused'] };
  before(async () => {
    provider = await startTestOidcProvider();
    provider.configure(setup);
    const corp = corpProviderConfig(provider.issuer);
    gw = await startAuthGateway({
      auth: { oidc: { providers: [corp] } },
      secrets: { keyFile: writeKeyFile(scratch.dir) },
      authorization: { rules: [{ kind: 'oidc', groups: ['corp:platform-admins'], roles: ['read'] }] },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gw?.close();
    await provider?.close();
    scratch.remove();
  });

  const login = (...args: string[]) =>
    startCliChild(['login', '--gateway', gw.gateway.httpUrl, ...args], scratch.env as Record<string, string>);

  test('loopback: the browser signs in, the CLI receives the code, caches the tokens and a command is authenticated', async () => {
    const before = await runSignInCli(['accounts', '--gateway', gw.gateway.httpUrl], scratch.env);
    assert.equal(before.code, 1);
    assert.match(
      before.err,
      /Unauthenticated: authentication required.*no credentials were sent: run outpost login --gateway http:\/\/127\.0\.0\.1:\d+ to sign in/,
    );

    const child = login('--flow', 'loopback', '--no-browser');
    const [, url] = await child.waitForStderr(
      /open this URL in a browser \(waiting at http:\/\/127\.0\.0\.1:\d+\/callback\):\n {2}(\S+)\n/,
    );
    const authorization = new URL(url!);
    assert.equal(authorization.origin, provider.issuer);
    assert.equal(authorization.searchParams.get('client_id'), CLI_CLIENT_ID);
    assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
    assert.equal(authorization.searchParams.get('scope'), 'openid email offline_access groups');
    assert.ok(authorization.searchParams.get('state'));

    const page = await completeBrowserSignIn(browser, url!, 'alice');
    assert.match(page, /Signed in to Outpost/);
    assert.match(page, /you can close this tab/);
    const result = await child.result;
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, '');
    assert.match(
      result.stderr,
      /^Signed in to http:\/\/127\.0\.0\.1:\d+ with Corp SSO as alice@example\.com \(sub alice\); groups: platform-admins, everyone$/m,
    );
    assert.match(
      result.stderr,
      /^The gateway knows you as oidc:corp:alice with the roles read, groups corp:platform-admins, corp:everyone$/m,
    );

    const [cached] = listLogins(scratch.env, gw.gateway.httpUrl);
    assert.equal(cached?.provider, 'corp');
    assert.equal(statSync(cached.file).mode & 0o777, 0o600);
    const stored = readLogin(cached.file)!;
    assert.equal(stored.issuer, provider.issuer);
    assert.equal(stored.clientId, CLI_CLIENT_ID);
    assert.ok(stored.refreshToken && stored.accessToken && stored.idToken.split('.').length === 3);

    const after = await runSignInCli(['accounts', '--gateway', gw.gateway.httpUrl], scratch.env);
    assert.deepEqual([after.code, after.err], [0, 'No accounts found.\n']);
  });

  test('a device sign-in the person aborts at the provider ends with "denied"', async () => {
    const child = login('--flow', 'device');
    const [, complete] = await child.waitForStderr(/\(or open (\S+), which carries the code\)/);
    await denyDeviceSignIn(browser, complete!);
    const result = await child.result;
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      /^error: the sign-in was denied at the provider \(access_denied: End-User aborted interaction\): run outpost login --gateway \S+ to try again$/m,
    );
  });

  test('a device code that expires before anyone signs in ends with "expired"', async () => {
    provider.configure({ ...setup, deviceCodeSeconds: 2 });
    try {
      const child = login('--flow', 'device');
      const [, code] = await child.waitForStderr(/enter the code (\S+)\n/);
      const result = await child.result;
      assert.equal(result.code, 1);
      assert.match(
        result.stderr,
        new RegExp(`^error: the code ${code} expired before the sign-in was completed: run outpost login --gateway \\S+$`, 'm'),
      );
    } finally {
      provider.configure(setup);
    }
  });
});
