/**
 * Operation timelines (issue 39) in a real browser (Debian chromium via playwright-core) on one stack (sandbox +
 * gateway + agent) serving the dashboard under its own CSP: the operation page draws a bar of the phases (store,
 * dispatch, agent, Kubernetes, result) in order, each as wide as its share of the durations the record's
 * timestamps give (read through the API), names them in a legend and marks the slowest — Kubernetes when the
 * sandbox answers slowly; every row of the history has its small bar with the phases as tooltip; an operation
 * waiting for an agent shows its dispatch phase running, growing as the page redraws it; axe-core finds no serious
 * violation at 1280 and 390 px, light and dark. Screenshots go to test-output/dashboard-timeline/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createOperationClient, type OperationClient } from '../../src/client/operation-client.js';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { type OperationRecord, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';
import { barMismatch, expectedPhases, longest, readBar } from './timeline-measure.js';

const WAIT = { timeout: 30_000 };
/** Latency the sandbox adds to every API call during the slow operation: its Kubernetes phase is at least this. */
const SLOW_KUBE_MS = 400;
const target = { kind: 'Deployment', namespace: 'demo', name: 'web' };

// A stack, eight browser contexts and sixteen axe runs: about 15 s alone, a minute beside a CPU hog on two cores.
describe('operation timelines on the operation page and in the history', { timeout: 180_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let ops: OperationClient;
  let url: string;
  let fast: OperationRecord;
  let slow: OperationRecord;
  let failed: OperationRecord;
  const shots = testOutputDir('dashboard-timeline');

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    stack = await startStack({
      agents: [{}],
      driver: process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite',
      // The last test's operation must stay PENDING while it is looked at, not fail for want of an agent.
      gateway: { operations: { agentWaitSeconds: 600 } },
    });
    url = `${stack.gateway.httpUrl}/`;
    ops = createOperationClient({ gatewayUrl: stack.gateway.httpUrl });
    fast = await ops.submitAndWait({ account: 'sandbox', spec: { case: 'scale', value: { ...target, replicas: 2 } } });
    failed = await ops.submitAndWait({ account: 'sandbox', spec: { case: 'delete', value: { ...target, name: 'no-such-deployment' } } });
    stack.sandbox.faults.setLatency(SLOW_KUBE_MS);
    try {
      slow = await ops.submitAndWait({ account: 'sandbox', spec: { case: 'scale', value: { ...target, replicas: 1 } } });
    } finally {
      stack.sandbox.faults.setLatency(0);
    }
    assert.equal(fast.state, OperationState.SUCCEEDED);
    assert.equal(failed.state, OperationState.FAILED);
    assert.equal(slow.state, OperationState.SUCCEEDED);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  /** Opens the operation's page and waits for its timeline. */
  async function openOperation(page: Page, id: string): Promise<void> {
    await page.goto(`${url}#/operations/${id}`);
    await page.getByRole('heading', { level: 1, name: `Operation ${id}` }).waitFor(WAIT);
    await page
      .locator(`.timeline[data-operation="${id}"] svg.timeline-full rect[data-phase]`)
      .first()
      .waitFor({ state: 'attached', ...WAIT });
  }

  test('the operation page draws the phases in order, proportional to the timestamps, the slowest marked', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    // The page runs under the gateway's CSP, which refuses inline styles: the widths must not need one.
    const refused: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/.test(m.text())) refused.push(m.text());
    });
    const served = await page.goto(url);
    assert.match(served!.headers()['content-security-policy'] ?? '', /style-src 'self';/);
    // Live before the hash changes: the router starts listening for hash changes only after its first render.
    await page.getByRole('status', { name: 'Live' }).waitFor(WAIT);
    for (const record of [fast, failed, slow]) {
      const expected = expectedPhases(record);
      await openOperation(page, record.id);
      const timing = page.getByRole('region', { name: 'Timing', exact: true });
      const bar = timing.getByRole('img', { name: /^Timeline: store / });
      const mismatch = barMismatch(await readBar(bar), expected);
      assert.equal(mismatch, undefined, `${record.id}: ${mismatch}`);

      // The legend names the same phases in the same order, each with its length, and marks the longest.
      const legend = timing.getByRole('list', { name: 'Phases' }).getByRole('listitem');
      const names = await legend.evaluateAll((items) => items.map((li) => li.getAttribute('data-phase')));
      assert.deepEqual(names, ['store', 'dispatch', 'agent', 'kubernetes', 'result']);
      assert.match((await legend.nth(3).textContent())!, /^Kubernetes \d/);
      const slowest = longest(expected);
      assert.ok(slowest, `${record.id}: some phase took time`);
      const marked = timing.locator('li.is-slowest');
      assert.equal(await marked.count(), 1);
      assert.equal(await marked.getAttribute('data-phase'), slowest);
      assert.match((await marked.textContent())!, / slowest$/);
      const label = (await bar.getAttribute('aria-label'))!;
      assert.match(label, new RegExp(`slowest: ${slowest === 'kubernetes' ? 'Kubernetes' : slowest}$`));
    }
    // The slow call's Kubernetes time is at least the latency the sandbox added, and it is the phase marked.
    const kubernetes = expectedPhases(slow).find((p) => p.name === 'kubernetes')!;
    assert.ok(kubernetes.ms >= SLOW_KUBE_MS, `Kubernetes ${kubernetes.ms} ms, under the ${SLOW_KUBE_MS} ms latency`);
    assert.equal(await page.locator('li.is-slowest').getAttribute('data-phase'), longest(expectedPhases(slow)));
    assert.deepEqual(refused, [], 'nothing refused by the CSP');
    await page.close();
  });

  test('every row of the history has its small bar, proportional, with the phases as tooltip', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}#/operations`);
    const rows = page.locator('tr[data-operation]');
    await eventually('3 operations listed', async () => (await rows.count()) === 3);
    for (const record of [fast, failed, slow]) {
      const cell = page.locator(`tr[data-operation="${record.id}"] [data-col="total"]`);
      const expected = expectedPhases(record);
      const mismatch = barMismatch(await readBar(cell.locator('svg.timeline-mini')), expected);
      assert.equal(mismatch, undefined, `${record.id}: ${mismatch}`);
      const tooltip = (await cell.locator('.timeline-cell').getAttribute('title'))!;
      assert.match(tooltip, /^store .+, dispatch .+, agent .+, Kubernetes .+, result .+; slowest: \w+$/);
      const bold = await cell.locator('.breakdown [data-phase]:has(strong)').getAttribute('data-phase');
      assert.equal(bold, longest(expected), `${record.id}: the slowest phase is bold in the row`);
    }
    await page.close();
  });

  test('no serious axe violation at 1280 and 390 px, light and dark; screenshots of each', async () => {
    const problems: string[] = [];
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        const context = await browser.newContext({ viewport: { width, height: 900 }, isMobile: width < 500, colorScheme, bypassCSP: true });
        const page = await context.newPage();
        await openOperation(page, slow.id);
        await page.getByRole('status', { name: 'Live' }).waitFor(WAIT);
        for (const v of await seriousAxeViolations(page))
          problems.push(`operation ${width} ${colorScheme}: ${v.id} ${v.help} at ${v.targets[0]}`);
        await page.screenshot({ path: join(shots, `operation-${width}-${colorScheme}.png`), fullPage: true });

        await page.goto(`${url}#/operations`);
        await page
          .locator('tr[data-operation] svg.timeline-mini')
          .nth(2)
          .waitFor({ state: 'attached', ...WAIT });
        for (const v of await seriousAxeViolations(page))
          problems.push(`history ${width} ${colorScheme}: ${v.id} ${v.help} at ${v.targets[0]}`);
        const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(scroll <= width, `${width} px ${colorScheme}: the history scrolls sideways (${scroll})`);
        await page.screenshot({ path: join(shots, `operations-${width}-${colorScheme}.png`), fullPage: true });
        await context.close();
      }
    }
    assert.deepEqual(problems, []);
  });

  test('an operation waiting for an agent shows its dispatch phase running, on its page and in its row', async () => {
    await stack.stopAgents();
    const pending = await ops.submit({
      account: 'sandbox',
      timeout: { seconds: 600n },
      spec: { case: 'scale', value: { ...target, replicas: 3 } },
    });
    assert.equal(pending.state, OperationState.PENDING);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await openOperation(page, pending.id);
    const bar = await readBar(page.locator('svg.timeline-full'));
    assert.deepEqual(
      bar.phases.map((p) => `${p.name}${p.running ? ' running' : ''}`),
      ['store', 'dispatch running'],
    );
    assert.match((await page.locator('li[data-phase="dispatch"]').textContent())!, /^dispatch \S+ \w+ so far( slowest)?$/);
    // Nothing changes in the fleet meanwhile: the page redraws the running phase by itself.
    const running = page.locator('svg.timeline-full rect[data-phase="dispatch"]');
    const first = Number(await running.getAttribute('data-ms'));
    await eventually('the running dispatch phase grows', async () => Number(await running.getAttribute('data-ms')) > first);
    await page.screenshot({ path: join(shots, 'operation-pending.png'), fullPage: true });

    await page.goto(`${url}#/operations`);
    const cell = page.locator(`tr[data-operation="${pending.id}"] [data-col="total"]`);
    await cell.locator('svg.timeline-mini rect.is-running[data-phase="dispatch"]').waitFor({ state: 'attached', ...WAIT });
    assert.match((await cell.locator('.timeline-cell').getAttribute('title'))!, /dispatch .+ so far/);
    await page.close();
  });
});
