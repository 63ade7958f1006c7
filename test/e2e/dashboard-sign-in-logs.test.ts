/**
 * A pod's log on the dashboard of a person signed in with the identity provider, in a real browser: the page reads it
 * through `/k8s` with the session cookie and its CSRF header (the one `/k8s` read the cookie may make), as alice —
 * impersonated with her groups, under the cluster's RBAC — on one stack (sandbox, gateway, agent) and the real test
 * provider. bob, whose rules give no `kube` role, is told why instead, and stays signed in.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { signInToDashboard } from '../../testkit/oidc-browser.js';
import { createSignInSetup, type SignInSetup } from '../../testkit/sign-in-gateway.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { launchChromium, testOutputDir } from './browser.js';

const WAIT = { timeout: 30_000 };
const AGENT = 'sign-in-logs-agent-token-0123456789';
const LOG = ['first line of the talker', 'second line of the talker'].join('\n');

describe("a pod's log for a person signed in with the provider", { timeout: 180_000, concurrency: false }, () => {
  let setup: SignInSetup;
  let stack: Stack;
  let browser: Browser;
  let url: string;

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    setup = await createSignInSetup();
    const base = setup.config();
    stack = await startStack({
      gateway: {
        ...base,
        auth: { ...base.auth, tokens: [{ subject: 'agent', token: AGENT }] },
        authorization: {
          rules: [
            ...(base.authorization?.rules ?? []),
            { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
            { kind: 'oidc', groups: ['corp:platform-admins'], roles: ['kube'], accounts: ['sandbox'] },
          ],
        },
      },
    });
    url = stack.gateway.httpUrl;
    setup.register(url);
    // The cluster lets the impersonated platform admins read pods and their logs.
    stack.sandbox.store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'outpost-platform-admins' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'outpost:corp:platform-admins' }],
    });
    stack.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'talker', namespace: 'demo', annotations: { 'sandbox.outpost.dev/log': LOG } },
      spec: { containers: [{ name: 'talk', image: 'talk:1' }] },
    });
    await stack.startAgent({ config: { clouddriver: { auth: { token: AGENT } } } });
    const token = await setup.provider.mint({ sub: 'alice' });
    await waitForAccounts(url, ['sandbox'], { headers: { authorization: `Bearer ${token}` } });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
    await setup?.close();
  });

  /** Signs `login` in through the provider's pages, from the pod's page; back on it, signed in. */
  const openPodSignedIn = async (login: string): Promise<Page> => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    await page.goto(`${url}/#/objects/sandbox/Pod/demo/talker`);
    await signInToDashboard(page, url, login);
    return page;
  };

  test('alice reads the log through /k8s with her session', async () => {
    const page = await openPodSignedIn('alice');
    const logs = page.getByRole('region', { name: 'Pod logs' });
    await logs.getByRole('log', { name: 'Log of container talk' }).filter({ hasText: 'second line of the talker' }).waitFor(WAIT);
    await page.screenshot({ path: join(testOutputDir('dashboard'), 'pod-logs-signed-in.png'), fullPage: true });
    await page.context().close();
  });

  test('bob, without the kube role, is told why and stays signed in', async () => {
    const page = await openPodSignedIn('bob');
    const logs = page.getByRole('region', { name: 'Pod logs' });
    await logs
      .getByText(/corp:bob/)
      .first()
      .waitFor(WAIT);
    assert.match(await logs.innerText(), /kube/);
    assert.equal(await page.locator('[data-who="identity"]').count(), 1, 'still signed in');
    await page.context().close();
  });
});
