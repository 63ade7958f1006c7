/**
 * The fleet at a glance (issue 39) in a real browser (Debian chromium via playwright-core) over a test gateway whose
 * 300 accounts come from simulated agents (testkit/simulated-agents.ts: a real AgentService.Connect stream per
 * account, as the benchmarks' swarm opens them) spread over three zones: a few send Deployments whose status the
 * gateway's rules read as Degraded, Progressing, Paused or Healthy; one agent leaves (its account goes stale); a
 * dynamic account no agent takes becomes FAILED; one account gets a second, standby stream. The overview shows a tile
 * per account under its zone's heading with the counts, filled and marked as the fleet and health summaries say;
 * focusing or hovering a tile names it with its counts (placed through the CSSOM, which the strict CSP allows);
 * the arrows move the one tab stop of a zone, Enter opens the account; the filter box narrows the tiles; while the page
 * has lost the gateway (a TCP proxy cut) no tile reads active. At 1280 and
 * 390 px, light and dark, axe-core finds no serious violation and the page does not scroll sideways. Then 4,700 more
 * accounts (rows written straight into the table: no streams needed for a layout) show that 5,000 tiles fit in less
 * than two 900 px screens at 1280 px. Screenshots go to test-output/dashboard-tiles/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { startSimulatedAgent, startSimulatedAgents, type SimulatedAgent } from '../../testkit/simulated-agents.js';
import { startTcpProxy } from '../../testkit/tcp-proxy.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';

const WAIT = { timeout: 30_000 };
const ZONES = ['eu-west', 'us-east', 'ap-south'] as const;
const ACCOUNTS = 300;
const nameOf = (k: number) => `acct-${String(k).padStart(3, '0')}`;
const zoneOf = (k: number) => ZONES[k % ZONES.length]!;
/** Accounts with a workload of that health (every tenth account has a Healthy Deployment too). */
const DEGRADED = 7;
const PROGRESSING = 11;
const PAUSED = 17;
/** Its agent leaves: INACTIVE, still wanted. */
const STALE = 299;
/** A second stream of the same identity stands by for it. */
const STANDBY = 5;
/** A dynamic account in ap-south that no agent takes. */
const FAILED = 'acct-failed';
const TOTAL = ACCOUNTS + 1;

type Health = 'healthy' | 'progressing' | 'degraded' | 'paused';

/** A Deployment whose status the gateway's rules (src/gateway/status/workload-rules.ts) read as `health`. */
function deployment(account: string, name: string, health: Health): Record<string, unknown> {
  const ready = health === 'progressing' ? 1 : 2;
  const conditions: Record<string, string>[] = [{ type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' }];
  if (health === 'degraded') conditions.push({ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' });
  if (health === 'paused') conditions.push({ type: 'Progressing', status: 'Unknown', reason: 'DeploymentPaused' });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'default', uid: `${account}-${name}`, resourceVersion: '1', generation: 1 },
    spec: { replicas: 2, paused: health === 'paused' || undefined, selector: { matchLabels: { app: name } } },
    status: { observedGeneration: 1, replicas: 2, updatedReplicas: ready, readyReplicas: ready, availableReplicas: ready, conditions },
  };
}

/** The workloads each seeded account sends. */
function workloadsOf(k: number): Health[] {
  const list: Health[] = k % 10 === 0 ? ['healthy'] : [];
  if (k === DEGRADED) list.push('healthy', 'degraded');
  if (k === PROGRESSING) list.push('progressing');
  if (k === PAUSED) list.push('paused');
  return list;
}

/** What each zone's heading must count. */
function expectedZone(zone: string) {
  const ks = Array.from({ length: ACCOUNTS }, (_, k) => k).filter((k) => zoneOf(k) === zone);
  const worst = (k: number) => (['degraded', 'progressing', 'paused', 'healthy'] as const).find((h) => workloadsOf(k).includes(h));
  return {
    accounts: ks.length + (zone === 'ap-south' ? 1 : 0),
    healthy: ks.filter((k) => worst(k) === 'healthy').length,
    degraded: ks.filter((k) => worst(k) === 'degraded').length,
    stale: ks.filter((k) => k === STALE).length,
    failed: zone === 'ap-south' ? 1 : 0,
  };
}

/** Counts the page shows in a zone's heading (`accounts`) and counts list (the rest); 0 when not listed. */
async function zoneCounts(page: Page, zone: string) {
  const section = page.locator(`.zone-tiles[data-zone="${zone}"]`);
  const count = async (key: string) => {
    const item = section.locator(`li[data-count="${key}"] .count`);
    return (await item.count()) === 0 ? 0 : Number((await item.innerText()).replace(/\D/g, ''));
  };
  const total = (await section.locator('[data-count="accounts"]').innerText()).trim();
  return {
    accounts: Number(/^(\d+) accounts$/.exec(total)?.[1] ?? Number.NaN),
    healthy: await count('healthy'),
    degraded: await count('degraded'),
    stale: await count('stale'),
    failed: await count('failed'),
  };
}

/** Waits until the overview shows `n` tiles (a hang bound only). */
async function waitForTiles(page: Page, n: number): Promise<void> {
  await eventually(`${n} tiles`, async () => (await page.locator('.fleet-tiles [data-tile]').count()) === n, { timeoutMs: 60_000 });
}

/** The page scrolls sideways when its content is wider than the window. */
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);

describe('the fleet at a glance: account tiles on the overview', { timeout: 300_000 }, () => {
  let t: TestGateway;
  let browser: Browser;
  let url: string;
  let agents: SimulatedAgent[] = [];
  const shots = testOutputDir('dashboard-tiles');

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    const [started, launched] = await Promise.allSettled([
      startTestGateway(process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite', { accounts: { activationTimeoutSeconds: 0.5 } }),
      launchChromium(),
    ]);
    if (started.status === 'fulfilled') t = started.value;
    if (launched.status === 'fulfilled') browser = launched.value;
    if (started.status === 'rejected') throw started.reason;
    if (launched.status === 'rejected') throw launched.reason;
    url = t.gateway.httpUrl;
    const grpcUrl = t.gateway.grpcUrl;
    agents = await startSimulatedAgents(ACCOUNTS, 20, (k) => ({ grpcUrl, id: `sim-${k}`, zone: zoneOf(k), accounts: [nameOf(k)] }));
    for (const [k, agent] of agents.entries()) {
      const workloads = workloadsOf(k);
      if (workloads.length > 0)
        await agent.add(
          nameOf(k),
          workloads.map((h, i) => deployment(nameOf(k), `web-${i}-${h}`, h)),
        );
    }
    const standby = await startSimulatedAgent({ grpcUrl, id: 'sim-standby', zone: zoneOf(STANDBY), accounts: [nameOf(STANDBY)] });
    agents.push(standby);
    assert.equal(standby.welcome.accounts[0]?.verdict, Verdict.STANDBY, 'the second stream stands by');
    await agents[STALE]!.close();
    const put = await fetch(`${url}/armory/accounts/dynamic`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ name: FAILED, kubeconfigFile: '/k', zoneId: 'ap-south' }]),
    });
    assert.equal(put.status, 200, await put.text());
  });
  after(async () => {
    await browser?.close();
    await Promise.allSettled(agents.map((a) => a.close()));
    await t?.close();
  });

  /** A page on the overview once every tile is drawn with what the seed set up. */
  async function overview(context: BrowserContext): Promise<Page> {
    const page = await context.newPage();
    await page.goto(`${url}/#/`);
    await waitForTiles(page, TOTAL);
    const tile = (name: string) => page.locator(`.fleet-tiles [data-tile="${name}"]`);
    await tile(nameOf(DEGRADED)).and(page.locator('[data-tile-health="degraded"]')).waitFor(WAIT);
    await tile(nameOf(STALE)).and(page.locator('[data-connection="stale"]')).waitFor(WAIT);
    await tile(FAILED).and(page.locator('[data-connection="failed"]')).waitFor(WAIT);
    return page;
  }

  test('a tile per account under its zone, the counts in the headings, each tile filled and marked as its account is', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await overview(context);
    const zones = await page.locator('.zone-tiles').evaluateAll((els) => els.map((e) => e.getAttribute('data-zone')));
    assert.deepEqual(zones, ['ap-south', 'eu-west', 'us-east'], 'zones by name');
    for (const zone of ZONES) {
      const inZone = await page.locator(`.zone-tiles[data-zone="${zone}"] [data-tile]`).count();
      assert.equal(inZone, expectedZone(zone).accounts, `${zone}: a tile per account`);
      await eventually(`${zone} heading counts`, async () => {
        assert.deepEqual(await zoneCounts(page, zone), expectedZone(zone));
        return true;
      });
    }
    assert.equal(await page.locator('.fleet-tiles').getAttribute('class'), 'fleet-tiles tiles-medium', '301 tiles: 20 px squares');
    const degraded = page.locator(`[data-tile="${nameOf(DEGRADED)}"]`);
    assert.match((await degraded.getAttribute('class')) ?? '', /\bh-degraded\b/, 'filled as Degraded');
    assert.equal(await degraded.getAttribute('aria-label'), `${nameOf(DEGRADED)}: Degraded, Active`);
    for (const [k, health] of [
      [PROGRESSING, 'progressing'],
      [PAUSED, 'paused'],
      [10, 'healthy'],
      [1, 'none'],
    ] as const) {
      assert.equal(await page.locator(`[data-tile="${nameOf(k)}"]`).getAttribute('data-tile-health'), health, nameOf(k));
    }
    assert.match((await page.locator(`[data-tile="${FAILED}"]`).getAttribute('class')) ?? '', /\bc-failed\b/);
    assert.equal(await page.locator(`[data-tile="${nameOf(STANDBY)}"]`).getAttribute('data-connection'), 'active');
    assert.equal(await page.locator('.tiles-count').innerText(), `${TOTAL} accounts`);
    // Below the pictures, the activity table lists only the accounts with the latest events, and says so.
    const activity = page.locator('section[aria-labelledby="activity-title"]');
    assert.equal(await activity.locator('tbody tr').count(), 25);
    await activity.getByText(`The 25 accounts with the latest events, of ${TOTAL}`).waitFor({ timeout: 30_000 });
    await context.close();
  });

  test('focus shows the tooltip with the name and counts; arrows move the one tab stop of a zone; Enter opens the account', async () => {
    // No bypassCSP here: the tooltip is placed under the page's real Content Security Policy.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await overview(context);
    const cspErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) cspErrors.push(m.text());
    });
    const tip = page.locator('#tile-tip');
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('data-tile') ?? null);

    await page.locator('#tiles-filter').focus();
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'acct-002', 'Tab enters the first zone on its first tile');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'acct-000', 'the next Tab leaves the zone: one tab stop per zone');
    for (const zone of ZONES) {
      assert.equal(await page.locator(`.zone-tiles[data-zone="${zone}"] [data-tile][tabindex="0"]`).count(), 1, zone);
    }

    const degraded = page.locator(`[data-tile="${nameOf(DEGRADED)}"]`);
    await degraded.focus();
    await tip.and(page.locator(`[data-tip-account="${nameOf(DEGRADED)}"]`)).waitFor(WAIT);
    const text = await tip.innerText();
    const parts = [
      nameOf(DEGRADED),
      'Zone us-east · ACTIVE, active: cached by agent sim-7',
      'Worst health: Degraded',
      'Healthy 1',
      'Degraded 1',
      'Progressing 0',
    ];
    for (const part of parts) {
      assert.ok(text.includes(part), `the tooltip says ${part}: ${text}`);
    }
    const tileBox = (await degraded.boundingBox())!;
    const tipBox = (await tip.boundingBox())!;
    assert.ok(
      tipBox.y >= tileBox.y + tileBox.height || tipBox.y + tipBox.height <= tileBox.y,
      'the tooltip is beside the tile, not over it',
    );
    assert.ok(Math.abs(tipBox.x - tileBox.x) < 400, `the tooltip is next to its tile (${tipBox.x} vs ${tileBox.x})`);
    await page.screenshot({ path: join(shots, 'tooltip-1280-light.png') });

    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(), 'acct-010', 'ArrowRight: the next tile of the zone');
    await tip.and(page.locator('[data-tip-account="acct-010"]')).waitFor(WAIT);
    assert.equal(await page.locator('[data-tile="acct-010"]').getAttribute('tabindex'), '0', 'the tab stop moved');
    assert.equal(await degraded.getAttribute('tabindex'), '-1');
    const before = (await page.locator('[data-tile="acct-010"]').boundingBox())!;
    await page.keyboard.press('ArrowDown');
    const below = await focused();
    const after = (await page.locator(`[data-tile="${below}"]`).boundingBox())!;
    assert.ok(Math.abs(after.x - before.x) < 1 && after.y > before.y, `ArrowDown: the tile under it (${below})`);
    await page.keyboard.press('ArrowUp');
    assert.equal(await focused(), 'acct-010');
    await page.keyboard.press('ArrowLeft');
    assert.equal(await focused(), nameOf(DEGRADED));

    await page.locator(`[data-tile="${nameOf(PROGRESSING)}"]`).hover();
    await tip.and(page.locator(`[data-tip-account="${nameOf(PROGRESSING)}"]`)).waitFor(WAIT);
    assert.ok((await tip.innerText()).includes('Progressing 1'), 'hovering names the tile under the pointer');
    await page.mouse.move(5, 5);
    await tip.and(page.locator(`[data-tip-account="${nameOf(DEGRADED)}"]`)).waitFor(WAIT);
    await page.keyboard.press('Escape');
    await tip.waitFor({ state: 'hidden', ...WAIT });

    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Account ${nameOf(DEGRADED)}` }).waitFor(WAIT);
    assert.equal(new URL(page.url()).hash, `#/accounts/${nameOf(DEGRADED)}`);
    await page.goBack();
    await waitForTiles(page, TOTAL);
    await page.locator(`[data-tile="${nameOf(STANDBY)}"]`).hover();
    await tip.and(page.locator(`[data-tip-account="${nameOf(STANDBY)}"]`)).waitFor(WAIT);
    assert.ok((await tip.innerText()).includes('active: cached by agent sim-5, 1 standby agent'), 'the standby stream is named');
    assert.deepEqual(cspErrors, [], 'nothing broke the Content Security Policy');
    await context.close();
  });

  test('the filter box narrows the tiles and counts the matches', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await overview(context);
    const filter = page.locator('#tiles-filter');
    const shown = () => page.locator('.fleet-tiles [data-tile]').evaluateAll((els) => els.map((e) => e.getAttribute('data-tile')));
    const narrowTo = async (text: string, names: string[] | number) => {
      await filter.fill(text);
      const n = typeof names === 'number' ? names : names.length;
      await page
        .locator('.tiles-count')
        .and(page.getByText(`${n} of ${TOTAL} accounts match`))
        .waitFor(WAIT);
      if (typeof names !== 'number') assert.deepEqual((await shown()).sort(), [...names].sort(), text);
      else assert.equal((await shown()).length, names, text);
    };
    await narrowTo('health:degraded', [nameOf(DEGRADED)]);
    assert.equal(await page.locator('.fleet-tiles').getAttribute('class'), 'fleet-tiles tiles-large', 'a few tiles: named cards');
    assert.equal(await page.locator(`[data-tile="${nameOf(DEGRADED)}"] .tile-name`).innerText(), nameOf(DEGRADED));
    await page.locator('.fleet-tiles').screenshot({ path: join(shots, 'filter-degraded.png') });
    await narrowTo(
      'acct-29',
      Array.from({ length: 10 }, (_, i) => `acct-29${i}`),
    );
    await narrowTo('state:stale', [nameOf(STALE)]);
    await narrowTo('state:failed', [FAILED]);
    await narrowTo('ZONE:eu state:active', expectedZone('eu-west').accounts);
    await narrowTo('health:progressing zone:ap', [nameOf(PROGRESSING)]);
    await filter.fill('health:bad');
    await page.getByText('Nothing can match health:bad.').waitFor(WAIT);
    await page.getByText('No account matches the filter.').waitFor(WAIT);
    await filter.fill('');
    await page
      .locator('.tiles-count')
      .and(page.getByText(`${TOTAL} accounts`, { exact: true }))
      .waitFor(WAIT);
    await context.close();
  });

  test('while the page has lost the gateway no tile claims a connection; failed stays failed; all is back when it returns', async () => {
    const proxy = await startTcpProxy(Number(new URL(url).port), '127.0.0.1', { capture: false });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await context.newPage();
      await page.goto(`http://${proxy.address}/#/`);
      await waitForTiles(page, TOTAL);
      const connection = (name: string) => page.locator(`[data-tile="${name}"]`).getAttribute('data-connection');
      await page.locator(`[data-tile="${nameOf(1)}"][data-connection="active"]`).waitFor(WAIT);
      await page.locator(`[data-tile="${FAILED}"][data-connection="failed"]`).waitFor(WAIT);
      proxy.blackhole(true);
      proxy.cutAll();
      try {
        await page.getByRole('region', { name: /^Stale data, from / }).waitFor(WAIT);
        await page.locator(`[data-tile="${nameOf(1)}"][data-connection="stale"]`).waitFor(WAIT);
        assert.equal(await page.locator('.fleet-tiles [data-connection="active"]').count(), 0, 'no tile reads active');
        assert.equal(await connection(FAILED), 'failed');
        await page.locator('.fleet-tiles').screenshot({ path: join(shots, 'tiles-page-stale.png') });
      } finally {
        proxy.blackhole(false);
      }
      await page.locator(`[data-tile="${nameOf(1)}"][data-connection="active"]`).waitFor(WAIT);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  test('at 1280 and 390 px, light and dark: no serious axe violation in the tiles (the whole page once), no sideways scroll', async () => {
    for (const colorScheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        // bypassCSP: the page's CSP forbids the injected axe-core script.
        const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, isMobile: width < 500, bypassCSP: true });
        const page = await overview(context);
        assert.equal(await scrollsSideways(page), false, `${width} px ${colorScheme}: the page scrolls sideways`);
        // The whole overview once; the tiles' section in the other three (axe on the whole long page takes seconds).
        const within = width === 1280 && colorScheme === 'light' ? undefined : '.fleet-tiles';
        assert.deepEqual(await seriousAxeViolations(page, within), [], `${width} px ${colorScheme}`);
        await page.locator('.fleet-tiles').screenshot({ path: join(shots, `tiles-${width}-${colorScheme}.png`) });
        await context.close();
      }
    }
  });

  test('5,000 tiles fit in less than two screens at 1280 px', async () => {
    const more = 5000 - TOTAL;
    // Rows straight into the table: the layout needs accounts, not streams (the 300 above prove the data path).
    await t.query(`insert into accounts (name, state, desired_state, zone_id)
      select 'bulk-' || lpad(g::text, 4, '0'),
        case when g % 97 = 0 then 'FAILED' when g % 13 = 0 then 'INACTIVE' else 'ACTIVE' end,
        case when g % 29 = 0 then 'INACTIVE' else 'ACTIVE' end,
        (array['eu-west', 'us-east', 'ap-south', ''])[1 + g % 4]
      from generate_series(1, ${more}) g`);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${url}/#/`);
    await waitForTiles(page, 5000);
    const section = page.locator('.fleet-tiles');
    assert.equal(await section.getAttribute('class'), 'fleet-tiles tiles-tiny', '8 px squares');
    assert.equal(await page.locator('.zone-tiles').last().getAttribute('data-zone'), '', '"No zone" comes last');
    assert.match(await page.locator('.zone-tiles').last().locator('h3').innerText(), /^No zone /);
    assert.equal(await scrollsSideways(page), false, 'the page scrolls sideways');
    const height = (await section.boundingBox())!.height;
    assert.ok(height < 2 * 900, `5,000 tiles take ${Math.round(height)} px at 1280 px: more than two screens`);
    const first = page.locator('.zone-tiles').first().locator('[data-tile]').first();
    await first.focus();
    const from = (await first.boundingBox())!;
    await page.keyboard.press('ArrowDown');
    const to = (await page.locator(':focus').boundingBox())!;
    assert.ok(Math.abs(to.x - from.x) < 1 && to.y > from.y, 'ArrowDown moves to the tile under it at 8 px too');
    // The window, not the element: the rest of the overview (a row per account below) makes element shots slow.
    await page.screenshot({ path: join(shots, 'tiles-5000-1280-light.png') });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.screenshot({ path: join(shots, 'tiles-5000-1280-dark.png') });
    await context.close();
  });
});
