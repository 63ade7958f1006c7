/**
 * An object page's pod logs, events and rollout sections in a real browser (Debian chromium via playwright-core),
 * on one stack (sandbox + gateway with tokens + agent): a pod's log shows its lines and keeps receiving new ones
 * while followed, switching the container reads the other one, and a caller without the kube role is shown the
 * gateway's refusal; a Deployment's Events show ScalingReplicaSet after a scale; undo from the page rolls the
 * Deployment back in the cluster and shows the outcome; pause and resume flip spec.paused, and an undo while paused
 * shows the agent's refusal and changes nothing; a StatefulSet's revisions and a confirmed restart.
 * Screenshots go to test-output/dashboard/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import type { KubeObject } from '../../src/sandbox/types.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { launchChromium, seriousAxeViolations, testOutputDir } from './browser.js';

const ROOT = 'object-ops-root-token-0123456789';
const VIEWER = 'object-ops-viewer-token-0123456789';
const AGENT = 'object-ops-agent-token-0123456789';
const WAIT = { timeout: 30_000 };

function opsDeployment(image: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'ops', namespace: 'demo', labels: { app: 'ops' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'ops' } },
      template: {
        metadata: { labels: { app: 'ops' } },
        spec: {
          containers: [
            { name: 'main', image },
            { name: 'sidecar', image: 'sidecar:1' },
          ],
        },
      },
    },
  };
}

async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/`);
  const form = page.getByRole('form', { name: 'Sign in' });
  await form.getByLabel('Access token').fill(token);
  await form.getByRole('button', { name: 'Sign in' }).click();
  await form.waitFor({ state: 'detached', timeout: 20_000 });
}

describe('an object page: pod logs, events and rollouts', { timeout: 180_000, concurrency: false }, () => {
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let pod: string;
  const shots = testOutputDir('dashboard');
  const deployment = () => stack.sandbox.store.get('apps/v1', 'Deployment', 'demo', 'ops')!;
  const cached = async (kind: string, name: string) => {
    const res = await fetch(`${stack.gateway.httpUrl}/outpost.api.v1.ObjectService/GetObject`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${ROOT}` },
      body: JSON.stringify({ account: 'sandbox', kind, namespace: 'demo', name }),
    });
    return res.status === 200 ? ((await res.json()) as { object: { object: KubeObject } }).object.object : undefined;
  };

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    stack = await startStack({
      sandbox: { logFollowIntervalMs: 250 }, // a followed log gets a heartbeat line every 250 ms
      gateway: {
        insecure: false,
        auth: {
          tokens: [
            { subject: 'root', token: ROOT },
            { subject: 'viewer', token: VIEWER },
            { subject: 'agent', token: AGENT },
          ],
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
            { kind: 'token', subject: '^root$', roles: ['read', 'write', 'kube'], accounts: ['*'] },
            { kind: 'token', subject: '^viewer$', roles: ['read'], accounts: [] },
          ],
        },
      },
    });
    // the kube proxy impersonates `outpost:root`; this cluster lets that user do anything
    stack.sandbox.store.create({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'outpost-root' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'outpost:root' }],
    });
    // revision 1 (ops:v1), then revision 2 (ops:v2): the page can roll back to 1
    stack.sandbox.store.create(opsDeployment('ops:v1'));
    await eventually('revision 1', () => deployment().metadata.annotations?.['deployment.kubernetes.io/revision'] === '1' || undefined);
    const d = deployment();
    stack.sandbox.store.update({ ...d, spec: (opsDeployment('ops:v2') as { spec: unknown }).spec });
    await eventually('revision 2', () => deployment().metadata.annotations?.['deployment.kubernetes.io/revision'] === '2' || undefined);
    stack.sandbox.store.create({
      apiVersion: 'apps/v1',
      kind: 'StatefulSet',
      metadata: { name: 'ops-db', namespace: 'demo' },
      spec: {
        replicas: 1,
        serviceName: 'ops-db',
        selector: { matchLabels: { app: 'ops-db' } },
        template: { metadata: { labels: { app: 'ops-db' } }, spec: { containers: [{ name: 'db', image: 'db:1' }] } },
      },
    });
    // a pod with a 5,100-line log (more than the page keeps)
    const chatty = Array.from({ length: 5100 }, (_, i) => `line ${i + 1}`).join('\n');
    stack.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'chatty', namespace: 'demo', annotations: { 'sandbox.outpost.dev/log': chatty } },
      spec: { containers: [{ name: 'talk', image: 'talk:1' }] },
    });
    await stack.startAgent({
      accounts: [{}, { name: 'quiet', kinds: ['Deployment'] }], // quiet caches no Events
      config: { clouddriver: { auth: { token: AGENT } } },
    });
    await waitForAccounts(stack.gateway.httpUrl, ['sandbox', 'quiet'], { headers: { authorization: `Bearer ${ROOT}` } });
    pod = await eventually('a running ops pod in the cache', async () => {
      const running = stack.sandbox.store
        .list('v1', 'Pod', 'demo')
        .find(
          (p) => p.metadata.labels?.app === 'ops' && !p.metadata.deletionTimestamp && (p.status as { phase?: string })?.phase === 'Running',
        );
      if (!running) return undefined;
      const seen = await cached('Pod', running.metadata.name!);
      return (seen?.status as { phase?: string })?.phase === 'Running' ? running.metadata.name! : undefined;
    });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    page = await context.newPage();
    await signIn(page, stack.gateway.httpUrl, ROOT);
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  test("a pod's log shows its lines, receives new ones while followed, and follows the chosen container", async () => {
    await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/Pod/demo/${pod}`);
    const logs = page.getByRole('region', { name: 'Pod logs' });
    const main = logs.getByRole('log', { name: 'Log of container main' });
    await main.filter({ hasText: '[main] sandbox: starting container from image ops:v2' }).waitFor(WAIT);
    assert.match(await logs.getByRole('status', { name: 'Log stream' }).innerText(), /^Following/);
    // heartbeats are written while the log is followed: new lines arrive without a reload
    const before = await main.innerText();
    const beats = /heartbeat (\d+)/g;
    const highest = (text: string) => Math.max(0, ...[...text.matchAll(beats)].map((m) => Number(m[1])));
    await eventually('two more heartbeats', async () => highest(await main.innerText()) >= highest(before) + 2 || undefined);
    await page.screenshot({ path: join(shots, 'pod-logs.png'), fullPage: true });

    await logs.getByLabel('Container', { exact: true }).selectOption('sidecar');
    const sidecar = logs.getByRole('log', { name: 'Log of container sidecar' });
    await sidecar.filter({ hasText: '[sidecar] sandbox: starting container from image sidecar:1' }).waitFor(WAIT);
    await sidecar.filter({ hasText: '[sidecar] heartbeat' }).waitFor(WAIT);
    assert.doesNotMatch(await sidecar.innerText(), /\[main\]/);

    // not following: the log is read once and the stream says it ended
    await logs.getByLabel('Follow').uncheck();
    await logs
      .getByRole('status', { name: 'Log stream' })
      .filter({ hasText: /^End of log/ })
      .waitFor(WAIT);
    assert.deepEqual(await seriousAxeViolations(page), []);
  });

  test('the page keeps the last 5,000 lines of a longer log, and the tail length chooses where it starts', async () => {
    await eventually('chatty cached', () => cached('Pod', 'chatty'));
    await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/Pod/demo/chatty`);
    const logs = page.getByRole('region', { name: 'Pod logs' });
    const log = logs.getByRole('log', { name: 'Log of container talk' });
    await log.filter({ hasText: 'line 5100' }).waitFor(WAIT);
    assert.match(await log.innerText(), /^line 5001\n/, 'the last 100 lines');
    await logs.getByLabel('Tail').selectOption({ label: 'whole log' });
    const status = logs.getByRole('status', { name: 'Log stream' });
    await status.filter({ hasText: /5,000 lines \(older lines dropped beyond 5,000\)/ }).waitFor(WAIT);
    await log.filter({ hasText: 'line 5100' }).waitFor(WAIT); // the new stream has arrived in full
    const text = await log.innerText();
    assert.equal(text.split('\n').length, 5000);
    assert.match(text, /line 5100/);
    assert.doesNotMatch(text, /^line 1\n/);
  });

  test('a caller without the kube role sees the refusal instead of a log', async () => {
    const other = await browser.newContext();
    try {
      const viewer = await other.newPage();
      await signIn(viewer, stack.gateway.httpUrl, VIEWER);
      await viewer.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/Pod/demo/${pod}`);
      const status = viewer.getByRole('region', { name: 'Pod logs' }).getByRole('status', { name: 'Log stream' });
      await status.filter({ hasText: /^Refused \(HTTP 403\): .*lacks the role "kube" required for \/k8s\/sandbox/ }).waitFor(WAIT);
      assert.equal(await viewer.getByRole('log').innerText(), '', 'no log lines');
    } finally {
      await other.close();
    }
  });

  test("a Deployment's Events show ScalingReplicaSet after a scale, newest first", async () => {
    await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/Deployment/demo/ops`);
    const events = page.getByRole('region', { name: 'Events' });
    await events.locator('tr[data-event="ScalingReplicaSet"]').first().waitFor(WAIT);
    const d = deployment();
    stack.sandbox.store.update({ ...d, spec: { ...(d.spec as object), replicas: 3 } });
    const scaled = events.locator('tr[data-event="ScalingReplicaSet"]').filter({ hasText: /Scaled up replica set ops-\w+ to 3/ });
    await scaled.waitFor(WAIT);
    const first = await events.locator('tbody tr').first().innerText();
    assert.match(first, /ScalingReplicaSet[\s\S]*to 3/, 'the newest event is listed first');
    assert.match(await scaled.locator('time').innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  test('undo from the page rolls the Deployment back, and the outcome shows', async () => {
    await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/Deployment/demo/ops`);
    const rollout = page.getByRole('region', { name: 'Rollout' });
    await rollout.locator('tr[data-revision="2"]').filter({ hasText: 'current' }).waitFor(WAIT);
    await rollout.getByRole('button', { name: 'Roll back to revision 1' }).click();
    const confirm = rollout.getByRole('group', { name: 'Confirm rollout action' });
    assert.match(await confirm.innerText(), /Roll Deployment demo\/ops back to revision 1 \(ops:v1, sidecar:1\)\?/);
    await page.screenshot({ path: join(shots, 'rollout-confirm.png'), fullPage: true });
    await confirm.getByRole('button', { name: 'Roll back' }).click();
    const result = rollout.getByRole('status', { name: 'Rollout result' });
    await result.filter({ hasText: /SUCCEEDED/ }).waitFor(WAIT);
    assert.match(await result.innerText(), /rolled back from revision 2 to revision 1/);
    const containers = (deployment().spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers;
    assert.equal(containers[0]!.image, 'ops:v1');
    // revision 1 comes back as revision 3, and the page follows
    await rollout.locator('tr[data-revision="3"]').filter({ hasText: 'current' }).filter({ hasText: 'ops:v1' }).waitFor(WAIT);
    await page.screenshot({ path: join(shots, 'rollout-undone.png'), fullPage: true });
    assert.deepEqual(await seriousAxeViolations(page), []);
  });

  test('pause and resume flip spec.paused; an undo while paused is refused with the reason', async () => {
    const rollout = page.getByRole('region', { name: 'Rollout' });
    const result = rollout.getByRole('status', { name: 'Rollout result' });
    await rollout.getByRole('button', { name: 'Pause' }).click();
    await result.filter({ hasText: /SUCCEEDED.*paused/ }).waitFor(WAIT);
    assert.equal((deployment().spec as { paused?: boolean }).paused, true);
    // a paused Deployment cannot be rolled back: the agent's reason is shown and nothing changes
    await rollout.getByRole('button', { name: 'Roll back to revision 2' }).click();
    await rollout.getByRole('group', { name: 'Confirm rollout action' }).getByRole('button', { name: 'Roll back' }).click();
    await result.filter({ hasText: /FAILED.*cannot rollback a paused deployment/ }).waitFor(WAIT);
    const image = (deployment().spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image;
    assert.equal(image, 'ops:v1');
    await rollout.getByRole('button', { name: 'Resume' }).click({ timeout: 30_000 });
    await result.filter({ hasText: /SUCCEEDED.*resumed/ }).waitFor(WAIT);
    assert.notEqual((deployment().spec as { paused?: boolean }).paused, true);
    await rollout.getByRole('button', { name: 'Pause' }).waitFor(WAIT);
  });

  test('a StatefulSet page lists its ControllerRevisions; restart asks first, then runs', async () => {
    await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/StatefulSet/demo/ops-db`);
    const rollout = page.getByRole('region', { name: 'Rollout' });
    await rollout.locator('tr[data-revision="1"]').filter({ hasText: 'current' }).filter({ hasText: 'db:1' }).waitFor(WAIT);
    assert.equal(await rollout.getByRole('button', { name: 'Pause' }).count(), 0, 'pause is for Deployments only');
    await rollout.getByRole('button', { name: 'Restart' }).click();
    const confirm = rollout.getByRole('group', { name: 'Confirm rollout action' });
    assert.match(await confirm.innerText(), /Restart every pod of StatefulSet demo\/ops-db\?/);
    await confirm.getByRole('button', { name: 'Cancel' }).click();
    await confirm.waitFor({ state: 'detached', ...WAIT });
    const template = () => (stack.sandbox.store.get('apps/v1', 'StatefulSet', 'demo', 'ops-db')!.spec as { template: KubeObject }).template;
    assert.equal(template().metadata.annotations?.['kubectl.kubernetes.io/restartedAt'], undefined, 'cancel changed nothing');

    await rollout.getByRole('button', { name: 'Restart' }).click();
    await confirm.getByRole('button', { name: 'Restart' }).click();
    await rollout
      .getByRole('status', { name: 'Rollout result' })
      .filter({ hasText: /SUCCEEDED.*restarted/ })
      .waitFor(WAIT);
    assert.ok(template().metadata.annotations?.['kubectl.kubernetes.io/restartedAt'], 'the pod template is stamped');
    await rollout.locator('tr[data-revision="2"]').filter({ hasText: 'current' }).waitFor(WAIT);
  });

  test('an account that caches no Events says so', async () => {
    await eventually('ops cached in quiet', async () => {
      const res = await fetch(`${stack.gateway.httpUrl}/outpost.api.v1.ObjectService/GetObject`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${ROOT}` },
        body: JSON.stringify({ account: 'quiet', kind: 'Deployment', namespace: 'demo', name: 'ops' }),
      });
      return res.status === 200 || undefined;
    });
    await page.goto(`${stack.gateway.httpUrl}/#/objects/quiet/Deployment/demo/ops`);
    const events = page.getByRole('region', { name: 'Events' });
    await events.getByText('Account quiet caches no Events').waitFor(WAIT);
    assert.equal(await events.locator('tbody tr').count(), 0);
  });

  test('at phone width the pod and Deployment pages do not scroll sideways', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const [view, region, name] of [
      ['Pod/demo/chatty', 'Pod logs', 'phone-pod-logs'],
      ['Deployment/demo/ops', 'Rollout', 'phone-rollout'],
    ] as const) {
      await page.goto(`${stack.gateway.httpUrl}/#/objects/sandbox/${view}`);
      await page.getByRole('region', { name: region }).locator('tbody tr, pre').first().waitFor(WAIT);
      const widths = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, viewport: window.innerWidth }));
      assert.ok(widths.page <= widths.viewport, `${view} scrolls sideways at phone width (${widths.page} > ${widths.viewport})`);
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true });
    }
  });
});
