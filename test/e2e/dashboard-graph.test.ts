/**
 * The object page's resource graph in a real browser (Debian chromium via playwright-core) over a real stack (sandbox
 * + gateway + agent), on a Deployment of three replicas, a Service selecting its pods, an Ingress to the Service and
 * an HPA scaling the Deployment, all applied through the operations API: the Deployment's graph shows its ReplicaSet,
 * the three Pods, the Service, the Ingress and the HPA left to right with a health mark on every workload; the
 * Service's graph joins it to the three Pods; the graph is one tab stop whose arrow keys follow the edges and Enter
 * opens the focused object; "List" shows the relations as lists (kept, visually hidden and out of the tab order,
 * while the graph shows); axe-core finds nothing serious at 1280 and 390 px in light and dark, and the page never
 * scrolls sideways. The sandbox has no HorizontalPodAutoscaler kind: the test registers Kubernetes' own
 * (autoscaling/v2) as a custom resource before the agent starts, which is all the page reads of it
 * (`spec.scaleTargetRef`). Screenshots go to test-output/dashboard-graph/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { createOperationClient } from '../../src/client/operation-client.js';
import { ensureWebBuild } from '../../src/demo/web-build.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { seriousAxeViolations, testOutputDir, startWithChromium } from './browser.js';

const WAIT = { timeout: 30_000 };
const APP = 'graph-app';
const DEPLOYMENT_PAGE = `#/objects/sandbox/Deployment/demo/${APP}`;

const MANIFESTS = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${APP}, namespace: demo, labels: {app: ${APP}}}
spec:
  replicas: 3
  selector: {matchLabels: {app: ${APP}}}
  template:
    metadata: {labels: {app: ${APP}}}
    spec: {containers: [{name: web, image: nginx:1.27-alpine, ports: [{name: http, containerPort: 80}]}]}
---
apiVersion: v1
kind: Service
metadata: {name: ${APP}, namespace: demo}
spec: {selector: {app: ${APP}}, ports: [{name: http, port: 80, targetPort: http}]}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: ${APP}, namespace: demo}
spec:
  rules: [{host: graph.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: ${APP}, port: {number: 80}}}}]}}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: ${APP}, namespace: demo}
spec: {scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: ${APP}}, minReplicas: 3, maxReplicas: 6}
`;

/** Kubernetes' HPA kind, served by the sandbox as a custom resource. */
const HPA_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'horizontalpodautoscalers.autoscaling' },
  spec: {
    group: 'autoscaling',
    scope: 'Namespaced',
    names: {
      plural: 'horizontalpodautoscalers',
      singular: 'horizontalpodautoscaler',
      kind: 'HorizontalPodAutoscaler',
      shortNames: ['hpa'],
    },
    versions: [
      {
        name: 'v2',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

/** What the graph on the page shows: node ids left to right then top to bottom, edges, and each node's health. */
interface Drawn {
  nodes: { id: string; x: number; y: number; health: string | null; center: boolean; link: boolean }[];
  edges: string[];
}

function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => {
    const nodes = [...document.querySelectorAll('[data-graph-node]')].map((n) => {
      const box = n.getBoundingClientRect();
      return {
        id: n.getAttribute('data-graph-node')!,
        x: Math.round(box.x),
        y: Math.round(box.y),
        health: n.querySelector('[data-health]')?.getAttribute('data-health') ?? null,
        center: n.classList.contains('is-center'),
        link: n.tagName.toLowerCase() === 'a' && n.hasAttribute('href'),
      };
    });
    nodes.sort((a, b) => a.x - b.x || a.y - b.y);
    return { nodes, edges: [...document.querySelectorAll('[data-edge]')].map((e) => e.getAttribute('data-edge')!).sort() };
  });
}

/** Waits until the page's graph has three Pods, each with a health mark. */
async function waitForGraph(page: Page): Promise<Drawn> {
  let last: Drawn | undefined;
  await eventually('the graph shows three Pods with their health', async () => {
    last = await drawn(page);
    const pods = last.nodes.filter((n) => n.id.startsWith('Pod/'));
    return pods.length === 3 && pods.every((p) => p.health !== null);
  });
  return last!;
}

/** Whether the Deployment, its ReplicaSet and its Pods all read Healthy in the graph. */
async function workloadsHealthy(page: Page): Promise<boolean> {
  const workloads = (await drawn(page)).nodes.filter((n) => /^(Deployment|ReplicaSet|Pod)\//.test(n.id));
  return workloads.length === 5 && workloads.every((n) => n.health === 'Healthy');
}

/** The `data-graph-node` of the focused element, or what is focused instead. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement;
    return el?.getAttribute('data-graph-node') ?? `not a node: ${el?.tagName}`;
  });
}

describe('the resource graph on the object page', { timeout: 180_000 }, () => {
  let stack: Stack;
  let browser: Browser;
  let url: string;
  const shots = testOutputDir('dashboard-graph');

  before(async () => {
    assert.notEqual(await ensureWebBuild(createSilentLogger()), 'unavailable', 'the dashboard builds');
    await startWithChromium(
      startStack({ agents: [], driver: process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite' }),
      (started, launched) => {
        stack = started!;
        browser = launched!;
      },
    );
    url = stack.gateway.httpUrl;
    // The agent discovers kinds when it starts: the HPA kind must be served before.
    stack.sandbox.store.create(HPA_CRD);
    await stack.startAgent();
    await waitForAccounts(url, ['sandbox']);
    const ops = createOperationClient({ gatewayUrl: url });
    const applied = await ops.submitAndWait({
      account: 'sandbox',
      spec: { case: 'apply', value: { namespace: 'demo', manifests: MANIFESTS } },
    });
    assert.equal(applied.state, OperationState.SUCCEEDED, applied.error);
  });
  after(async () => {
    await browser?.close();
    await stack?.close();
  });

  test("the Deployment's graph: ReplicaSet, three Pods, Service, Ingress and HPA, left to right, health on each workload", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/${DEPLOYMENT_PAGE}`);
    await eventually('the Ingress and the HPA are drawn', async () => {
      const ids = (await drawn(page)).nodes.map((n) => n.id);
      return ids.includes(`Ingress/${APP}`) && ids.includes(`HorizontalPodAutoscaler/${APP}`);
    });
    const graph = await waitForGraph(page);
    const deployment = graph.nodes.find((n) => n.id === `Deployment/${APP}`)!;
    const replicaSets = graph.nodes.filter((n) => n.id.startsWith('ReplicaSet/'));
    const pods = graph.nodes.filter((n) => n.id.startsWith('Pod/'));
    assert.equal(replicaSets.length, 1, JSON.stringify(graph.nodes));
    const rs = replicaSets[0]!;
    assert.ok(deployment.center, 'the page object is highlighted');
    assert.deepEqual(
      graph.nodes.filter((n) => n.center).map((n) => n.id),
      [deployment.id],
    );
    assert.equal(await page.locator(`[data-graph-node="${deployment.id}"]`).getAttribute('aria-current'), 'page');
    for (const n of [deployment, rs, ...pods]) assert.match(n.health ?? '', /^(Healthy|Progressing)$/, `${n.id} has a health mark`);
    assert.equal(
      await page
        .locator(`[data-graph-node="${deployment.id}"] text`)
        .filter({ hasText: /^(Healthy|Progressing)$/ })
        .count(),
      1,
    );

    const expected = [
      `Deployment/${APP} ${rs.id}`,
      ...pods.map((p) => `${rs.id} ${p.id}`),
      ...pods.map((p) => `Service/${APP} ${p.id}`),
      `Ingress/${APP} Service/${APP}`,
      `HorizontalPodAutoscaler/${APP} Deployment/${APP}`,
    ].sort();
    assert.deepEqual(graph.edges, expected);
    // Left to right: the HPA and the Ingress, then the Deployment and the Service, the ReplicaSet, the Pods.
    const x = (id: string) => graph.nodes.find((n) => n.id === id)!.x;
    assert.ok(x(`HorizontalPodAutoscaler/${APP}`) < deployment.x, 'the HPA left of the Deployment');
    assert.ok(x(`Ingress/${APP}`) < x(`Service/${APP}`), 'the Ingress left of the Service');
    assert.ok(deployment.x < rs.x, 'the Deployment left of its ReplicaSet');
    for (const p of pods) assert.ok(rs.x < p.x && x(`Service/${APP}`) < p.x, `${p.id} right of its ReplicaSet and Service`);
    assert.equal(await page.locator(`[data-edge^="Service/${APP} "].edge-selects`).count(), 3, 'the Service selects: dashed');
    assert.ok(
      graph.nodes.every((n) => n.link),
      'every node is in the cache, so a link',
    );
    await eventually('the Deployment, its ReplicaSet and its Pods Healthy', () => workloadsHealthy(page));
    // No controller in the sandbox reports the HPA's status: its health says so rather than claiming one.
    assert.equal(graph.nodes.find((n) => n.id === `HorizontalPodAutoscaler/${APP}`)!.health, 'Unknown');
    await page.close();
  });

  test("the Service's graph joins it to the three Pods it selects, its Endpoints and the Ingress", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/#/objects/sandbox/Service/demo/${APP}`);
    const graph = await waitForGraph(page);
    const service = graph.nodes.find((n) => n.center)!;
    assert.equal(service.id, `Service/${APP}`);
    assert.equal(service.health, null, 'no health claimed for a Service');
    const pods = graph.nodes.filter((n) => n.id.startsWith('Pod/'));
    for (const p of pods) assert.ok(graph.edges.includes(`${service.id} ${p.id}`), `${service.id} → ${p.id}`);
    assert.ok(graph.edges.includes(`${service.id} Endpoints/${APP}`));
    assert.ok(graph.edges.includes(`Ingress/${APP} ${service.id}`));
    await page.locator(`[data-graph-node="${service.id}"] text`).filter({ hasText: 'no health rules' }).waitFor(WAIT);
    await page.close();
  });

  test('the graph is one tab stop; arrows follow the edges, Enter opens the focused object', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/${DEPLOYMENT_PAGE}`);
    const graph = await waitForGraph(page);
    const edges = graph.edges.map((e) => e.split(' ') as [string, string]);
    const toggle = page.getByRole('button', { name: 'List' });
    await toggle.focus();
    await page.keyboard.press('Tab');
    assert.equal(await focused(page), `Deployment/${APP}`, 'Tab enters the graph at the page object');
    const ring = () =>
      page.evaluate(() => {
        const r = document.activeElement?.querySelector('.graph-focus-ring');
        return r ? getComputedStyle(r).stroke : 'no ring';
      });
    assert.notEqual(await ring(), 'none', 'the focused node shows its ring');

    await page.keyboard.press('ArrowRight');
    const rs = await focused(page);
    assert.match(rs, /^ReplicaSet\//, 'Right goes to the dependent');
    await page.keyboard.press('ArrowRight');
    const pod = await focused(page);
    assert.ok(
      edges.some(([f, t]) => f === rs && t === pod),
      `Right goes along an edge of ${rs}: ${pod}`,
    );
    const column = graph.nodes.filter((n) => n.x === graph.nodes.find((m) => m.id === pod)!.x).map((n) => n.id);
    assert.deepEqual(column.filter((id) => id.startsWith('Pod/')).length, 3, 'the Pods share a column');
    const below = column[column.indexOf(pod) + 1];
    await page.keyboard.press(below ? 'ArrowDown' : 'ArrowUp');
    const sibling = await focused(page);
    assert.equal(sibling, below ?? column[column.indexOf(pod) - 1], 'Up/Down moves within the column');
    await page.keyboard.press('ArrowLeft');
    const owner = await focused(page);
    assert.ok(
      edges.some(([f, t]) => f === owner && t === sibling),
      `Left goes to an object pointing at ${sibling}: ${owner}`,
    );
    await page.keyboard.press('Home');
    assert.equal(await focused(page), `Deployment/${APP}`, 'Home returns to the page object');

    // One tab stop: Tab leaves the graph, Shift+Tab comes back to the node focused last.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('Tab');
    assert.match(await focused(page), /^not a node/, 'Tab leaves the graph');
    await page.keyboard.press('Shift+Tab');
    assert.equal(await focused(page), rs, 'Shift+Tab comes back to the node focused last');

    await page.keyboard.press('ArrowRight');
    const opened = await focused(page);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: `Pod demo/${opened.slice('Pod/'.length)}` }).waitFor(WAIT);
    // The Pod's graph: its owners on the left, the Service selecting it too.
    await eventually('the Pod page draws its owners and its Service', async () => {
      const pod = await drawn(page);
      return [`Deployment/${APP} ${rs}`, `${rs} ${opened}`, `Service/${APP} ${opened}`].every((e) => pod.edges.includes(e));
    });
    await page.close();
  });

  test('"List" shows the relations as lists; while the graph shows they are hidden and out of the tab order', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}/${DEPLOYMENT_PAGE}`);
    await waitForGraph(page);
    const graphButton = page.getByRole('button', { name: 'Graph' });
    const listButton = page.getByRole('button', { name: 'List' });
    assert.equal(await graphButton.getAttribute('aria-pressed'), 'true');
    assert.equal(await listButton.getAttribute('aria-pressed'), 'false');
    const dependents = page.getByRole('list', { name: 'Dependents' });
    const listLinks = page.locator('.relations [data-node] a, .relation-links a');
    assert.ok((await listLinks.count()) >= 4, 'the list is there for screen readers');
    assert.deepEqual([...new Set(await listLinks.evaluateAll((as) => as.map((a) => a.getAttribute('tabindex'))))], ['-1']);
    const hiddenBox = await dependents.evaluate((ul) => ul.parentElement!.getBoundingClientRect().width);
    assert.ok(hiddenBox <= 1, `the list is visually hidden (${hiddenBox} px wide)`);

    await listButton.click();
    assert.equal(await listButton.getAttribute('aria-pressed'), 'true');
    assert.equal(await graphButton.getAttribute('aria-pressed'), 'false');
    assert.equal(await page.locator('[data-graph-node]').count(), 0, 'the graph is gone');
    await dependents.locator('li[data-node^="Pod/"] [data-health]').first().waitFor(WAIT);
    assert.equal(await dependents.locator('li[data-node^="Pod/"]').count(), 3);
    assert.deepEqual([...new Set(await listLinks.evaluateAll((as) => as.map((a) => a.getAttribute('tabindex'))))], [null]);
    const links = page.getByRole('list', { name: 'Selectors and references' });
    assert.equal(await links.locator(`li[data-link^="Service/${APP} selects Pod/"]`).count(), 3, 'the Service selects 3 Pods');
    for (const [link, words] of [
      [`Ingress/${APP} routes to Service/${APP}`, `Ingress ${APP} routes to Service ${APP}`],
      [`HorizontalPodAutoscaler/${APP} scales Deployment/${APP}`, `HorizontalPodAutoscaler ${APP}`],
    ] as const) {
      const item = links.locator(`li[data-link="${link}"]`);
      await item.waitFor(WAIT);
      assert.ok((await item.innerText()).startsWith(words), await item.innerText());
    }
    await page.screenshot({ path: join(shots, 'list-1280-light.png'), fullPage: true });

    // The choice holds on the next page, until Graph is pressed again.
    await page.reload();
    await dependents.waitFor(WAIT);
    assert.equal(await page.getByRole('button', { name: 'List' }).getAttribute('aria-pressed'), 'true');
    await page.getByRole('button', { name: 'Graph' }).click();
    await waitForGraph(page);
    await page.close();
  });

  for (const width of [1280, 390] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      test(`at ${width} px in ${scheme}: axe finds nothing serious, and only the graph's box scrolls sideways`, async () => {
        // bypassCSP: the page's CSP forbids the injected axe-core script.
        const context = await browser.newContext({
          viewport: { width, height: 900 },
          isMobile: width < 500,
          colorScheme: scheme,
          bypassCSP: true,
        });
        const page = await context.newPage();
        await page.goto(`${url}/${DEPLOYMENT_PAGE}`);
        await waitForGraph(page);
        await eventually('the Deployment, its ReplicaSet and its Pods Healthy', () => workloadsHealthy(page));
        const fit = await page.evaluate(() => {
          const box = document.querySelector<HTMLElement>('.graph-scroll')!;
          return {
            page: document.documentElement.scrollWidth,
            viewport: window.innerWidth,
            box: { scroll: box.scrollWidth, client: box.clientWidth, overflow: getComputedStyle(box).overflowX },
          };
        });
        assert.ok(fit.page <= fit.viewport, `the page scrolls sideways: ${JSON.stringify(fit)}`);
        if (width === 390) assert.ok(fit.box.scroll > fit.box.client && fit.box.overflow === 'auto', JSON.stringify(fit));
        else assert.ok(fit.box.scroll <= fit.box.client, `the graph fits at ${width} px: ${JSON.stringify(fit)}`);
        // Focus a node so the screenshot shows the ring.
        await page.getByRole('button', { name: 'List' }).focus();
        await page.keyboard.press('Tab');
        await page.keyboard.press('ArrowRight');
        assert.match(await focused(page), /^ReplicaSet\//);
        assert.deepEqual(await seriousAxeViolations(page), []);
        await page.screenshot({ path: join(shots, `graph-${width}-${scheme}.png`), fullPage: true });
        await context.close();
      });
    }
  }
});
