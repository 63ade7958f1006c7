/**
 * A pretend kubelet: a new pod without a phase (or Pending) is bound to `sandbox-node` and, after a short start delay,
 * reported Running and Ready with a pod IP and container statuses — so watchers see the Pending → Running sequence.
 * Pods created already Running (seeds) are left alone.
 */
import type { ObjectStore } from '../store.js';
import { nowTimestamp } from '../store.js';
import { isPlainObject } from '../types.js';
import { nsKey, splitNsKey, type Controller, type ControllerRunner } from './runner.js';

/** The node name pods are bound to. */
export const SANDBOX_NODE = 'sandbox-node';

/** Creates the controller; `runner` is used to schedule the delayed start. */
export function createKubeletController(store: ObjectStore, getRunner: () => ControllerRunner, startDelayMs: number): Controller {
  const pods = store.registry.byKindKey('/Pod')!;
  const starting = new Set<string>();
  let nextIp = 2;

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const pod = store.peek(pods, namespace, name);
    if (!pod || pod.metadata.deletionTimestamp || !isPlainObject(pod.spec)) {
      starting.delete(key);
      return;
    }
    const status = isPlainObject(pod.status) ? pod.status : {};
    if (status.phase !== undefined && status.phase !== 'Pending') return;
    if (!pod.spec.nodeName) {
      store.update(pods, { ...pod, spec: { ...pod.spec, nodeName: SANDBOX_NODE } });
      return; // the MODIFIED event queues us again
    }
    if (!starting.has(key)) {
      starting.add(key);
      getRunner().enqueue('kubelet', key, startDelayMs);
      return;
    }
    starting.delete(key);
    const ip = nextIp++;
    const now = nowTimestamp();
    const containers = (Array.isArray(pod.spec.containers) ? pod.spec.containers : []).filter(isPlainObject);
    const cond = (type: string) => ({ type, status: 'True', lastProbeTime: null, lastTransitionTime: now });
    store.update(
      pods,
      {
        ...pod,
        status: {
          phase: 'Running',
          conditions: [cond('PodReadyToStartContainers'), cond('Initialized'), cond('Ready'), cond('ContainersReady'), cond('PodScheduled')],
          hostIP: '10.0.0.1',
          hostIPs: [{ ip: '10.0.0.1' }],
          podIP: `10.244.${(ip >> 8) & 255}.${ip & 255}`,
          podIPs: [{ ip: `10.244.${(ip >> 8) & 255}.${ip & 255}` }],
          startTime: now,
          qosClass: status.qosClass ?? 'BestEffort',
          containerStatuses: containers.map((c) => ({
            name: c.name,
            image: c.image,
            imageID: `sandbox://${String(c.image)}`,
            containerID: `sandbox://${String(pod.metadata.uid)}/${String(c.name)}`,
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          })),
        },
      },
      { subresource: 'status' },
    );
  }

  return {
    name: 'kubelet',
    *keysFor(event) {
      if (event.kindKey !== '/Pod' || event.type === 'DELETED') return;
      const status = isPlainObject(event.object.status) ? event.object.status : {};
      if (status.phase === undefined || status.phase === 'Pending') yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
    },
    reconcile,
  };
}
