/**
 * A pod's Events as the scheduler and the kubelet record them, in order: Scheduled (default-scheduler), then per
 * container Pulled, Created and Started (kubelet, with the node as source.host and the container as fieldPath), Killing
 * per container when it is deleted; and for a never-ready pod with readiness probes, one Warning Unhealthy per
 * probed container. Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { useSandbox } from './api-client.js';

const NS = 'pod-events';
let sb: Sandbox;

useSandbox(NS, {}, (started) => (sb = started));

interface Recorded {
  reason: string;
  message: string;
  type: string;
  component: string;
  host?: string;
  fieldPath?: string;
  count: number;
}

/** The Events about one pod, in the order they were recorded. */
function eventsOf(pod: string): Recorded[] {
  return sb.store
    .list('v1', 'Event', NS)
    .filter((e) => (e.involvedObject as { name?: string; kind?: string }).name === pod)
    .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion))
    .map((e) => {
      const source = e.source as { component: string; host?: string };
      return {
        reason: String(e.reason),
        message: String(e.message),
        type: String(e.type),
        component: source.component,
        host: source.host,
        fieldPath: (e.involvedObject as { fieldPath?: string }).fieldPath,
        count: Number(e.count),
      };
    });
}

function createPod(name: string, containers: Record<string, unknown>[], annotations: Record<string, string> = {}): KubeObject {
  return sb.store.create({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: NS, annotations }, spec: { containers } });
}

const kubelet = (reason: string, message: string, container: string, type = 'Normal') => ({
  reason,
  message,
  type,
  component: 'kubelet',
  host: 'sandbox-node',
  fieldPath: `spec.containers{${container}}`,
  count: 1,
});

describe('pod events', () => {
  test('Scheduled, then Pulled, Created and Started for each container in turn, then Killing for each', async () => {
    createPod('two', [
      { name: 'app', image: 'nginx:1.27' },
      { name: 'sidecar', image: 'busybox:1.36' },
    ]);
    await eventually('started', () => eventsOf('two').filter((e) => e.reason === 'Started').length === 2);
    const started = [
      {
        reason: 'Scheduled',
        message: `Successfully assigned ${NS}/two to sandbox-node`,
        type: 'Normal',
        component: 'default-scheduler',
        host: undefined,
        fieldPath: undefined,
        count: 1,
      },
      kubelet('Pulled', 'Container image "nginx:1.27" already present on machine', 'app'),
      kubelet('Created', 'Created container app', 'app'),
      kubelet('Started', 'Started container app', 'app'),
      kubelet('Pulled', 'Container image "busybox:1.36" already present on machine', 'sidecar'),
      kubelet('Created', 'Created container sidecar', 'sidecar'),
      kubelet('Started', 'Started container sidecar', 'sidecar'),
    ];
    assert.deepEqual(eventsOf('two'), started);
    sb.store.remove('v1', 'Pod', NS, 'two');
    await eventually('killing', () => eventsOf('two').filter((e) => e.reason === 'Killing').length === 2);
    assert.deepEqual(eventsOf('two'), [
      ...started,
      kubelet('Killing', 'Stopping container app', 'app'),
      kubelet('Killing', 'Stopping container sidecar', 'sidecar'),
    ]);
  });

  test('a never-ready pod with readiness probes: one Unhealthy Warning per probed container', async () => {
    createPod(
      'unready',
      [
        { name: 'http', image: 'nginx:1.27', readinessProbe: { httpGet: { path: '/ready', port: 8080 } } },
        {
          name: 'tcp',
          image: 'redis:7',
          ports: [{ name: 'redis', containerPort: 6379 }],
          readinessProbe: { tcpSocket: { port: 'redis' } },
        },
        { name: 'plain', image: 'busybox:1.36' },
      ],
      { 'sandbox.outpost.dev/never-ready': 'true' },
    );
    await eventually('started', () => eventsOf('unready').filter((e) => e.reason === 'Started').length === 3);
    const pod = sb.store.get('v1', 'Pod', NS, 'unready')!;
    const ip = (pod.status as { podIP: string }).podIP;
    const unhealthy = eventsOf('unready').filter((e) => e.reason === 'Unhealthy');
    assert.deepEqual(unhealthy, [
      kubelet('Unhealthy', 'Readiness probe failed: HTTP probe failed with statuscode: 503', 'http', 'Warning'),
      kubelet('Unhealthy', `Readiness probe failed: dial tcp ${ip}:6379: connect: connection refused`, 'tcp', 'Warning'),
    ]);
    // recorded after the containers started
    const reasons = eventsOf('unready').map((e) => e.reason);
    assert.ok(reasons.lastIndexOf('Started') < reasons.indexOf('Unhealthy'), reasons.join(', '));
    // the containers are started but not ready
    const statuses = (pod.status as { containerStatuses: { started: boolean; ready: boolean }[] }).containerStatuses;
    assert.deepEqual(
      statuses.map((c) => [c.started, c.ready]),
      [
        [true, false],
        [true, false],
        [true, false],
      ],
    );
  });
});
