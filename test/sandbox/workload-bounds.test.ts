/**
 * What one workload may make the sandbox do. Hostile-input regression (seed 638696507, 1000 cases, case 159): an
 * applied Deployment with `replicas: 2147483648` was stored, and the ReplicaSet controller created pods in one
 * synchronous loop — the process that also ran the gateway grew past 1.5 GB and stopped answering. Counts outside
 * int32 are now refused as Kubernetes' decoder refuses them (400), and even the largest int32 stops at the pod
 * capacity (403 "exceeded quota", FailedCreate). A controller asked to look again in years (a progress deadline or a
 * pod run time from a manifest) waits instead of spinning on Node's 1 ms fallback for over-long timers.
 * Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Sandbox } from '../../src/sandbox/index.js';
import { startControllers } from '../../src/sandbox/controllers/runner.js';
import { createKindRegistry } from '../../src/sandbox/kinds.js';
import { createObjectStore } from '../../src/sandbox/store.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { call, useSandbox } from './api-client.js';

const NS = 'bounds';
const MAX_PODS = 40;
let sb: Sandbox;

useSandbox(NS, { maxPods: MAX_PODS }, (started) => (sb = started));

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }] } };
const selector = { matchLabels: { app: 'web' } };
const podsOwnedBy = (kind: string, name: string) =>
  sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.ownerReferences?.some((r) => r.kind === kind && r.name === name));
type Event = { type?: string; reason?: string; message?: string; involvedObject?: { name?: string } };
const failedCreate = (name: string) =>
  (sb.store.list('v1', 'Event', NS) as Event[]).find((e) => e.reason === 'FailedCreate' && e.involvedObject?.name === name);

describe('workload bounds', () => {
  test('a count outside int32 is 400 BadRequest, as Kubernetes decodes it, and nothing is stored', async () => {
    // the hostile case's manifest, applied server-side as the agent's executor may
    const manifest =
      'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web-729c5feb9a478922\n  namespace: bounds\nspec:\n  replicas: 2147483648\n' +
      '  selector:\n    matchLabels:\n      app: web\n  template:\n    metadata:\n      labels:\n        app: web\n    spec:\n' +
      '      containers:\n        - name: main\n          image: nginx:1\n';
    const applied = await call(sb, 'PATCH', `/apis/apps/v1/namespaces/${NS}/deployments/web-729c5feb9a478922?fieldManager=hx`, {
      raw: manifest,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(applied.status, 400, applied.text);
    assert.equal(applied.json.reason, 'BadRequest');
    assert.match(
      applied.json.message,
      /cannot unmarshal number 2147483648 into Go struct field DeploymentSpec\.spec\.replicas of type int32/,
    );

    const refused: [string, string, Record<string, unknown>][] = [
      ['apps/v1', 'deployments', { replicas: 1e308, selector, template }],
      ['apps/v1', 'deployments', { replicas: -(2 ** 31) - 1, selector, template }],
      ['apps/v1', 'deployments', { replicas: 1, progressDeadlineSeconds: 4294967296, selector, template }],
      ['apps/v1', 'replicasets', { replicas: 2 ** 53 + 1, selector, template }],
      ['apps/v1', 'statefulsets', { replicas: 4294967296, selector, template }],
      ['apps/v1', 'statefulsets', { replicas: 1, selector, template, updateStrategy: { rollingUpdate: { partition: 2 ** 31 } } }],
      ['batch/v1', 'jobs', { parallelism: 2 ** 31, template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } }],
      ['batch/v1', 'jobs', { completions: 1.5, template: { ...template, spec: { ...template.spec, restartPolicy: 'Never' } } }],
    ];
    for (const [i, [apiVersion, plural, spec]] of refused.entries()) {
      const kind = { deployments: 'Deployment', replicasets: 'ReplicaSet', statefulsets: 'StatefulSet', jobs: 'Job' }[plural]!;
      const res = await call(sb, 'POST', `/apis/${apiVersion}/namespaces/${NS}/${plural}`, {
        body: { apiVersion, kind, metadata: { name: `refused-${i}` }, spec },
      });
      assert.equal(res.status, 400, `${plural} ${JSON.stringify(spec)}: ${res.text}`);
      assert.match(res.json.message, /of type int32$/);
    }
    assert.deepEqual(sb.store.list('apps/v1', 'Deployment', NS), []);
    assert.deepEqual(sb.store.list('v1', 'Pod', NS), []);
  });

  test('the largest int32 replicas stop at the pod capacity: FailedCreate, a 403 for more, the API still answering', async () => {
    const created = await call(sb, 'POST', `/apis/apps/v1/namespaces/${NS}/replicasets`, {
      body: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'huge' }, spec: { replicas: 2 ** 31 - 1, selector, template } },
    });
    assert.equal(created.status, 201, created.text);
    await eventually(
      'the ReplicaSet at the capacity, with FailedCreate',
      () => podsOwnedBy('ReplicaSet', 'huge').length === MAX_PODS && failedCreate('huge'),
    );
    const event = failedCreate('huge')!;
    assert.equal(event.type, 'Warning');
    assert.match(event.message ?? '', /exceeded quota: sandbox-capacity, requested: pods=1, used: pods=40, limited: pods=40/);

    const more = await call(sb, 'POST', `/api/v1/namespaces/${NS}/pods`, {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'one-more' }, spec: template.spec },
    });
    assert.equal(more.status, 403, more.text);
    assert.equal(more.json.reason, 'Forbidden');

    // the other pod-creating controllers stop there as well, each with its FailedCreate
    const parallel = await call(sb, 'POST', `/apis/apps/v1/namespaces/${NS}/statefulsets`, {
      body: {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'huge-sts' },
        spec: { replicas: 2 ** 31 - 1, podManagementPolicy: 'Parallel', serviceName: 'x', selector, template },
      },
    });
    assert.equal(parallel.status, 201, parallel.text);
    const job = await call(sb, 'POST', `/apis/batch/v1/namespaces/${NS}/jobs`, {
      body: {
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: { name: 'huge-job' },
        spec: { parallelism: 2 ** 31 - 1, completions: 2 ** 31 - 1, template: { spec: { ...template.spec, restartPolicy: 'Never' } } },
      },
    });
    assert.equal(job.status, 201, job.text);
    await eventually('FailedCreate on the StatefulSet and the Job', () => failedCreate('huge-sts') && failedCreate('huge-job'));
    assert.equal(sb.store.list('v1', 'Pod', NS).length, MAX_PODS);
    assert.equal((await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods?limit=1`)).status, 200);
  });

  test('a key queued for years later is not reconciled after 1 ms (Node’s fallback for over-long timers)', async () => {
    const store = createObjectStore(createKindRegistry());
    let reconciles = 0;
    const runner = startControllers(
      store,
      [{ name: 'count', keysFor: () => [], reconcile: () => void reconciles++ }],
      createSilentLogger(),
    );
    try {
      runner.enqueue('count', 'deadline', (2 ** 31 - 1) * 1000); // the largest progressDeadlineSeconds, as the deployment controller asks
      runner.enqueue('count', 'now');
      await runner.idle();
      assert.equal(reconciles, 1);
      // before the fix the timer fired after 1 ms; a second is ample for that even on a loaded machine
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.equal(reconciles, 1);
    } finally {
      runner.stop();
    }
  });
});
