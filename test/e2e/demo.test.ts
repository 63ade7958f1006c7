/**
 * `outpost demo` as a user runs it: one command (which builds the dashboard when needed), then the printed commands
 * work (curl, kubectl, and the outpost CLI: as printed, and with OUTPOST_GATEWAY instead of --gateway), the dashboard in a real browser (Debian chromium via playwright-core) lists the sandbox's
 * deployments and follows a scale submitted from the page without reloading, and Ctrl-C stops it cleanly.
 * Screenshots go to test-output/dashboard/.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Browser, Locator } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';
import { openLocalAgentStream } from '../../testkit/local-agent-stream.js';
import { connectAgent, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

/** Fills an input, or picks the option of a select. */
async function setField(field: Locator, value: string): Promise<void> {
  if ((await field.evaluate((el) => el.tagName)) === 'SELECT') await field.selectOption(value);
  else await field.fill(value);
}

describe('outpost demo', { timeout: 240_000 }, () => {
  let dir: string;
  let child: ChildProcess;
  let out = '';
  let exited: Promise<number | null>;
  let dashboard: string;
  let kubeconfig: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-demo-'));
    child = spawn(
      process.execPath,
      [bin, 'demo', '--dir', dir, '--sandbox-port', '0', '--http-port', '0', '--grpc-port', '0', '--agent-port', '0'],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout!.on('data', (b) => (out += b));
    child.stderr!.on('data', (b) => (out += b));
    exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 120_000; // the first run builds the dashboard
    while (!out.includes('Press Ctrl-C to stop.')) {
      assert.equal(child.exitCode, null, `demo exited early:\n${out}`);
      assert.ok(Date.now() < deadline, `demo did not start:\n${out}`);
      await sleep(100);
    }
    dashboard = /^\s*dashboard\s+(https?:\/\/\S+)/m.exec(out)?.[1] ?? assert.fail(`no dashboard URL printed:\n${out}`);
    kubeconfig = join(dir, 'kubeconfig');
  });

  after(async () => {
    child.kill('SIGINT');
    const code = await exited;
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `demo exit code after SIGINT:\n${out}`);
  });

  test('its output reads as sentences: the insecure-mode warning among them, no JSON log line', () => {
    assert.match(out, /^warning \(gateway\): INSECURE MODE: requests without credentials get every right/m);
    assert.doesNotMatch(out, /^\{"level"/m, out);
  });

  test('its printed commands work', { timeout: 60_000 }, async () => {
    const curlLine = out.split('\n').find((l) => l.trim().startsWith('curl '))!;
    const kubectlLine = out.split('\n').find((l) => l.trim().startsWith('kubectl '))!;
    assert.ok(curlLine && kubectlLine, out);
    const deadline = Date.now() + 50_000;
    // The printed curl command, run by a shell exactly as printed, lists the demo Deployment once the agent synced.
    let listed = '';
    while (!listed.includes('"name":"web"')) {
      assert.ok(Date.now() < deadline, `web never appeared in ListObjects: ${listed}`);
      listed = (await run('sh', ['-c', curlLine.trim()], { timeout: 30_000 })).stdout;
      await sleep(200);
    }
    // The printed kubectl command scales the Deployment in the sandbox (to 5).
    const scaled = await run('sh', ['-c', kubectlLine.trim()], { timeout: 20_000 });
    assert.match(scaled.stdout, /scaled/);
    // The printed outpost command lists the demo's Deployments without --account (the gateway has one account)…
    const outpostLine = out.split('\n').find((l) => / get deployments -n demo --gateway /.test(l))!;
    assert.ok(outpostLine, `no outpost CLI command printed:\n${out}`);
    assert.match(out, /export OUTPOST_GATEWAY=\S+ and --gateway can go; OUTPOST_ACCOUNT=NAME stands/);
    const listedByCli = await run('sh', ['-c', outpostLine.trim()], { timeout: 30_000 });
    assert.match(listedByCli.stdout, /^NAME\s+READY/m);
    assert.match(listedByCli.stdout, /^web\s/m);
    // …and the same with OUTPOST_GATEWAY in place of --gateway, as the line after it says.
    const [command, gateway] = outpostLine.trim().split(' --gateway ');
    const moved = await run('sh', ['-c', command!], { timeout: 30_000, env: { ...process.env, OUTPOST_GATEWAY: gateway } });
    assert.match(moved.stdout, /^web\s/m);
  });

  describe('the dashboard in chromium', () => {
    let browser: Browser;
    const shots = testOutputDir('dashboard');
    before(async () => {
      browser = await launchChromium();
    });
    after(async () => {
      await browser?.close();
    });

    test('lists the deployments, and a scale submitted from the page shows up on an open page without reload', {
      timeout: 90_000,
    }, async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const watcher = await context.newPage();
      await watcher.goto(`${dashboard}#/objects?account=sandbox&kind=Deployment`);
      const listed = JSON.parse(
        (await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'deployments', '-A', '-o', 'json'], { timeout: 20_000 })).stdout,
      ) as {
        items: { metadata: { namespace: string; name: string } }[];
      };
      assert.ok(listed.items.length >= 3, 'the sandbox has deployments');
      for (const d of listed.items) {
        await watcher.locator(`tr[data-key="sandbox/Deployment/${d.metadata.namespace}/${d.metadata.name}"]`).waitFor({ timeout: 30_000 });
      }
      const replicas = watcher.locator('tr[data-key="sandbox/Deployment/demo/web"] td[data-col="replicas"]');
      await replicas.filter({ hasText: /\/5$/ }).waitFor({ timeout: 30_000 }); // the kubectl scale of the previous test
      await watcher.evaluate(() => ((window as unknown as { notReloaded: boolean }).notReloaded = true));
      await watcher.screenshot({ path: join(shots, 'objects-before-scale.png'), fullPage: true });

      const operations = await context.newPage();
      await operations.goto(`${dashboard}#/operations`);
      const form = operations.getByRole('form', { name: 'Submit operation' });
      await form.getByLabel('Operation').selectOption('scale');
      await setField(form.getByLabel('Account'), 'sandbox');
      await setField(form.getByLabel('Kind'), 'Deployment');
      await form.getByLabel('Namespace').fill('demo');
      await form.getByLabel('Name', { exact: true }).fill('web');
      await form.getByLabel('Replicas').fill('2');
      await form.getByRole('button', { name: 'Submit' }).click();
      const result = operations.getByRole('status', { name: 'Operation result' });
      await result.filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: 30_000 });
      const id = /[0-9a-f]{8}-[0-9a-f-]{27}/.exec(await result.innerText())?.[0];
      assert.ok(id, 'the result names the operation');
      // The history below follows the fleet summary: the new operation appears in it without reloading.
      await operations.locator(`tr[data-operation="${id}"]`).filter({ hasText: 'SUCCEEDED' }).waitFor({ timeout: 30_000 });
      await operations.screenshot({ path: join(shots, 'operations.png'), fullPage: true });

      await replicas.filter({ hasText: /\/2$/ }).waitFor({ timeout: 30_000 });
      assert.equal(
        await watcher.evaluate(() => (window as unknown as { notReloaded?: boolean }).notReloaded),
        true,
        'the page was not reloaded',
      );
      const kube = JSON.parse(
        (await run('kubectl', ['--kubeconfig', kubeconfig, '-n', 'demo', 'get', 'deployment', 'web', '-o', 'json'], { timeout: 20_000 }))
          .stdout,
      );
      assert.equal(kube.spec.replicas, 2, 'the scale reached the cluster');
      await watcher.screenshot({ path: join(shots, 'objects-after-scale.png'), fullPage: true });

      await watcher.goto(`${dashboard}#/`);
      await watcher.getByRole('heading', { level: 1 }).waitFor();
      await watcher.getByText('demo-gateway').first().waitFor({ timeout: 30_000 });
      await watcher.screenshot({ path: join(shots, 'overview.png'), fullPage: true });
      await context.close();
    });

    test('objects open as YAML with Secret data already scrubbed', { timeout: 60_000 }, async () => {
      const page = await browser.newPage();
      await page.goto(`${dashboard}#/objects?account=sandbox&kind=Secret&namespace=demo`);
      const row = page.locator('tr[data-key="sandbox/Secret/demo/web-secret"]');
      await row.waitFor({ timeout: 30_000 });
      await row
        .getByRole('button', { name: 'web-secret' })
        .or(row.getByRole('link', { name: 'web-secret' }))
        .first()
        .click();
      const yaml = page.getByRole('region', { name: 'Object YAML' });
      await yaml.filter({ hasText: 'kind: Secret' }).waitFor({ timeout: 30_000 });
      const text = await yaml.innerText();
      assert.match(text, /name: web-secret/);
      assert.doesNotMatch(text, /s3cr3t|czNjcjN0/, 'no secret byte on the page');
      await page.close();
    });

    test('an account page shows its cluster and its kinds with object counts', { timeout: 60_000 }, async () => {
      const page = await browser.newPage();
      await page.goto(`${dashboard}#/accounts/sandbox`);
      const server = /server: (\S+)/.exec(readFileSync(kubeconfig, 'utf8'))![1]!;
      await page
        .getByRole('region', { name: 'Cluster', exact: true })
        .filter({ hasText: new URL(server).host })
        .waitFor({ timeout: 20_000 });
      const deployments = JSON.parse(
        (await run('kubectl', ['--kubeconfig', kubeconfig, 'get', 'deployments', '-A', '-o', 'json'], { timeout: 20_000 })).stdout,
      ).items.length;
      const row = page
        .getByRole('region', { name: 'Kinds', exact: true })
        .getByRole('row')
        .filter({ has: page.getByRole('rowheader', { name: 'Deployment', exact: true }) });
      await row.waitFor({ timeout: 20_000 });
      const deadline = Date.now() + 20_000;
      let cells: string[] = [];
      do {
        cells = (await row.innerText()).split('\t').map((c) => c.trim());
        if (cells[2] === String(deployments)) break;
        await sleep(200);
      } while (Date.now() < deadline);
      assert.deepEqual(cells, ['apps/v1', 'Deployment', String(deployments), 'Yes', String(deployments)]);
      await page.close();
    });

    test('keyboard, phone width and accessibility (axe-core: no serious violation)', { timeout: 90_000 }, async () => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      await page.goto(`${dashboard}#/`);
      await page.getByRole('navigation', { name: 'Main' }).waitFor();
      let reached = false;
      for (let i = 0; i < 25 && !reached; i++) {
        await page.keyboard.press('Tab');
        reached = await page.evaluate(
          () => document.activeElement?.textContent?.trim() === 'Operations' && document.activeElement.tagName === 'A',
        );
      }
      assert.ok(reached, 'the Operations link is reachable with Tab');
      await page.keyboard.press('Enter');
      await page.waitForFunction(() => location.hash.startsWith('#/operations'));

      const problems: string[] = [];
      for (const view of [
        '#/',
        '#/accounts',
        '#/accounts/sandbox',
        '#/agents',
        '#/objects?account=sandbox&kind=Deployment',
        '#/objects/sandbox/Deployment/demo/web',
        '#/operations',
      ]) {
        await page.goto(`${dashboard}${view}`);
        await page.getByRole('heading', { level: 1 }).waitFor();
        await sleep(1000); // the lists arrive after the heading
        for (const v of await seriousAxeViolations(page))
          problems.push(`${view}: ${v.id} (${v.impact}) ${v.help} at ${v.targets.slice(0, 3).join(', ')}`);
      }
      assert.deepEqual(problems, []);

      const phone = await browser.newContext({ viewport: { width: 375, height: 812 }, isMobile: true });
      const small = await phone.newPage();
      for (const [view, name] of [
        ['#/', 'phone-overview'],
        ['#/objects?account=sandbox&kind=Deployment', 'phone-objects'],
        ['#/operations', 'phone-operations'],
      ] as const) {
        await small.goto(`${dashboard}${view}`);
        await small.getByRole('heading', { level: 1 }).waitFor();
        await sleep(1000);
        const widths = await small.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
        assert.ok(widths.page <= widths.viewport, `${view} scrolls sideways at phone width (${widths.page} > ${widths.viewport})`);
        await small.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
      }
      await phone.close();
      await context.close();
    });
  });
});

describe('the dashboard on a gateway that requires a token', { timeout: 120_000 }, () => {
  const TOKEN = 'dashboard-reader-token-0123456789';
  const AGENT_TOKEN = 'dashboard-agents-token-0123456789';
  let gateway: TestGateway;
  let browser: Browser;
  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    gateway = await startTestGateway('pglite', {
      id: 'gw-dash-token',
      insecure: false,
      auth: {
        tokens: [
          { subject: 'viewer', token: TOKEN },
          { subject: 'agents', token: AGENT_TOKEN },
        ],
      },
      authorization: {
        rules: [
          { kind: 'token', subject: '^viewer$', roles: ['read'], accounts: [] },
          { kind: 'token', subject: '^agents$', roles: ['agent'], accounts: ['*'] },
        ],
      },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await gateway?.close();
  });

  test('the page asks for the token, refuses a wrong one, then shows the fleet; sign out asks again', async () => {
    const page = await browser.newPage();
    await page.goto(`${gateway.gateway.httpUrl}/`);
    const signIn = page.getByRole('form', { name: 'Sign in' });
    await signIn.waitFor({ timeout: 20_000 });
    await signIn.getByLabel('Access token').fill('not-the-token-at-all-0000');
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText(/token/i).first().waitFor();
    await signIn.waitFor({ timeout: 30_000 });
    await signIn.getByLabel('Access token').fill(TOKEN);
    await signIn.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('gw-dash-token').first().waitFor({ timeout: 20_000 });
    assert.equal(await signIn.count(), 0, 'the form is gone once signed in');
    await page.screenshot({ path: join(testOutputDir('dashboard'), 'signed-in.png'), fullPage: true });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await signIn.waitFor({ timeout: 30_000 });
    await page.close();
  });

  test('accounts show the standby agent and the refused claim of another cluster, with the reason', async () => {
    // Agent one caches "shared" (cluster X); agent two serves the same cluster: standby; agent three claims the name
    // from cluster Y: refused, and the refusal is visible.
    const streams = [
      openAgentStream(gateway.gateway.grpcUrl, { bearer: AGENT_TOKEN }),
      openAgentStream(gateway.gateway.grpcUrl, { bearer: AGENT_TOKEN }),
      openAgentStream(gateway.gateway.grpcUrl, { bearer: AGENT_TOKEN }),
    ];
    const clusterX = { name: 'shared', apiHost: 'https://cluster-x.example:6443', caFingerprint: 'aa'.repeat(32) };
    await connectAgent(streams[0]!, 'agent-one', [clusterX]);
    await connectAgent(streams[1]!, 'agent-two', [clusterX]);
    await connectAgent(streams[2]!, 'agent-three', [
      { name: 'shared', apiHost: 'https://cluster-y.example:6443', caFingerprint: 'bb'.repeat(32) },
    ]);
    try {
      const page = await browser.newPage();
      await page.goto(`${gateway.gateway.httpUrl}/`);
      const signIn = page.getByRole('form', { name: 'Sign in' });
      await signIn.getByLabel('Access token').fill(TOKEN);
      await signIn.getByRole('button', { name: 'Sign in' }).click();
      await page.goto(`${gateway.gateway.httpUrl}/#/accounts`);
      await page.locator('tr[data-account="shared"]').filter({ hasText: 'cluster-y.example' }).waitFor({ timeout: 20_000 });
      await page.goto(`${gateway.gateway.httpUrl}/#/accounts/shared`);
      await page.getByRole('region', { name: 'Standby agents', exact: true }).filter({ hasText: 'agent-two' }).waitFor({ timeout: 20_000 });
      const refused = page.getByRole('region', { name: 'Refused claim', exact: true });
      await refused.filter({ hasText: 'cluster-y.example' }).waitFor({ timeout: 20_000 });
      assert.match(await refused.innerText(), /agent-three/);
      await page.screenshot({ path: join(testOutputDir('dashboard'), 'account-refused.png'), fullPage: true });
      await page.close();
    } finally {
      for (const s of streams) s.end();
      await Promise.all(streams.map((s) => s.ended.catch(() => {})));
    }
  });

  test('the agents view, the accounts and the account page show the transport of each stream', async () => {
    // One stream over gRPC; one the session code serves as a WebSocket stream, on the gateway's database.
    const grpc = openAgentStream(gateway.gateway.grpcUrl, { bearer: AGENT_TOKEN });
    const ws = openLocalAgentStream({ database: gateway.gateway.database, gatewayId: gateway.gateway.id, transport: 'websocket' });
    await connectAgent(grpc, 'agent-grpc', [{ name: 'over-grpc' }]);
    await connectAgent(ws, 'agent-ws', [{ name: 'over-ws' }]);
    try {
      const page = await browser.newPage();
      await page.goto(`${gateway.gateway.httpUrl}/`);
      const signIn = page.getByRole('form', { name: 'Sign in' });
      await signIn.getByLabel('Access token').fill(TOKEN);
      await signIn.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
      await page.getByRole('heading', { level: 1, name: 'Agents' }).waitFor({ timeout: 20_000 });
      const agentRow = (id: string) => page.locator(`tr[data-agent="${id}"]`);
      await agentRow('agent-grpc').locator('[data-transport="grpc"]').filter({ hasText: 'gRPC' }).waitFor({ timeout: 20_000 });
      await agentRow('agent-ws').locator('[data-transport="websocket"]').filter({ hasText: 'WebSocket' }).waitFor({ timeout: 20_000 });
      assert.match(await agentRow('agent-ws').innerText(), /over-ws/, 'the row names the account the stream caches');
      await page.screenshot({ path: join(testOutputDir('dashboard'), 'agents.png'), fullPage: true });

      await page.goto(`${gateway.gateway.httpUrl}/#/accounts`);
      await page.locator('tr[data-account="over-ws"]').filter({ hasText: 'WebSocket' }).waitFor({ timeout: 20_000 });
      await page.locator('tr[data-account="over-grpc"]').filter({ hasText: 'gRPC' }).waitFor({ timeout: 20_000 });
      await page.goto(`${gateway.gateway.httpUrl}/#/accounts/over-ws`);
      await page.getByRole('region', { name: 'Cluster', exact: true }).filter({ hasText: 'WebSocket' }).waitFor({ timeout: 20_000 });

      // The WebSocket stream ends: no live stream caches its account any more, and the account says so.
      ws.end();
      await ws.ended;
      await page.goto(`${gateway.gateway.httpUrl}/#/accounts`);
      await page.locator('tr[data-account="over-grpc"]').filter({ hasText: 'gRPC' }).waitFor({ timeout: 20_000 });
      assert.equal(await page.locator('tr[data-account="over-ws"] [data-transport]').count(), 0);
      await page.close();
    } finally {
      grpc.end();
      ws.end();
      await Promise.all([grpc.ended, ws.ended].map((e) => e.catch(() => {})));
    }
  });
});
