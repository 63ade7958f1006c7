/**
 * A pretend kubelet (and scheduler): a new pod without a phase (or Pending) is bound to `sandbox-node` and, after the
 * start delay (`podStartDelayMs`), reported Running with a pod IP and container statuses — so watchers see the
 * Pending → Running sequence. What happens next follows the pod's controls (`../pod-controls.ts`): Ready after the
 * sandbox's `podReadyDelayMs` (0: at once) or the pod's own delay, never Ready, or the containers exit (Succeeded /
 * Failed with an exit code). While not Ready the containers are started but not ready, as a kubelet reports a
 * container whose readiness probe has not passed. A Job's pods always run to completion. Pods created already Running
 * (seeds) are left alone. The start and ready delays are what pace a Deployment's rolling update. Every step records
 * the Event the scheduler or kubelet would (pod-events.ts). Timers live in memory, keyed by pod uid, and drive the
 * runner's queue.
 */
import { podControls, type PodControls } from '../pod-controls.js';
import type { ObjectStore } from '../store.js';
import { nowTimestamp } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef } from './owners.js';
import { createPodEvents } from './pod-events.js';
import { nsKey, splitNsKey, type Controller, type ControllerRunner } from './runner.js';

/** The node name pods are bound to. */
export const SANDBOX_NODE = 'sandbox-node';

/** Delays of the pretend kubelet. */
export interface KubeletTimings {
  /** Pending → Running. */
  startDelayMs: number;
  /** Running → Ready for a pod that names no delay of its own. */
  readyDelayMs: number;
  /** How long a pod that runs to completion runs when it does not say (`run-ms`). */
  defaultRunMs: number;
}

interface Plan {
  uid: string;
  controls: PodControls;
  /** Wall-clock ms: when to start, then when to become Ready / exit. */
  startAt: number;
  readyAt?: number;
  exitAt?: number;
}

function containersOf(pod: KubeObject): Record<string, unknown>[] {
  const spec = isPlainObject(pod.spec) ? pod.spec : {};
  return (Array.isArray(spec.containers) ? spec.containers : []).filter(isPlainObject);
}

function condition(type: string, ok: boolean, now: string, reason?: string, message?: string): Record<string, unknown> {
  return {
    type,
    status: ok ? 'True' : 'False',
    lastProbeTime: null,
    lastTransitionTime: now,
    ...(reason ? { reason } : {}),
    ...(message ? { message } : {}),
  };
}

/** Creates the controller; `getRunner` schedules its timers, `events` records the pods' Events (pod-events.ts). */
export function createKubeletController(
  store: ObjectStore,
  getRunner: () => ControllerRunner,
  timings: KubeletTimings,
  events: EventRecorder,
): Controller {
  const pods = store.registry.byKindKey('/Pod')!;
  const podEvents = createPodEvents(events, SANDBOX_NODE);
  const plans = new Map<string, Plan>();
  /** Deleted pods whose containers were running: their Killing Events are recorded by the next reconcile. */
  const stopping = new Map<string, KubeObject[]>();
  let nextIp = 2;

  const later = (key: string, at: number) => getRunner().enqueue('kubelet', key, Math.max(1, at - Date.now()));

  function runsToCompletion(pod: KubeObject, controls: PodControls): boolean {
    return controllerRef(pod)?.kind === 'Job' || controls.exitCode !== undefined || controls.runMs !== undefined;
  }

  function containerStatuses(pod: KubeObject, _now: string, ready: boolean, state: Record<string, unknown>): Record<string, unknown>[] {
    return containersOf(pod).map((c) => ({
      name: c.name,
      image: c.image,
      imageID: `sandbox://${String(c.image)}`,
      containerID: `sandbox://${String(pod.metadata.uid)}/${String(c.name)}`,
      ready,
      started: 'running' in state,
      restartCount: 0,
      state,
    }));
  }

  function start(pod: KubeObject, plan: Plan): void {
    const ip = nextIp++;
    const now = nowTimestamp();
    const status = isPlainObject(pod.status) ? pod.status : {};
    const { controls } = plan;
    const readyNow = !controls.neverReady && controls.readyAfterMs === 0;
    const names = containersOf(pod).map((c) => String(c.name));
    const notReady = `containers with unready status: [${names.join(' ')}]`;
    const podIp = `10.244.${(ip >> 8) & 255}.${ip & 255}`;
    store.update(
      pods,
      {
        ...pod,
        status: {
          phase: 'Running',
          conditions: [
            condition('PodReadyToStartContainers', true, now),
            condition('Initialized', true, now),
            condition('Ready', readyNow, now, readyNow ? undefined : 'ContainersNotReady', readyNow ? undefined : notReady),
            condition('ContainersReady', readyNow, now, readyNow ? undefined : 'ContainersNotReady', readyNow ? undefined : notReady),
            condition('PodScheduled', true, now),
          ],
          hostIP: '10.0.0.1',
          hostIPs: [{ ip: '10.0.0.1' }],
          podIP: podIp,
          podIPs: [{ ip: podIp }],
          startTime: now,
          qosClass: status.qosClass ?? 'BestEffort',
          containerStatuses: containerStatuses(pod, now, readyNow, { running: { startedAt: now } }),
        },
      },
      { subresource: 'status' },
    );
    podEvents.started(pod);
    if (controls.neverReady) podEvents.readinessFailed(pod, podIp);
    const t = Date.now();
    if (runsToCompletion(pod, controls)) plan.exitAt = t + (controls.runMs ?? (controls.exitCode ? 0 : timings.defaultRunMs));
    else if (controls.exitCode) plan.exitAt = t;
    if (!readyNow && !controls.neverReady && (plan.exitAt === undefined || t + controls.readyAfterMs < plan.exitAt))
      plan.readyAt = t + controls.readyAfterMs;
    const next = Math.min(plan.readyAt ?? Infinity, plan.exitAt ?? Infinity);
    if (next !== Infinity) later(nsKey(pod.metadata.namespace, pod.metadata.name!), next);
  }

  function becomeReady(pod: KubeObject): void {
    const now = nowTimestamp();
    const status = isPlainObject(pod.status) ? pod.status : {};
    const conditions = (Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : []).map((c) =>
      c.type === 'Ready' || c.type === 'ContainersReady' ? condition(String(c.type), true, now) : c,
    );
    const statuses = (Array.isArray(status.containerStatuses) ? status.containerStatuses.filter(isPlainObject) : []).map((c) => ({
      ...c,
      ready: true,
    }));
    store.update(pods, { ...pod, status: { ...status, conditions, containerStatuses: statuses } }, { subresource: 'status' });
  }

  function exit(pod: KubeObject, exitCode: number): void {
    const now = nowTimestamp();
    const status = isPlainObject(pod.status) ? pod.status : {};
    const ok = exitCode === 0;
    const reason = ok ? 'PodCompleted' : 'PodFailed';
    const conditions = (Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : []).map((c) =>
      c.type === 'Ready' || c.type === 'ContainersReady' ? condition(String(c.type), false, now, reason) : c,
    );
    const startedAt = typeof status.startTime === 'string' ? status.startTime : now;
    const terminated = { exitCode, reason: ok ? 'Completed' : 'Error', startedAt, finishedAt: now, containerID: '' };
    const statuses = containerStatuses(pod, now, false, { terminated }).map((c) => ({
      ...c,
      state: { terminated: { ...terminated, containerID: c.containerID } },
    }));
    store.update(
      pods,
      { ...pod, status: { ...status, phase: ok ? 'Succeeded' : 'Failed', conditions, containerStatuses: statuses } },
      { subresource: 'status' },
    );
    if (!ok) podEvents.failed(pod, exitCode);
  }

  /** A deleted pod's running containers are stopped: one Killing Event per container, as the kubelet records. */
  function recordStopped(key: string): void {
    for (const pod of stopping.get(key) ?? []) podEvents.killing(pod);
    stopping.delete(key);
  }

  function reconcile(key: string): void {
    if (stopping.has(key)) recordStopped(key);
    const { namespace, name } = splitNsKey(key);
    const pod = store.peek(pods, namespace, name);
    let plan = plans.get(key);
    if (!pod || pod.metadata.deletionTimestamp || !isPlainObject(pod.spec)) {
      plans.delete(key);
      return;
    }
    if (plan && plan.uid !== pod.metadata.uid) {
      plans.delete(key); // the name was reused (StatefulSet pods): start over
      plan = undefined;
    }
    const status = isPlainObject(pod.status) ? pod.status : {};
    const now = Date.now();
    if (status.phase === undefined || status.phase === 'Pending') {
      if (!pod.spec.nodeName) {
        const bound = store.update(pods, { ...pod, spec: { ...pod.spec, nodeName: SANDBOX_NODE } });
        podEvents.scheduled(bound);
        return; // the MODIFIED event queues us again
      }
      if (!plan) {
        plan = { uid: pod.metadata.uid!, controls: podControls(pod, timings.readyDelayMs), startAt: now + timings.startDelayMs };
        plans.set(key, plan);
        later(key, plan.startAt);
        return;
      }
      if (now < plan.startAt) return later(key, plan.startAt);
      return start(pod, plan);
    }
    if (!plan || status.phase !== 'Running') {
      plans.delete(key);
      return;
    }
    if (plan.exitAt !== undefined && now >= plan.exitAt) {
      plans.delete(key);
      return exit(pod, plan.controls.exitCode ?? 0);
    }
    if (plan.readyAt !== undefined && now >= plan.readyAt) {
      plan.readyAt = undefined;
      becomeReady(pod);
    }
    const next = Math.min(plan.readyAt ?? Infinity, plan.exitAt ?? Infinity);
    if (next !== Infinity) later(key, next);
    else plans.delete(key);
  }

  return {
    name: 'kubelet',
    *keysFor(event) {
      if (event.kindKey !== '/Pod') return;
      const key = nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      if (event.type === 'DELETED') {
        const phase = isPlainObject(event.object.status) ? event.object.status.phase : undefined;
        if (phase === 'Running') stopping.set(key, [...(stopping.get(key) ?? []), event.object]);
        if (plans.has(key) || stopping.has(key)) yield key; // forget its timers, record Killing
        return;
      }
      const status = isPlainObject(event.object.status) ? event.object.status : {};
      if (status.phase === undefined || status.phase === 'Pending') yield key;
    },
    reconcile,
  };
}
