/**
 * The pretend kubelet following the `sandbox.outpost.dev/*` pod controls: delayed readiness, never ready, failing
 * pods, annotated log lines through pods/log, and the controls reaching pods through a Deployment's template.
 * Waits only bound a hang; nothing asserts on how long a transition took.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch, useSandbox } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'controls';
let sb: Sandbox;

useSandbox(NS, {}, (started) => (sb = started));

const pod = (name: string, annotations: Record<string, string>, containers = [{ name: 'app', image: 'nginx' }]) =>
  sb.store.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, annotations }, spec: { containers } });

const get = (name: string) => sb.store.get('v1', 'Pod', NS, name)!;
const status = (p: KubeObject) =>
  (p.status ?? {}) as {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: { ready: boolean; state: Record<string, { exitCode?: number }> }[];
  };
const ready = (p: KubeObject) => status(p).conditions?.find((c) => c.type === 'Ready')?.status;

describe('pod controls', () => {
  test('ready-after-ms: Running and not Ready first, Ready later', async () => {
    const watch = await openWatch(sb, `/api/v1/namespaces/${NS}/pods?watch=true&fieldSelector=metadata.name%3Dslow`);
    try {
      pod('slow', { 'sandbox.outpost.dev/ready-after-ms': '300' });
      const objects = (events: { object: KubeObject }[]) => events.map((e) => e.object);
      await watch.waitFor((events) => objects(events).some((p) => status(p).phase === 'Running' && ready(p) === 'True'), 20000);
      // the Running write and the Ready write are separate changes: the watch saw Running with Ready False first
      const first = objects(watch.events).find((p) => status(p).phase === 'Running')!;
      assert.equal(ready(first), 'False');
      assert.equal(status(first).containerStatuses![0]!.ready, false);
      assert.equal(status(get('slow')).containerStatuses![0]!.ready, true);
    } finally {
      watch.close();
    }
  });

  test('never-ready: Running, Ready False, listed under notReadyAddresses', async () => {
    sb.store.create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'stuck', namespace: NS },
      spec: { selector: { app: 'stuck' }, ports: [{ port: 80 }] },
    });
    sb.store.create({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'stuck', namespace: NS, labels: { app: 'stuck' }, annotations: { 'sandbox.outpost.dev/never-ready': 'true' } },
      spec: { containers: [{ name: 'app', image: 'nginx' }] },
    });
    await eventually('running', () => status(get('stuck')).phase === 'Running', { timeoutMs: 30_000 });
    assert.equal(ready(get('stuck')), 'False');
    const ep = await eventually(
      'endpoints',
      () => {
        const e = sb.store.get('v1', 'Endpoints', NS, 'stuck') as
          | { subsets?: { addresses?: unknown[]; notReadyAddresses?: unknown[] }[] }
          | undefined;
        return e?.subsets?.[0]?.notReadyAddresses?.length === 1 ? e : undefined;
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(ep.subsets![0]!.addresses, undefined);
  });

  test('fail with an exit code: phase Failed, terminated container, Warning event', async () => {
    pod('broken', { 'sandbox.outpost.dev/fail': '3' });
    await eventually('failed', () => status(get('broken')).phase === 'Failed', { timeoutMs: 30_000 });
    assert.equal(status(get('broken')).containerStatuses![0]!.state.terminated!.exitCode, 3);
    assert.equal(ready(get('broken')), 'False');
    const ev = await eventually(
      'event',
      () => sb.store.list('v1', 'Event', NS).find((e) => (e.involvedObject as { name: string }).name === 'broken' && e.reason === 'Failed'),
      { timeoutMs: 30_000 },
    );
    assert.equal(ev.type, 'Warning');
  });

  test('run-ms + exit-code 0 on a bare pod: it completes', async () => {
    pod('oneshot', { 'sandbox.outpost.dev/run-ms': '50', 'sandbox.outpost.dev/exit-code': '0' });
    await eventually('succeeded', () => status(get('oneshot')).phase === 'Succeeded', { timeoutMs: 30_000 });
    assert.equal(status(get('oneshot')).containerStatuses![0]!.state.terminated!.exitCode, 0);
  });

  test('an image sandbox/never-ready works like the annotation', async () => {
    pod('img', {}, [{ name: 'app', image: 'sandbox/never-ready' }]);
    await eventually('running', () => status(get('img')).phase === 'Running', { timeoutMs: 30_000 });
    assert.equal(ready(get('img')), 'False');
  });

  test('log annotations through pods/log, per container', async () => {
    pod(
      'talker',
      {
        'sandbox.outpost.dev/log': 'SPINNAKER_PROPERTY_FOO=bar\nSPINNAKER_CONFIG_JSON={"a":1}',
        'sandbox.outpost.dev/log.side': 'only the sidecar',
      },
      [
        { name: 'app', image: 'nginx' },
        { name: 'side', image: 'busybox' },
      ],
    );
    await eventually('running', () => status(get('talker')).phase === 'Running', { timeoutMs: 30_000 });
    const app = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods/talker/log?container=app`);
    assert.equal(app.status, 200);
    assert.equal(app.text, 'SPINNAKER_PROPERTY_FOO=bar\nSPINNAKER_CONFIG_JSON={"a":1}\n');
    const side = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods/talker/log?container=side`);
    assert.equal(side.text, 'only the sidecar\n');
    const tail = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods/talker/log?container=app&tailLines=1`);
    assert.equal(tail.text, 'SPINNAKER_CONFIG_JSON={"a":1}\n');
  });

  test('controls on a Deployment template reach its pods and keep its status honest', async () => {
    sb.store.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'dull', namespace: NS },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'dull' } },
        template: {
          metadata: { labels: { app: 'dull' }, annotations: { 'sandbox.outpost.dev/never-ready': 'true' } },
          spec: { containers: [{ name: 'c', image: 'i' }] },
        },
      },
    });
    const d = await eventually(
      'pods running',
      () => {
        const obj = sb.store.get('apps/v1', 'Deployment', NS, 'dull')!;
        const st = obj.status as { updatedReplicas?: number; replicas?: number } | undefined;
        const pods = sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === 'dull');
        return st?.updatedReplicas === 2 && st.replicas === 2 && pods.every((p) => status(p).phase === 'Running') ? obj : undefined;
      },
      { timeoutMs: 30_000 },
    );
    const st = d.status as {
      readyReplicas?: number;
      availableReplicas?: number;
      conditions: { type: string; status: string; reason: string }[];
    };
    assert.equal(st.readyReplicas ?? 0, 0);
    assert.equal(st.availableReplicas ?? 0, 0);
    assert.equal(st.conditions.find((c) => c.type === 'Available')!.status, 'False');
    const pods = sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.app === 'dull');
    assert.ok(pods.every((p) => p.metadata.annotations?.['sandbox.outpost.dev/never-ready'] === 'true'));
  });
});
