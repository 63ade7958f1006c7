/**
 * Workload health and the object page's relations as lists in a real browser (Debian chromium via playwright-core)
 * over a real stack (sandbox + gateway + agent): a Deployment's badge goes Healthy → Progressing (a template whose pods
 * never become ready) → Degraded (its progress deadline passes) → Healthy (the template is put back) on an objects
 * page and on its object page, both left open; the overview counts workloads per account as SummarizeHealth does;
 * the relations' list shows the ReplicaSets and their Pods with links that open their pages, a Pod's page shows its
 * owners, and a Service's page its Endpoints. Screenshots go to test-output/dashboard/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import type { Browser, Locator } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { NEVER_READY } from '../../src/sandbox/pod-controls.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { seriousAxeViolations, testOutputDir, startWithChromium } from './browser.js';

const WAIT = { timeout: 30_000 };
const APP = 'health-app';

function deployment(): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: APP, namespace: 'demo', labels: { app: APP } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: APP } },
      template: {
        metadata: { labels: { app: APP } },
        spec: { containers: [{ name: 'web', image: 'nginx:1.27-alpine', ports: [{ name: 'http', containerPort: 80 }] }] },
      },
    },
  };
}

describe('workload health and ownership in the dashboard', { timeout: 120_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let url: string;
  const shots = testOutputDir('dashboard');

  /** Changes the live Deployment in the sandbox (read and replace in one step: nothing can write in between). */
  const changeDeployment = (change: (spec: Record<string, any>) => void) => {
    const live = stack.sandbox.store.get('apps/v1', 'Deployment', 'demo', APP)!;
    const copy = structuredClone(live) as Record<string, any>;
    change(copy.spec);
    stack.sandbox.store.update(copy);
  };

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    await startWithChromium(startStack({ agents: [{}] }), (started, launched) => {
      stack = started!;
      browser = launched!;
    });
    url = stack.gateway.httpUrl;
    stack.sandbox.store.create(deployment());
    stack.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: APP, namespace: 'demo' },
      spec: { selector: { app: APP }, ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }] },
    });
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  test('a rollout changes the badges on an open objects page and object page', async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const list = await context.newPage();
    await list.goto(`${url}/#/objects?account=sandbox&kind=Deployment&namespace=demo`);
    const cell = list.locator(`tr[data-key="sandbox/Deployment/demo/${APP}"] td[data-col="health"]`);
    const page = await context.newPage();
    await page.goto(`${url}/#/objects/sandbox/Deployment/demo/${APP}`);
    const fact = page.locator('[data-fact="health"]');
    const sees = async (word: string, reason?: RegExp) => {
      await cell.locator(`[data-health="${word}"]`).waitFor(WAIT);
      await fact.locator(`[data-health="${word}"]`).waitFor(WAIT);
      if (reason) {
        await fact.locator('.health-reason').filter({ hasText: reason }).waitFor(WAIT);
        assert.match((await cell.locator('.badge').getAttribute('title')) ?? '', reason, 'the table gives the reason as a tooltip');
      }
    };

    await sees('Healthy');
    await list.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
    await page.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));

    changeDeployment((spec) => {
      spec.template.metadata.annotations = { [NEVER_READY]: 'true' };
    });
    await sees('Progressing', /^Waiting for /);
    await page.screenshot({ path: join(shots, 'health-progressing.png'), fullPage: true });

    changeDeployment((spec) => {
      spec.progressDeadlineSeconds = 1;
    });
    await sees('Degraded', /Deployment exceeded its progress deadline/);
    await list.screenshot({ path: join(shots, 'health-objects-degraded.png'), fullPage: true });

    changeDeployment((spec) => {
      delete spec.template.metadata.annotations;
    });
    await sees('Healthy', /^Stable$/);
    for (const p of [list, page]) {
      assert.equal(await p.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded), true, 'no reload');
    }
    await context.close();
  });

  test('the relations list shows ReplicaSets and Pods with health, and its links open their pages', async () => {
    // bypassCSP: the page's CSP forbids the injected axe-core script.
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, bypassCSP: true });
    await page.goto(`${url}/#/objects/sandbox/Deployment/demo/${APP}`);
    // The relations' lists (the graph has its own test, dashboard-graph.test.ts); the choice holds on the next pages.
    await page.getByRole('button', { name: 'List' }).click();
    const dependents = page.getByRole('list', { name: 'Dependents' });
    const replicaSets = dependents.locator(':scope > li[data-node^="ReplicaSet/"]');
    // Two ReplicaSets from the rollouts above (the template put back reuses the first), the current one with 2 Pods.
    await eventually('2 ReplicaSets, one with 2 ready Pods', async () => {
      if ((await replicaSets.count()) !== 2) return false;
      const pods = dependents.locator('li[data-node^="Pod/"]');
      return (await pods.count()) === 2 && (await pods.locator('[data-health="Healthy"]').count()) === 2;
    });
    const current = replicaSets.filter({ has: page.locator('li[data-node^="Pod/"]') });
    await current.locator(':scope > .health [data-health="Healthy"]').waitFor(WAIT);
    assert.deepEqual(await seriousAxeViolations(page), []);
    await page.screenshot({ path: join(shots, 'health-ownership-tree.png'), fullPage: true });

    const podLink = current.locator('li[data-node^="Pod/"] a').first();
    const podName = ((await podLink.innerText()).split(' ')[1] ?? '').trim();
    await podLink.click();
    await page.getByRole('heading', { level: 1, name: `Pod demo/${podName}` }).waitFor(WAIT);
    const owners = page.getByRole('list', { name: 'Owned by' });
    await owners.getByRole('link', { name: `Deployment ${APP}` }).waitFor(WAIT);
    const rsLink = owners.getByRole('link', { name: /^ReplicaSet / });
    await rsLink.waitFor(WAIT);
    await page.locator('[data-fact="health"] [data-health="Healthy"]').waitFor(WAIT);
    await page.screenshot({ path: join(shots, 'health-pod-owners.png'), fullPage: true });

    await owners.getByRole('link', { name: `Deployment ${APP}` }).click();
    await page.getByRole('heading', { level: 1, name: `Deployment demo/${APP}` }).waitFor(WAIT);
    await page.close();
  });

  test("a Service's page lists its Endpoints", async () => {
    const page = await browser.newPage();
    await page.goto(`${url}/#/objects/sandbox/Service/demo/${APP}`);
    await page.getByRole('button', { name: 'List' }).click();
    const link = page.getByRole('list', { name: 'Dependents' }).getByRole('link', { name: `Endpoints ${APP}` });
    await link.waitFor(WAIT);
    assert.equal(await page.locator('[data-fact="health"]').count(), 0, 'no health claimed for a Service');
    await link.click();
    await page.getByRole('heading', { level: 1, name: `Endpoints demo/${APP}` }).waitFor(WAIT);
    await page.close();
  });

  test('the overview counts workloads per account as SummarizeHealth does', async () => {
    const client = createClient(ObjectService, createConnectTransport({ baseUrl: url, httpVersion: '1.1' }));
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, bypassCSP: true });
    await page.goto(`${url}/#/`);
    const row = page.getByRole('region', { name: 'Workload health' }).locator('tr[data-account="sandbox"]');
    await row.waitFor(WAIT);
    const cellOf = (row: Locator, col: string) => row.locator(`td[data-col="${col}"]`);
    const columns = ['healthy', 'progressing', 'degraded', 'paused', 'unknown'] as const;
    await eventually('the page shows what SummarizeHealth answers', async () => {
      const summary = (await client.summarizeHealth({ account: 'sandbox' })).accounts[0];
      if (!summary || summary.healthy === 0) return false;
      for (const c of columns) if ((await cellOf(row, c).innerText()).trim() !== String(summary[c])) return false;
      return true;
    });
    assert.deepEqual(await seriousAxeViolations(page), []);
    await page.screenshot({ path: join(shots, 'health-overview.png'), fullPage: true });
    await page.close();
  });
});
