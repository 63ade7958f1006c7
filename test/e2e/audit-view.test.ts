/**
 * The dashboard's Audit view in a real browser (Debian chromium via playwright-core): rows recorded in the audit log
 * show with who, account, verb, resource, object, status, bytes, duration and impersonated user; the filter form
 * narrows them through the hash query; a token without the admin role sees why nothing is listed; the sign-in page
 * says nothing is wrong until a token is refused.
 * Screenshots go to test-output/dashboard/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import type { AuditEntry } from '../../src/gateway/audit/audit-entry.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { launchChromium, testOutputDir } from './browser.js';

const ADMIN = 'audit-view-admin-token-0123456789';
const READER = 'audit-view-reader-token-0123456789';

function kubeEntry(over: Partial<AuditEntry>): AuditEntry {
  return {
    kind: 'kube',
    principal: 'token:alice',
    account: 'prod',
    verb: 'get',
    apiGroup: 'apps',
    resource: 'deployments',
    subresource: '',
    namespace: 'shop',
    name: 'cart',
    path: '/apis/apps/v1/namespaces/shop/deployments/cart',
    status: 200,
    bytesIn: 0,
    bytesOut: 2048,
    durationMs: 42,
    impersonatedUser: 'alice@example.com',
    impersonatedGroups: ['devs'],
    gatewayId: '',
    operationId: '',
    error: '',
    startedAt: new Date(),
    ...over,
  };
}

async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  const form = page.getByRole('form', { name: 'Sign in' });
  await form.getByLabel('Access token').fill(token);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await form.waitFor({ state: 'detached', timeout: 20_000 });
}

describe('the Audit view of the dashboard', { timeout: 180_000 }, () => {
  let t: TestGateway;
  let browser: Browser;
  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    t = await startTestGateway('pglite', {
      id: 'gw-audit-view',
      insecure: false,
      auth: {
        tokens: [
          { subject: 'root', token: ADMIN },
          { subject: 'viewer', token: READER },
        ],
      },
      authorization: {
        rules: [
          { kind: 'token', subject: '^root$', roles: ['read', 'write', 'admin'], accounts: ['*'] },
          { kind: 'token', subject: '^viewer$', roles: ['read'], accounts: [] },
        ],
      },
    });
    const audit = t.gateway.audit;
    audit.record(kubeEntry({}));
    audit.record(
      kubeEntry({
        principal: 'token:bob',
        groups: ['corp:sre', 'corp:oncall'],
        account: 'staging',
        verb: 'connect',
        apiGroup: '',
        resource: 'pods',
        subresource: 'exec',
        name: 'cart-0',
        status: 403,
        impersonatedUser: 'bob@example.com',
      }),
    );
    audit.record(
      kubeEntry({ kind: 'operation', principal: 'token:ci', verb: 'scale', resource: 'Deployment', operationId: 'op-1', path: '' }),
    );
    // A watch still open: its `started` entry, with no answer yet.
    audit.record(
      kubeEntry({ principal: 'token:carol', verb: 'watch', resource: 'pods', name: '', stage: 'started', requestId: 'r-1', status: 0 }),
    );
    await eventually('4 audit entries stored', async () => (await audit.list({})).entries.length === 4);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  test('lists the recorded rows, and the filter narrows them', async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await signIn(page, t.gateway.httpUrl, ADMIN);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit' }).click();
    await page.getByRole('heading', { name: 'Audit', level: 1 }).waitFor({ timeout: 20_000 });
    const rows = page.locator('tr[data-audit]');
    await eventually('4 rows', async () => (await rows.count()) === 4);
    const bob = rows.filter({ hasText: 'token:bob' });
    const cells = await bob.locator('td').allInnerTexts();
    assert.deepEqual(cells.slice(1, 8), [
      'token:bob\ncorp:sre, corp:oncall',
      'staging',
      'kube',
      'connect',
      'pods/exec',
      'shop/cart-0',
      '403',
    ]);
    assert.match(cells[8]!, /0 B in \/ 2\.0 KiB out/);
    assert.equal(cells[9], '42 ms');
    assert.equal(cells[10], 'bob@example.com');
    const open = await rows.filter({ hasText: 'token:carol' }).locator('td').allInnerTexts();
    assert.deepEqual(open.slice(7, 10), ['started', '—', '—'], 'a request still running shows no answer yet');
    await page.screenshot({ path: join(testOutputDir('dashboard'), 'audit.png'), fullPage: true });

    const filter = page.getByRole('form', { name: 'Filter audit entries' });
    await filter.getByLabel('Principal').fill('token:alice');
    await filter.getByRole('button', { name: 'Filter' }).click();
    await eventually('only alice', async () => (await rows.count()) === 1 && (await rows.first().innerText()).includes('token:alice'));
    assert.match(page.url(), /#\/audit\?principal=token%3Aalice/);

    await page.goto(`${t.gateway.httpUrl}/#/audit?kind=operation`);
    await eventually('only the operation', async () => (await rows.count()) === 1 && (await rows.first().innerText()).includes('token:ci'));
    await page.close();
  });

  test('the sign-in page shows no refusal before a token was tried, and a neutral header; a wrong token is refused', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.gateway.httpUrl}/`);
    const form = page.getByRole('form', { name: 'Sign in' });
    await form.waitFor({ timeout: 20_000 });
    const header = page.locator('header [role="status"]');
    assert.equal(await header.innerText(), 'Not signed in', 'nothing is reconnecting before anyone signed in');
    assert.equal(await page.getByRole('alert').count(), 0, 'no error before a sign-in attempt');
    await page.screenshot({ path: join(testOutputDir('dashboard'), 'sign-in.png'), fullPage: true });

    await form.getByLabel('Access token').fill('not-a-token-of-this-gateway-0123456789');
    await form.getByRole('button', { name: 'Sign in' }).click();
    await page
      .getByRole('alert')
      .filter({ hasText: /^The gateway refused the request: / })
      .waitFor({ timeout: 20_000 });
    assert.equal(await header.innerText(), 'Not signed in');
    await page.close();
  });

  test('a token without the admin role is told why nothing is listed', async () => {
    const page = await browser.newPage();
    await signIn(page, t.gateway.httpUrl, READER);
    await page.goto(`${t.gateway.httpUrl}/#/audit`);
    await page
      .getByRole('alert')
      .filter({ hasText: /Could not load the audit log\. Permission denied/ })
      .waitFor({ timeout: 20_000 });
    assert.equal(await page.locator('tr[data-audit]').count(), 0);
    await page.close();
  });
});
