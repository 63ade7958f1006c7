/**
 * The dashboard's time series in a real browser (Debian chromium via playwright-core) on a gateway whose history
 * writer runs at a 1 s step, fed by a simulated agent (a real AgentService.Connect stream, as the benchmarks' swarm
 * opens): the overview's charts draw, the events chart moves when churn starts (its canvas changes and its legend's
 * peak goes above zero) and settles back; the account's page charts its own events and its state; the day range
 * switches; at 1280 and 390 px, light and dark, axe-core finds no serious violation and the page never scrolls
 * sideways. Screenshots go to test-output/dashboard-charts/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { EventType, configMap, connectAgent, event, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';

const WAIT = { timeout: 30_000 };
const ACCOUNT = 'charts-acct';

/** The legend entry of one line of one chart. */
const legend = (page: Page, chart: string, line: string) => page.locator(`figure[data-chart="${chart}"] li[data-line="${line}"]`);

/** The pixels of a chart's canvas, as a data URL (changes whenever uPlot draws something else). */
const canvasOf = (page: Page, chart: string) =>
  page.locator(`figure[data-chart="${chart}"] canvas`).evaluate((c) => (c as HTMLCanvasElement).toDataURL());

describe('time series charts in the dashboard', { timeout: 180_000 }, () => {
  let t: TestGateway;
  let browser: Browser;
  let agent: TestAgentStream;
  let sequence = 1;
  const shots = testOutputDir('dashboard-charts');

  /** One batch of `n` changes of the agent's ConfigMaps, acknowledged (stored) before it returns. */
  const churn = async (n: number) => {
    const batch = Array.from({ length: n }, (_, i) => event(ACCOUNT, EventType.MODIFIED, configMap(`cm-${i}`, sequence * 100 + i)));
    agent.send({ case: 'events', value: { sequence: BigInt(sequence), events: batch } });
    await agent.waitForAck(sequence++);
  };

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    t = await startTestGateway('pglite', {
      id: 'gw-charts',
      web: { fleetPollSeconds: 0.2 },
      history: { stepSeconds: 1, accountStepSeconds: 2, dayStepSeconds: 4 },
    });
    agent = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(agent, 'agent-charts', [{ name: ACCOUNT }]);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    agent?.end();
    await t?.close();
  });

  test('the overview charts the fleet; the events chart moves when churn starts', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    await page.goto(`${t.gateway.httpUrl}/#/`);
    await page.locator('figure[data-chart="events"] canvas').waitFor(WAIT);
    for (const chart of ['events', 'operations', 'latency', 'states']) {
      await page.locator(`figure[data-chart="${chart}"]`).waitFor(WAIT);
    }
    // Quiet first: a few samples, no event yet.
    await eventually(
      'a few quiet samples charted',
      async () => Number(await page.locator('figure[data-chart="events"]').getAttribute('data-points')) >= 3,
    );
    assert.equal(await legend(page, 'events', 'events').getAttribute('data-peak'), '0', 'no event stored yet');
    const quiet = await canvasOf(page, 'events');
    await eventually('the connected agent and the ACTIVE account charted', async () => {
      const agents = await legend(page, 'states', 'connected agents').getAttribute('data-latest');
      const active = await legend(page, 'states', 'ACTIVE').getAttribute('data-latest');
      return agents === '1' && active === '1';
    });

    // Churn: batches of changes for a few seconds.
    const peak = await eventually(
      'the events chart shows the churn',
      async () => {
        await churn(20);
        const p = Number(await legend(page, 'events', 'events').getAttribute('data-peak'));
        return p > 0 ? p : undefined;
      },
      { intervalMs: 300 },
    );
    assert.ok(peak > 0);
    assert.notEqual(await canvasOf(page, 'events'), quiet, 'the canvas was drawn again with the churn');
    await assert.doesNotReject(
      legend(page, 'events', 'events')
        .getByText(/latest .*\/s, peak .*\/s/)
        .waitFor(WAIT),
    );
    await page.screenshot({ path: join(shots, 'overview-churn-1280-light.png'), fullPage: true });

    // It settles: once churn stops, the latest value goes back to 0 while the peak stays. The peak seen above may be
    // from a sample that held only the first batches (later samples can hold more of them), so it only never drops;
    // once the rate is 0 no change is in flight and a further sample leaves the peak as it is.
    await eventually(
      'the rate back to 0 after the churn',
      async () => (await legend(page, 'events', 'events').getAttribute('data-latest')) === '0',
    );
    const settled = Number(await legend(page, 'events', 'events').getAttribute('data-peak'));
    assert.ok(settled >= peak, `the peak never drops (${settled} after ${peak})`);
    const points = Number(await page.locator('figure[data-chart="events"]').getAttribute('data-points'));
    await eventually(
      'one more sample charted',
      async () => Number(await page.locator('figure[data-chart="events"]').getAttribute('data-points')) > points,
    );
    assert.equal(Number(await legend(page, 'events', 'events').getAttribute('data-peak')), settled, 'the peak stays');

    // The day range: other step, other caption.
    await page.getByRole('button', { name: 'Last day' }).click();
    assert.equal(await page.getByRole('button', { name: 'Last day' }).getAttribute('aria-pressed'), 'true');
    await page.locator('figure[data-chart="events"] figcaption', { hasText: 'last 24 hours, every 4 s' }).waitFor(WAIT);
    await context.close();
  });

  test("an account's page charts its own events and its state", async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    const page = await context.newPage();
    await page.goto(`${t.gateway.httpUrl}/#/accounts/${ACCOUNT}`);
    await page.getByRole('heading', { name: 'This account over time' }).waitFor(WAIT);
    await eventually('its events and ACTIVE state charted', async () => {
      await churn(5);
      const events = Number(await legend(page, 'events', 'events').getAttribute('data-peak'));
      const active = await legend(page, 'states', 'ACTIVE').getAttribute('data-latest');
      return events > 0 && active === '1';
    });
    assert.equal(await legend(page, 'states', 'connected agents').count(), 0, 'no agent count per account');
    await page.screenshot({ path: join(shots, 'account-1280-light.png'), fullPage: true });
    await context.close();
  });

  test('light and dark, 1280 and 390 px: no serious axe violation, no sideways scroll', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        const context = await browser.newContext({ viewport: { width, height: 900 }, isMobile: width < 500, colorScheme, bypassCSP: true });
        const page = await context.newPage();
        await page.goto(`${t.gateway.httpUrl}/#/`);
        await page.locator('figure[data-chart="states"] canvas').waitFor(WAIT);
        const scroll = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
        assert.ok(
          scroll.page <= scroll.viewport,
          `${colorScheme} ${width} px: the page scrolls sideways (${scroll.page} > ${scroll.viewport})`,
        );
        const canvasWidth = await page.locator('figure[data-chart="events"] canvas').evaluate((c) => c.getBoundingClientRect().width);
        assert.ok(canvasWidth <= width, `${colorScheme} ${width} px: the chart fits (${canvasWidth})`);
        await page.locator('section.history').screenshot({ path: join(shots, `charts-${width}-${colorScheme}.png`) });
        assert.deepEqual(await seriousAxeViolations(page), [], `${colorScheme} ${width} px`);
        await context.close();
      }
    }
  });
});
