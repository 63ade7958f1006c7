/**
 * The objects table's Pod columns: STATUS and RESTARTS computed as `kubectl get pods` prints them (kubectl's
 * printPod), from the shapes the kubelet reports.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { podStatusOf } from '../../web/src/pod-status.js';

type Obj = Record<string, unknown>;

const pod = (status: Obj | undefined, over: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'demo', ...((over.metadata as Obj) ?? {}) },
  spec: { containers: [{ name: 'web' }], ...((over.spec as Obj) ?? {}) },
  ...(status ? { status } : {}),
});
const running = { running: { startedAt: '2026-01-01T00:00:00Z' } };

describe('pod STATUS and RESTARTS as kubectl prints them', () => {
  const cases: [string, Obj, string, number][] = [
    ['no status yet', pod(undefined), 'Unknown', 0],
    ['pending, not scheduled', pod({ phase: 'Pending' }), 'Pending', 0],
    [
      'running and ready',
      pod({ phase: 'Running', containerStatuses: [{ name: 'web', ready: true, restartCount: 0, state: running }] }),
      'Running',
      0,
    ],
    [
      'running, never ready: still Running (READY would say 0/1)',
      pod({ phase: 'Running', containerStatuses: [{ name: 'web', ready: false, restartCount: 0, state: running }] }),
      'Running',
      0,
    ],
    [
      'a crash loop: the waiting reason, and the restarts of every container summed',
      pod({
        phase: 'Running',
        containerStatuses: [
          { name: 'web', ready: false, restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } } },
          { name: 'side', ready: true, restartCount: 2, state: running },
        ],
      }),
      'CrashLoopBackOff',
      7,
    ],
    [
      'creating its containers',
      pod({ phase: 'Pending', containerStatuses: [{ name: 'web', ready: false, state: { waiting: { reason: 'ContainerCreating' } } }] }),
      'ContainerCreating',
      0,
    ],
    [
      'completed',
      pod({
        phase: 'Succeeded',
        containerStatuses: [{ name: 'web', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } }],
      }),
      'Completed',
      0,
    ],
    [
      'failed with an error',
      pod({ phase: 'Failed', containerStatuses: [{ name: 'web', ready: false, state: { terminated: { exitCode: 1, reason: 'Error' } } }] }),
      'Error',
      0,
    ],
    [
      'terminated without a reason: the exit code, or the signal',
      pod({ phase: 'Failed', containerStatuses: [{ name: 'web', state: { terminated: { exitCode: 2 } } }] }),
      'ExitCode:2',
      0,
    ],
    [
      'one container completed beside one still running and ready, the pod not Ready',
      pod({
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False' }],
        containerStatuses: [
          { name: 'job', ready: false, state: { terminated: { exitCode: 0, reason: 'Completed' } } },
          { name: 'web', ready: true, state: running },
        ],
      }),
      'NotReady',
      0,
    ],
    [
      'evicted: the status reason',
      pod({ phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: memory.' }),
      'Evicted',
      0,
    ],
    [
      'an init container still running',
      pod(
        {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'init', ready: false, restartCount: 0, state: running }],
          containerStatuses: [{ name: 'web', ready: false, state: { waiting: { reason: 'PodInitializing' } } }],
        },
        { spec: { initContainers: [{ name: 'init' }] } },
      ),
      'Init:0/1',
      0,
    ],
    [
      'an init container in a crash loop: its restarts count',
      pod(
        {
          phase: 'Pending',
          initContainerStatuses: [{ name: 'init', restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } } }],
          containerStatuses: [{ name: 'web', ready: false, state: { waiting: { reason: 'PodInitializing' } } }],
        },
        { spec: { initContainers: [{ name: 'init' }] } },
      ),
      'Init:CrashLoopBackOff',
      3,
    ],
    [
      'being deleted',
      pod(
        { phase: 'Running', containerStatuses: [{ name: 'web', ready: true, restartCount: 1, state: running }] },
        { metadata: { deletionTimestamp: '2026-01-01T00:00:00Z' } },
      ),
      'Terminating',
      1,
    ],
  ];
  for (const [name, object, status, restarts] of cases) {
    test(name, () => assert.deepEqual(podStatusOf(object), { status, restarts }));
  }
});
