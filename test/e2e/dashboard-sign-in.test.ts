/**
 * Signing in to the dashboard with an identity provider, in a real browser (Debian chromium via playwright-core)
 * against the real test provider (oidc-provider on loopback, its development login and consent pages): alice clicks
 * "Sign in with Corp SSO", logs in, consents, lands back on the page she asked for, sees who she is and her roles in
 * the header and what her group allows (the Audit view, which needs admin, lists her sign-in); she signs out through
 * the provider's sign-out page and is back on the sign-in page. bob signs in and is refused an operation (read only)
 * with a clear message. Chromium keeps the session cookie `Secure` and `__Host-` on http://127.0.0.1. Screenshots
 * under test-output/dashboard/ at 1280 and 390 px, each view checked with axe-core.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { signInToDashboard } from '../../testkit/oidc-browser.js';
import { createSignInSetup, type SignInSetup } from '../../testkit/sign-in-gateway.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';

const WAIT = { timeout: 30_000 };
const WIDTHS = [1280, 390] as const;

describe('dashboard sign-in with an identity provider', { timeout: 180_000 }, () => {
  let setup: SignInSetup;
  let t: TestGateway;
  let browser: Browser;
  let url: string;
  const shots = testOutputDir('dashboard');

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    setup = await createSignInSetup();
    t = await startTestGateway('pglite', setup.config());
    url = t.gateway.httpUrl;
    setup.register(url);
    // An account for the operation form to name (created with a token of alice's, an admin).
    const token = await setup.provider.mint({ sub: 'alice' });
    const created = await fetch(`${url}/armory/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ name: 'prod', kubeconfigFile: '/k' }]),
    });
    assert.equal(created.status, 201);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
    await setup?.close();
  });

  /** A fresh browser profile (no cookies) at `width` px. */
  const profile = (width: number) => browser.newContext({ viewport: { width, height: 900 }, bypassCSP: true });

  /** From the dashboard's sign-in page through the provider's login and consent pages, back to the dashboard. */
  const signIn = (page: Page, login: string) => signInToDashboard(page, url, login);
  const shoot = async (page: Page, name: string) => {
    await page.screenshot({ path: join(shots, name), fullPage: true });
    assert.deepEqual(await seriousAxeViolations(page), [], `${name}: no serious accessibility problem`);
  };
  const sessionCookie = async (context: BrowserContext) => (await context.cookies(url)).find((c) => c.name === '__Host-outpost-session');

  test('alice signs in, sees who she is, her roles and the Audit view; signs out through the provider', async () => {
    for (const width of WIDTHS) {
      const context = await profile(width);
      const page = await context.newPage();
      await page.goto(`${url}/#/audit`);
      const link = page.getByRole('link', { name: 'Sign in with Corp SSO' });
      await link.waitFor(WAIT);
      assert.equal(await page.getByRole('alert').count(), 0, 'nothing failed yet');
      assert.equal(await page.getByRole('form', { name: 'Sign in' }).getByLabel('Access token').count(), 1, 'the token form stays');
      await shoot(page, `sign-in-providers-${width}.png`);

      await signIn(page, 'alice');
      assert.equal(new URL(page.url()).hash, '#/audit', 'back on the page she asked for');
      assert.equal(await page.locator('[data-who="identity"]').innerText(), 'oidc:corp:alice');
      assert.equal(await page.locator('[data-who="roles"]').innerText(), 'roles: admin, read, write');
      const cookie = await sessionCookie(context);
      assert.deepEqual(
        cookie && [cookie.httpOnly, cookie.secure, cookie.sameSite, cookie.path],
        [true, true, 'Strict', '/'],
        'Chromium keeps the Secure, __Host- cookie on http://127.0.0.1',
      );
      const rows = page.locator('tr[data-audit]').filter({ hasText: 'oidc:corp:alice' }).filter({ hasText: 'sign-in' });
      await rows.first().waitFor(WAIT);
      await shoot(page, `signed-in-audit-${width}.png`);

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Yes, sign me out' }).click();
      await page.waitForURL((u) => u.origin === url, WAIT);
      await page.getByRole('link', { name: 'Sign in with Corp SSO' }).waitFor(WAIT);
      assert.equal(await sessionCookie(context), undefined, 'the cookie is gone');
      assert.equal(await page.locator('[data-who="identity"]').count(), 0);
      await shoot(page, `signed-out-${width}.png`);
      await context.close();
    }
  });

  test('bob signs in and is refused an operation: he may read only', async () => {
    for (const width of WIDTHS) {
      const context = await profile(width);
      const page = await context.newPage();
      await page.goto(`${url}/#/operations`);
      await signIn(page, 'bob');
      assert.equal(await page.locator('[data-who="roles"]').innerText(), 'roles: read');
      const form = page.getByRole('form', { name: 'Submit operation' });
      const account = form.getByLabel('Account');
      await account.locator('option[value="prod"]').waitFor({ state: 'attached', ...WAIT });
      await form.getByLabel('Operation').selectOption('scale');
      await account.selectOption('prod');
      await form.getByLabel('Kind').fill('Deployment');
      await form.getByLabel('Namespace').fill('shop');
      await form.getByLabel('Name', { exact: true }).fill('cart');
      await form.getByLabel('Replicas').fill('2');
      await form.getByRole('button', { name: 'Submit' }).click();
      const result = page.getByRole('status', { name: 'Operation result' });
      await result.filter({ hasText: /corp:bob lacks the role "write"/ }).waitFor(WAIT);
      assert.match(await result.innerText(), /Permission denied/);
      await shoot(page, `refused-operation-${width}.png`);
      await context.close();
    }
  });

  test('a failed sign-in says why on the sign-in page, from a fixed sentence', async () => {
    const context = await profile(1280);
    const page = await context.newPage();
    await page.goto(`${url}/?sign_in_error=state_mismatch#/`);
    await page
      .getByRole('alert')
      .filter({ hasText: /^Sign-in failed\. The answer from the identity provider does not belong/ })
      .waitFor(WAIT);
    assert.equal(new URL(page.url()).search, '', 'the code leaves the address bar');
    await context.close();
  });
});
