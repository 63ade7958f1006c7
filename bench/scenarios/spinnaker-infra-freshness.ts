/**
 * The freshness half of the spinnaker-infra benchmark: how long after a change in a cluster Deck's reads show it,
 * through a real agent streaming the sandbox into the gateway. Two measures, each polling the route Gate polls every
 * `pollMs` (so each figure includes up to one poll interval and one read):
 *
 * - scale → shown: a Deployment scaled in the sandbox (its store, as `kubectl scale` would change it), alternately up
 *   and down; until `GET /applications/{app}/serverGroups` shows the ReplicaSet's new desired capacity, and until it
 *   lists that many instances (the ReplicaSet controller's pods, whatever their health);
 * - first deploy → listed: a Deployment of a brand-new application created in the sandbox; until `GET
 *   /applications?restricted=false&expand=true` lists the application.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SandboxStore } from '../../src/sandbox/index.js';

/** What both measures need. */
export interface FreshnessTarget {
  httpUrl: string;
  store: SandboxStore;
  namespace: string;
  pollMs: number;
  /** Throws when a process the measure relies on has died. */
  check(): void;
}

const DEADLINE_MS = 60_000;

/** A Deployment as Spinnaker deploys it: moniker annotations (copied onto its ReplicaSets by the controller). */
function spinnakerDeployment(namespace: string, app: string, name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace,
      annotations: { 'moniker.spinnaker.io/application': app, 'moniker.spinnaker.io/cluster': `deployment ${name}` },
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image: 'nginx:1.27' }] } },
    },
  };
}

/** Polls `url` every `pollMs` until `done(body)` holds; the time it held, from performance.now(). */
async function pollUntil(t: FreshnessTarget, url: string, done: (body: unknown) => boolean): Promise<number> {
  const deadline = performance.now() + DEADLINE_MS;
  for (;;) {
    const res = await fetch(url);
    const body = res.status === 200 ? ((await res.json()) as unknown) : (await res.arrayBuffer(), undefined);
    const now = performance.now();
    if (body !== undefined && done(body)) return now;
    if (now > deadline)
      throw new Error(`${url} did not show the change within ${DEADLINE_MS / 1000} s: ${JSON.stringify(body).slice(0, 500)}`);
    t.check();
    await sleep(t.pollMs);
  }
}

type Summary = { capacity: { desired: number }; instances: unknown[] };

/**
 * Deploys `fresh-web` (application `fresh`) with 2 replicas, waits until it is shown, then scales it `warmup + rounds`
 * times between 2 and 4; the milliseconds of the measured rounds until the desired capacity, and until the instance
 * count, were shown.
 */
export async function measureScaleShown(
  t: FreshnessTarget,
  rounds: number,
  warmup: number,
): Promise<{ capacity: number[]; instances: number[] }> {
  const app = 'fresh';
  const name = 'fresh-web';
  const url = `${t.httpUrl}/applications/${app}/serverGroups?expand=false`;
  const shows = (replicas: number, what: 'capacity' | 'instances') => (body: unknown) => {
    const sgs = body as Summary[];
    return sgs.length === 1 && sgs[0]!.capacity.desired === replicas && (what === 'capacity' || sgs[0]!.instances.length === replicas);
  };
  t.store.create(spinnakerDeployment(t.namespace, app, name, 2));
  await pollUntil(t, url, shows(2, 'instances'));
  const capacity: number[] = [];
  const instances: number[] = [];
  for (let i = 0; i < warmup + rounds; i++) {
    const replicas = i % 2 === 0 ? 4 : 2;
    const current = t.store.get('apps/v1', 'Deployment', t.namespace, name)!;
    const t0 = performance.now();
    t.store.update({ ...current, spec: { ...(current.spec as object), replicas } });
    // One poll loop for both: the capacity is seen at the first answer showing it, the instances at the last.
    let capacityAt: number | undefined;
    const instancesAt = await pollUntil(t, url, (body) => {
      if (capacityAt === undefined && shows(replicas, 'capacity')(body)) capacityAt = performance.now();
      return shows(replicas, 'instances')(body);
    });
    if (i >= warmup) {
      capacity.push(capacityAt! - t0);
      instances.push(instancesAt - t0);
    }
  }
  return { capacity, instances };
}

/** Creates `rounds` Deployments of new applications one after another; the milliseconds until each was listed. */
export async function measureFirstListed(t: FreshnessTarget, rounds: number): Promise<number[]> {
  const url = `${t.httpUrl}/applications?restricted=false&expand=true`;
  const samples: number[] = [];
  const run = Date.now().toString(36);
  for (let i = 0; i < rounds; i++) {
    const app = `first${run}n${i}`;
    const t0 = performance.now();
    t.store.create(spinnakerDeployment(t.namespace, app, `${app}-web`, 1));
    const listedAt = await pollUntil(t, url, (body) => (body as { name: string }[]).some((a) => a.name === app));
    samples.push(listedAt - t0);
  }
  return samples;
}
