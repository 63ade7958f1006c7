/**
 * The dashboard's layout and the details that got in the way (issue 24), in a real browser (Debian chromium via
 * playwright-core) on one stack (sandbox + gateway + agent; the browser reaches the gateway through a TCP proxy
 * the test can cut): the operations history's key columns fit their box at 1280 and 1920 px and stack on a phone;
 * the other tables do not scroll sideways at 1280; a copied object URL opens the same object and back/forward move
 * between views; the operation form refuses an empty name without sending anything; times carry their date; a cut
 * connection greys the data under a banner that goes when it returns; kubectl kind names work in the objects filter;
 * the dark scheme passes axe-core. Screenshots go to test-output/dashboard-layout/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { createOperationClient } from '../../src/client/operation-client.js';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { startTcpProxy, type TcpProxy } from '../../testkit/tcp-proxy.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';
import { measureOperations, measureScroll } from './table-fit.js';

const LONG_NAME = 'a-deployment-that-does-not-exist-and-whose-name-is-long-enough-to-wrap';
const WAIT = { timeout: 30_000 };

describe('dashboard layout, links, form checks, stale data and dark mode', { timeout: 120_000 }, () => {
  let stack: Stack;
  let proxy: TcpProxy;
  let browser: Browser;
  let url: string;
  const shots = testOutputDir('dashboard-layout');

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    // Postgres when there is one: the gateway then starts in about a second instead of PGlite's several.
    stack = await startStack({ agents: [{}], driver: process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite' });
    proxy = await startTcpProxy(Number(new URL(stack.gateway.httpUrl).port));
    url = `http://${proxy.address}/`;
    const ops = createOperationClient({ gatewayUrl: stack.gateway.httpUrl });
    const target = { kind: 'Deployment', namespace: 'demo', name: 'web' };
    const done = await Promise.all([
      ops.submitAndWait({ account: 'sandbox', spec: { case: 'scale', value: { ...target, replicas: 2 } } }),
      ops.submitAndWait({ account: 'sandbox', spec: { case: 'delete', value: { ...target, name: LONG_NAME } } }),
      ops.submitAndWait({
        account: 'sandbox',
        spec: {
          case: 'apply',
          value: { namespace: 'demo', manifests: 'apiVersion: example.com/v1\nkind: NoSuchKind\nmetadata: {name: x}\n' },
        },
      }),
    ]);
    assert.equal(done[0]!.state, OperationState.SUCCEEDED);
    assert.equal(done[1]!.state, OperationState.FAILED, 'deleting a missing object fails, with a long message');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await proxy?.close();
    await stack?.close();
  });

  test('the operations history fits at 1280 and 1920 px and stacks at 390 px; the other tables fit at 1280', async () => {
    for (const width of [1280, 1920, 390]) {
      const context = await browser.newContext({ viewport: { width, height: 900 }, isMobile: width < 500 });
      const page = await context.newPage();
      await page.goto(`${url}#/operations`);
      const rows = page.locator('tr[data-operation]');
      await eventually('3 operations listed', async () => (await rows.count()) === 3);
      await rows.filter({ hasText: LONG_NAME }).waitFor(WAIT);
      const fit = await measureOperations(page);
      assert.ok(fit.pageScrollWidth <= fit.viewport, `${width} px: the page scrolls sideways (${fit.pageScrollWidth} > ${fit.viewport})`);
      if (width >= 1280) {
        assert.deepEqual(fit.outside, [], `${width} px: key cells outside the table's box ${JSON.stringify(fit.box)}`);
        assert.ok(fit.box.scrollWidth <= fit.box.clientWidth, `${width} px: the table scrolls sideways ${JSON.stringify(fit.box)}`);
      } else {
        // Stacked: each row is a card whose cells are lines, one under the other, all inside the viewport.
        const row = rows.filter({ hasText: LONG_NAME });
        const id = (await row.locator('[data-col="id"]').boundingBox())!;
        const state = (await row.locator('[data-col="state"]').boundingBox())!;
        const result = (await row.locator('[data-col="result"]').boundingBox())!;
        assert.ok(state.y >= id.y + id.height - 1, 'the state is below the id');
        assert.ok(result.x + result.width <= width, 'the result fits the phone');
      }
      await page.screenshot({ path: join(shots, `operations-${width}.png`), fullPage: true });

      if (width === 1280) {
        for (const [view, label] of [
          ['#/objects?account=sandbox', 'Objects table'],
          ['#/accounts', 'Accounts table'],
          ['#/agents', 'Agents table'],
          ['#/audit', 'Audit table'],
        ] as const) {
          await page.goto(`${url}${view}`);
          const box = page.getByRole('region', { name: label });
          await box.locator('tbody tr').first().waitFor(WAIT);
          const { scroll, client, columns } = await measureScroll(box);
          assert.ok(scroll <= client, `${view} at 1280 px scrolls sideways (${scroll} > ${client}): ${columns.join(', ')}`);
        }
      }
      await context.close();
    }
  });

  test('times show their date, with the ISO instant as machine value; an operation opens on its own page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}#/operations`);
    const time = page.locator('tr[data-operation] [data-col="received"] time').first();
    await time.waitFor(WAIT);
    assert.match(await time.innerText(), /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    const iso = (await time.getAttribute('datetime'))!;
    assert.match(iso, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.match((await time.getAttribute('title'))!, new RegExp(`^${iso.replace(/\./g, '\\.')} \\(`));

    // The id links to the operation's page, which a fresh page opens from its URL; Back returns to the history.
    const row = page.locator('tr[data-operation]').filter({ hasText: LONG_NAME });
    const id = (await row.getAttribute('data-operation'))!;
    await row.getByRole('link', { name: `Operation ${id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Operation ${id}` }).waitFor(WAIT);
    assert.ok(page.url().endsWith(`#/operations/${id}`), page.url());
    await page
      .getByRole('region', { name: 'Result', exact: true })
      .filter({ hasText: `${LONG_NAME}" not found` })
      .waitFor(WAIT);
    const fresh = await browser.newPage();
    await fresh.goto(page.url());
    await fresh.getByRole('region', { name: 'Operation', exact: true }).filter({ hasText: 'FAILED' }).waitFor(WAIT);
    await fresh.close();
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Operations' }).waitFor(WAIT);
    await page.goto(`${url}#/operations/no-such-operation`);
    await page.getByText('There is no operation with this id.').waitFor(WAIT);
    await page.close();
  });

  test('a copied object URL opens the same object, and back/forward move between views', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}#/objects?account=sandbox&kind=Deployment`);
    const web = page.locator('tr[data-key="sandbox/Deployment/demo/web"]');

    // A row shortcut opens the prefilled form through the URL: Back closes it, Forward and a shared link reopen it.
    await web.getByRole('button', { name: 'Scale…' }).click();
    const panel = page.getByRole('region', { name: 'Operation on Deployment demo/web' });
    await panel.waitFor(WAIT);
    assert.match(page.url(), /&act=scale&on=sandbox%2FDeployment%2Fdemo%2Fweb&replicas=\d+$/);
    const formUrl = page.url();
    await page.goBack();
    await panel.waitFor({ state: 'detached', ...WAIT });
    await page.goForward();
    const name = panel.getByRole('form', { name: 'Submit operation' }).getByLabel('Name', { exact: true });
    await eventually('the form reopened, prefilled', async () => (await name.inputValue()) === 'web');
    const linked = await browser.newPage();
    await linked.goto(formUrl);
    const linkedForm = linked
      .getByRole('region', { name: 'Operation on Deployment demo/web' })
      .getByRole('form', { name: 'Submit operation' });
    assert.equal(await linkedForm.getByLabel('Name', { exact: true }).inputValue({ timeout: 30_000 }), 'web');
    assert.equal(await linkedForm.getByLabel('Operation').inputValue(), 'scale');
    await linked.close();
    await panel.getByRole('button', { name: 'Close' }).click();
    await panel.waitFor({ state: 'detached', ...WAIT });

    await web.getByRole('link', { name: 'web', exact: true }).click();
    const title = page.getByRole('heading', { level: 1, name: 'Deployment demo/web' });
    await title.waitFor(WAIT);
    const shared = page.url();

    const other = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const fresh = await other.newPage();
    await fresh.goto(shared);
    await fresh.getByRole('heading', { level: 1, name: 'Deployment demo/web' }).waitFor(WAIT);
    await fresh.getByRole('region', { name: 'Object YAML' }).filter({ hasText: 'name: web' }).waitFor(WAIT);
    await other.close();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Operations' }).click();
    await page.getByRole('heading', { level: 1, name: 'Operations' }).waitFor(WAIT);
    await page.goBack();
    await title.waitFor(WAIT);
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Objects' }).waitFor(WAIT);
    assert.match(page.url(), /#\/objects\?account=sandbox&kind=Deployment$/);
    await page.goForward();
    await title.waitFor(WAIT);
    await page.goForward();
    await page.getByRole('heading', { level: 1, name: 'Operations' }).waitFor(WAIT);
    await page.close();
  });

  test('the operation form offers the accounts and refuses empty fields without sending a request', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const page = await context.newPage();
    let submits = 0;
    page.on('request', (r) => {
      if (r.url().includes('OperationService/SubmitOperation')) submits++;
    });
    await page.goto(`${url}#/operations`);
    const form = page.getByRole('form', { name: 'Submit operation' });
    const account = form.getByLabel('Account');
    await account.locator('option[value="sandbox"]').waitFor({ state: 'attached', ...WAIT });
    assert.equal(await account.evaluate((el) => el.tagName), 'SELECT');
    await form.getByLabel('Operation').selectOption('scale');
    await form.getByRole('button', { name: 'Submit' }).click();
    // Nothing chosen: the account is refused first and gets focus; the empty name is refused too.
    await account.and(page.locator('[aria-invalid="true"]')).waitFor(WAIT);
    assert.equal(await account.evaluate((el) => el === document.activeElement), true, 'focus moves to the first invalid field');
    const name = form.getByLabel('Name', { exact: true });
    assert.equal(await name.getAttribute('aria-invalid'), 'true');
    const described = (await name.getAttribute('aria-describedby'))!;
    assert.match(await page.locator(`[id="${described}"]`).innerText(), /Enter the name of the object/);

    await account.selectOption('sandbox');
    await eventually('the account message goes once one is chosen', async () => (await account.getAttribute('aria-invalid')) === null);
    await form.getByRole('button', { name: 'Submit' }).click();
    await name.and(page.locator('[aria-invalid="true"]')).waitFor(WAIT);
    await page.screenshot({ path: join(shots, 'form-invalid.png'), fullPage: true });
    assert.equal(submits, 0, 'no request while the form is invalid');
    assert.deepEqual(await seriousAxeViolations(page), [], 'the messages and marked fields pass axe-core');

    // Filled in (with the kubectl short name of the kind), it is sent once and succeeds.
    await form.getByLabel('Kind').fill('deploy');
    await form.getByLabel('Namespace').fill('demo');
    await name.fill('web');
    await form.getByLabel('Replicas').fill('1');
    await form.getByRole('button', { name: 'Submit' }).click();
    await page.getByRole('status', { name: 'Operation result' }).filter({ hasText: 'SUCCEEDED' }).waitFor(WAIT);
    assert.equal(submits, 1);
    await context.close();
  });

  test('kind names, plurals and short names find their kind; an unknown name says so', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}#/objects?account=sandbox`);
    const form = page.getByRole('form', { name: 'Filter objects' });
    const kind = form.getByLabel('Kind');
    for (const [typed, expected] of [
      ['pod', 'Pod'],
      ['po', 'Pod'],
      ['pods', 'Pod'],
      ['deploy', 'Deployment'],
    ] as const) {
      await kind.fill(typed);
      await form.getByRole('button', { name: 'Show objects' }).click();
      await page.waitForURL(new RegExp(`kind=${expected}(&|$)`), WAIT);
      // The field shows the Kind it was read as (an unknown name would stay as typed, with a message).
      await eventually(`${typed} read as ${expected}`, async () => (await kind.inputValue()) === expected);
      await eventually(`${typed}: only ${expected} rows`, async () => {
        const keys = await page.locator('tr[data-key]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-key')!));
        return keys.length > 0 && keys.every((k) => k.startsWith(`sandbox/${expected}/`));
      });
    }
    const before = page.url();
    await kind.fill('gizmos');
    await form.getByRole('button', { name: 'Show objects' }).click();
    const message = page.getByText('Unknown kind “gizmos”');
    await message.waitFor(WAIT);
    assert.equal(await kind.getAttribute('aria-invalid'), 'true');
    assert.equal(await message.getAttribute('id'), await kind.getAttribute('aria-describedby'));
    assert.equal(page.url(), before, 'an unknown kind does not change the filter');
    await page.screenshot({ path: join(shots, 'kind-unknown.png') });
    await page.close();
  });

  test('a cut connection greys the data under a banner saying since when; it goes when the connection returns', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}#/operations`);
    await page.getByRole('status', { name: 'Live' }).waitFor(WAIT);
    await page.locator('tr[data-operation]').first().waitFor(WAIT);
    const banner = page
      .getByRole('alert')
      .filter({ hasText: /Connection to the gateway lost at \d{2}:\d{2}:\d{2}; the data shown is from then/ });
    const stale = page.getByRole('region', { name: /^Stale data, from \d{4}-\d{2}-\d{2} / });
    assert.equal(await banner.count(), 0);
    proxy.blackhole(true);
    proxy.cutAll();
    try {
      await banner.waitFor(WAIT);
      await stale.locator('tr[data-operation]').first().waitFor(WAIT);
      assert.equal(await stale.evaluate((el) => getComputedStyle(el).filter), 'grayscale(1)');
      await page.screenshot({ path: join(shots, 'stale.png'), fullPage: true });
    } finally {
      proxy.blackhole(false);
    }
    await page.getByRole('status', { name: 'Live' }).waitFor(WAIT);
    await banner.waitFor({ state: 'detached', ...WAIT });
    assert.equal(await stale.count(), 0);
    await page.close();
  });

  test('the dark scheme follows the system setting and passes axe-core', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true, colorScheme: 'dark' });
    const page = await context.newPage();
    const problems: string[] = [];
    for (const [view, ready, name] of [
      ['#/operations', 'tr[data-operation]', 'dark-operations'],
      ['#/objects/sandbox/Deployment/demo/web', 'pre', 'dark-object'],
    ] as const) {
      await page.goto(`${url}${view}`);
      await page.locator(ready).first().waitFor(WAIT);
      await page.getByRole('status', { name: 'Live' }).waitFor(WAIT);
      for (const v of await seriousAxeViolations(page))
        problems.push(`${view}: ${v.id} (${v.impact}) ${v.help} at ${v.targets.slice(0, 3).join(', ')}`);
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    }
    assert.deepEqual(problems, []);
    assert.equal(await page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(17, 24, 39)', 'the page is dark');
    await context.close();
  });
});
