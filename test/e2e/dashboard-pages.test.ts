/**
 * The object, operation and audit pages at 1280, 1440, 1920 and 390 px, and the details issue 34 (item 7) found on
 * them, in a real browser (Debian chromium via playwright-core) over one stack (sandbox + gateway + agent), one page
 * resized from width to width: each summary label sits on top of its own value, the page body never scrolls
 * sideways, tables fit or scroll inside their own box, the audit's `insecure:anonymous` wraps only after the colon;
 * the operations and audit tables page with Next/Previous in a stable order; the overview's recent operations show
 * a short id, the target and how long ago; Pods list kubectl's Status and Restarts and no empty Replicas column; the
 * account's kinds say what their counts count; a Running Pod that never becomes ready is not Healthy in the
 * relations' list. Screenshots of every page × width go to test-output/dashboard-pages/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { Browser, Page } from 'playwright-core';
import { createOperationClient } from '../../src/client/operation-client.js';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { AuditService } from '../../src/gen/outpost/api/v1/audit_service_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { testOutputDir, startWithChromium } from './browser.js';

const WAIT = { timeout: 30_000 };
const WIDTHS = [1280, 1440, 1920, 390] as const;
const LONG_NAME = 'a-deployment-that-does-not-exist-and-whose-name-is-long-enough-to-wrap';
/** A Deployment whose one Pod runs and never becomes ready (the sandbox's `sandbox/never-ready` image). */
const LAZY = 'lazy';

/** Where the page's layout goes wrong at the current width; empty when it does not. */
interface LayoutProblems {
  /** Summary labels whose value is not right under them (another grid cell). */
  facts: string[];
  /** The page body is wider than the viewport. */
  body: string[];
  /** Table boxes that stick out of the viewport, or whose content overflows without scrolling. */
  tables: string[];
}

/** Measures the summary lists, the body and every table box of the page shown. */
function layoutProblems(page: Page): Promise<LayoutProblems> {
  return page.evaluate(() => {
    const facts: string[] = [];
    for (const dt of document.querySelectorAll('dl.facts dt')) {
      const dd = dt.nextElementSibling;
      const label = dt.textContent ?? '';
      if (dd?.tagName !== 'DD') {
        facts.push(`${label}: no value after it`);
        continue;
      }
      const l = dt.getBoundingClientRect();
      const v = dd.getBoundingClientRect();
      // Same cell: the value starts where the label starts, right below it.
      if (Math.abs(v.left - l.left) > 1 || v.top < l.bottom - 1 || v.top - l.bottom > 16) {
        facts.push(`${label}: label at (${l.left}, ${l.top}–${l.bottom}), value at (${v.left}, ${v.top})`);
      }
    }
    const width = window.innerWidth;
    const body: string[] = [];
    const scrollWidth = document.documentElement.scrollWidth;
    if (scrollWidth > width) body.push(`the page is ${scrollWidth} px wide in a ${width} px window`);
    const tables: string[] = [];
    for (const box of document.querySelectorAll<HTMLElement>('section.table-scroll')) {
      const r = box.getBoundingClientRect();
      const name = box.getAttribute('aria-label');
      if (r.left < -1 || r.right > width + 1) tables.push(`${name}: box at [${r.left}, ${r.right}] outside the window`);
      const overflowX = getComputedStyle(box).overflowX;
      if (box.scrollWidth > box.clientWidth && overflowX !== 'auto' && overflowX !== 'scroll') {
        tables.push(`${name}: ${box.scrollWidth} px of table in ${box.clientWidth} px without scrolling`);
      }
    }
    return { facts, body, tables };
  });
}

/**
 * For every cell of the Who and Impersonated user columns reading `insecure:anonymous` or `outpost:anonymous`: how
 * many line boxes the word `anonymous` takes (1 = unbroken).
 */
function anonymousLines(page: Page): Promise<number[]> {
  return page.evaluate(() => {
    const headings = [...document.querySelectorAll('section[aria-label="Audit table"] thead th')].map((th) => th.textContent);
    const columns = ['Who', 'Impersonated user'].map((h) => headings.indexOf(h) + 1);
    const cells = columns.flatMap((n) => [...document.querySelectorAll(`tr[data-audit] > :nth-child(${n})`)]);
    return cells
      .filter((td) => td.textContent === 'insecure:anonymous' || td.textContent === 'outpost:anonymous')
      .map((td) => {
        const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
          const at = node.data.indexOf('anonymous');
          if (at < 0) continue;
          const range = document.createRange();
          range.setStart(node, at);
          range.setEnd(node, at + 'anonymous'.length);
          return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
        }
        return 0;
      });
  });
}

describe('the object, operation and audit pages at four widths, paging, and the details of issue 34', { timeout: 180_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let url: string;
  let lazyPod: string;
  let failedOp: string;
  let scaleOp: string;
  const shots = testOutputDir('dashboard-pages');
  const transport = () => createConnectTransport({ baseUrl: stack.gateway.httpUrl, httpVersion: '1.1' });

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    await startWithChromium(
      startStack({ agents: [{}], driver: process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite' }),
      (started, launched) => {
        stack = started!;
        browser = launched!;
      },
    );
    url = stack.gateway.httpUrl;

    stack.sandbox.store.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: LAZY, namespace: 'demo', labels: { app: LAZY } },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: LAZY } },
        template: { metadata: { labels: { app: LAZY } }, spec: { containers: [{ name: 'main', image: 'sandbox/never-ready' }] } },
      },
    });
    stack.sandbox.store.create({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'once', namespace: 'demo' },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'run', image: 'busybox:1' }] } } },
    });

    // Six operations (three pages of two): a scale, a failing delete with a long message, and four patches (reads are not stored).
    const ops = createOperationClient({ gatewayUrl: url });
    const scale = await ops.submitAndWait({
      account: 'sandbox',
      spec: { case: 'scale', value: { kind: 'Deployment', namespace: 'demo', name: 'web', replicas: 2 } },
    });
    assert.equal(scale.state, OperationState.SUCCEEDED);
    scaleOp = scale.id;
    const failed = await ops.submitAndWait({
      account: 'sandbox',
      spec: { case: 'delete', value: { kind: 'Deployment', namespace: 'demo', name: LONG_NAME } },
    });
    assert.equal(failed.state, OperationState.FAILED);
    failedOp = failed.id;
    for (const name of ['web', 'web-config', 'web', 'web-config']) {
      const kind = name === 'web' ? 'Deployment' : 'ConfigMap';
      const patch = '{"metadata":{"labels":{"paged":"yes"}}}';
      await ops.submitAndWait({
        account: 'sandbox',
        spec: { case: 'patch', value: { kind, namespace: 'demo', name, type: PatchType.MERGE, patch } },
      });
    }

    const objects = `${url}/outpost.api.v1.ObjectService/ListObjects`;
    lazyPod = await eventually('the never-ready pod running in the cache', async () => {
      const res = await fetch(objects, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: 'sandbox', kind: 'Pod', namespace: 'demo', labelSelector: `app=${LAZY}` }),
      });
      const body = (await res.json()) as { objects?: { name: string; object?: { status?: { phase?: string } } }[] };
      return body.objects?.find((o) => o.object?.status?.phase === 'Running')?.name;
    });
    await eventually('the job pod completed in the cache', async () => {
      const res = await fetch(objects, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: 'sandbox', kind: 'Pod', namespace: 'demo', labelSelector: 'job-name=once' }),
      });
      const body = (await res.json()) as { objects?: { object?: { status?: { phase?: string } } }[] };
      return body.objects?.some((o) => o.object?.status?.phase === 'Succeeded');
    });
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  test('object, operation and audit pages: facts in one cell, no sideways page, tables in their box, Who unbroken', async () => {
    const page = await browser.newPage({ viewport: { width: WIDTHS[0], height: 900 } });
    const views = [
      ['object', `#/objects/sandbox/Pod/demo/${lazyPod}`, page.locator('[data-fact="health"]')],
      ['operation', `#/operations/${failedOp}`, page.getByRole('region', { name: 'Result', exact: true }).filter({ hasText: LONG_NAME })],
      ['audit', '#/audit', page.locator('tr[data-audit]').first()],
    ] as const;
    const problems: string[] = [];
    for (const width of WIDTHS) {
      await page.setViewportSize({ width, height: 900 });
      for (const [name, hash, ready] of views) {
        await page.goto(`${url}/${hash}`);
        await ready.waitFor(WAIT);
        // The relations are drawn (the graph) once they are loaded: measure the page with them.
        if (name === 'object') await page.locator('[data-graph-node]').first().waitFor(WAIT);
        const found = await layoutProblems(page);
        for (const [what, list] of Object.entries(found)) for (const p of list) problems.push(`${name} at ${width} px, ${what}: ${p}`);
        if (name === 'object' || name === 'operation') {
          assert.ok((await page.locator('dl.facts dt').count()) >= 5, `${name} at ${width} px: the summary is there`);
        }
        if (name === 'audit') {
          const lines = await anonymousLines(page);
          assert.ok(lines.length > 0, 'the operations were audited as insecure:anonymous');
          for (const n of lines) if (n !== 1) problems.push(`audit at ${width} px: "anonymous" broken over ${n} lines`);
          if (width >= 1280) {
            const box = page.getByRole('region', { name: 'Audit table' });
            const { scroll, client } = await box.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
            if (scroll > client) problems.push(`audit at ${width} px: the table scrolls (${scroll} > ${client})`);
          }
        }
        await page.screenshot({ path: join(shots, `${name}-${width}.png`), fullPage: true });
      }
    }
    assert.deepEqual(problems, []);
    await page.close();
  });

  test('the operations and audit tables page with Next and Previous, in the order the API lists', async () => {
    const ops = createClient(OperationService, transport());
    const all = (await ops.listOperations({ pageSize: 500 })).operations.map((o) => o.id);
    const audit = createClient(AuditService, transport());
    // Operations only: the object pages above followed pod logs, whose kube entries may still be on their way.
    const entries = (await audit.listAuditEvents({ kind: 'operation', pageSize: 500 })).events.map((e) => String(e.id));
    assert.ok(all.length >= 6 && entries.length >= 6, `${all.length} operations, ${entries.length} audit entries`);

    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    for (const [hash, rowAttr, pager, expected] of [
      ['#/operations?size=2', 'data-operation', 'Operations pages', all],
      ['#/audit?kind=operation&size=2', 'data-audit', 'Audit pages', entries],
    ] as const) {
      await page.goto(`${url}/${hash}`);
      const nav = page.getByRole('navigation', { name: pager });
      const next = nav.getByRole('button', { name: 'Next page' });
      const previous = nav.getByRole('button', { name: 'Previous page' });
      const rows = page.locator(`tr[${rowAttr}]`);
      const pageIds = async (n: number) => {
        await nav.getByText(`Page ${n}`, { exact: true }).waitFor(WAIT);
        await eventually(
          `page ${n} loaded`,
          async () =>
            // Loaded: while a page loads, the rows of the page before it stay (under the new page number).
            (await nav.getAttribute('aria-busy')) === 'false' &&
            (await rows.count()) > 0 &&
            (await next.isEnabled()) === n < Math.ceil(expected.length / 2),
        );
        return rows.evaluateAll((trs, attr) => trs.map((tr) => tr.getAttribute(attr)!), rowAttr);
      };
      const pages: string[][] = [await pageIds(1)];
      assert.equal(await previous.isDisabled(), true, 'no previous page on page 1');
      while (await next.isEnabled()) {
        await next.click();
        pages.push(await pageIds(pages.length + 1));
      }
      assert.deepEqual(pages.flat(), expected, `${hash}: the pages walk the whole list once, in its order`);
      assert.ok(pages.every((p) => p.length <= 2));
      for (let n = pages.length - 1; n >= 1; n--) {
        await previous.click();
        assert.deepEqual(await pageIds(n), pages[n - 1], `${hash}: Previous shows page ${n} again`);
      }
    }
    await page.screenshot({ path: join(shots, 'audit-paged.png'), fullPage: true });
    await page.close();
  });

  test("the overview's recent operations show a short id linking to the operation, the target and how long ago", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/#/`);
    const row = page.getByRole('region', { name: 'Recent operations table' }).locator(`tr[data-operation="${scaleOp}"]`);
    await row.locator('[data-col="target"]').filter({ hasText: 'Deployment/web in sandbox/demo' }).waitFor(WAIT);
    const link = row.getByRole('link', { name: `Operation ${scaleOp}` });
    assert.equal(await link.innerText(), scaleOp.slice(0, 8));
    assert.equal(await link.getAttribute('href'), `#/operations/${scaleOp}`);
    assert.match(await row.locator('[data-col="received"]').innerText(), /^\d+ (s|min) ago$/);
    await page.screenshot({ path: join(shots, 'overview.png'), fullPage: true });
    await link.click();
    await page.getByRole('heading', { level: 1, name: `Operation ${scaleOp}` }).waitFor(WAIT);
    await page.close();
  });

  test("Pods list kubectl's Status and Restarts and no Replicas column; Deployments keep Replicas", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const headers = () => page.locator('section[aria-label="Objects table"] thead th').allInnerTexts();
    await page.goto(`${url}/#/objects?account=sandbox&kind=Pod&namespace=demo`);
    const lazy = page.locator(`tr[data-key="sandbox/Pod/demo/${lazyPod}"]`);
    await lazy.waitFor(WAIT);
    assert.deepEqual(await headers(), ['Name', 'Namespace', 'Kind', 'Account', 'Health', 'Status', 'Restarts', 'Updated', 'Actions']);
    assert.equal(await lazy.locator('[data-col="status"]').innerText(), 'Running');
    assert.equal(await lazy.locator('[data-col="restarts"]').innerText(), '0');
    const job = page.locator('tr[data-key^="sandbox/Pod/demo/once-"]');
    await job
      .locator('[data-col="status"]')
      .filter({ hasText: /^Completed$/ })
      .waitFor(WAIT);
    await page.screenshot({ path: join(shots, 'pods.png'), fullPage: true });

    await page.goto(`${url}/#/objects?account=sandbox&kind=Deployment&namespace=demo`);
    await page.locator(`tr[data-key="sandbox/Deployment/demo/${LAZY}"] [data-col="replicas"]`).filter({ hasText: '0/1' }).waitFor(WAIT);
    assert.deepEqual(await headers(), ['Name', 'Namespace', 'Kind', 'Account', 'Health', 'Replicas', 'Updated', 'Actions']);
    await page.close();
  });

  test('a Running Pod that never becomes ready is not Healthy in the relations list or on its page', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/#/objects/sandbox/Deployment/demo/${LAZY}`);
    await page.getByRole('button', { name: 'List' }).click();
    const pod = page.getByRole('list', { name: 'Dependents' }).locator(`li[data-node="Pod/${lazyPod}"]`);
    const badge = pod.locator(':scope > .health [data-health]');
    await badge.waitFor(WAIT);
    assert.equal(await badge.getAttribute('data-health'), 'Progressing');
    assert.match((await badge.getAttribute('title')) ?? '', /^Containers not ready: main$/);
    await page.screenshot({ path: join(shots, 'ownership-not-ready.png'), fullPage: true });
    await pod.getByRole('link', { name: `Pod ${lazyPod}` }).click();
    await page.locator('[data-fact="health"] [data-health="Progressing"]').waitFor(WAIT);
    await page.locator('[data-fact="health"] .health-reason').filter({ hasText: 'Containers not ready: main' }).waitFor(WAIT);
    await page.close();
  });

  test("the account's kinds say what In cache and Last list count", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/#/accounts/sandbox`);
    const table = page.getByRole('region', { name: 'Kinds table' }).locator('table');
    await table.locator('tbody tr').first().waitFor(WAIT);
    const cached = table.locator('thead th', { hasText: 'In cache' });
    const listed = table.locator('thead th', { hasText: 'Last list' });
    assert.match((await cached.getAttribute('title')) ?? '', /gateway holds now/);
    assert.match((await listed.getAttribute('title')) ?? '', /last full list/);
    const note = page.locator(`[id="${await table.getAttribute('aria-describedby')}"]`);
    assert.match(await note.innerText(), /^In cache: .*gateway holds now.* Last list: .*last full list/s);
    await page.close();
  });
});
