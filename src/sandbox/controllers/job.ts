/**
 * The Job controller: runs `spec.completions` (default 1) pods to success, at most `spec.parallelism` (default 1) at
 * a time, replacing failed ones at once (no back-off delay) until more than `spec.backoffLimit` (default 6) pods have
 * failed. The pretend kubelet ends a Job's pods Succeeded or Failed (see pod-controls.ts for run time and exit code);
 * restartPolicy OnFailure is treated like Never (a failed pod counts as a failure and is replaced by a new pod).
 * Finished Jobs get condition Complete (with completionTime) or Failed (BackoffLimitExceeded, active pods deleted).
 * `spec.suspend: true` starts no pods. Creates at most a burst of pods per reconcile and stops at the store's pod
 * capacity (FailedCreate).
 */
import type { ObjectStore } from '../store.js';
import { nowTimestamp, randomSuffix } from '../store.js';
import { isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef } from './owners.js';
import { BURST_PODS, createPodFor, isControlledBy, podFromTemplate, templateOf } from './pod-template.js';
import { podReady } from './pod-availability.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

const COMPONENT = 'job-controller';

function count(value: unknown, fallback: number): number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : fallback;
}

function phaseOf(pod: KubeObject): unknown {
  return isPlainObject(pod.status) ? pod.status.phase : undefined;
}

function finishedCondition(job: KubeObject): string | undefined {
  const status = isPlainObject(job.status) ? job.status : {};
  const conditions = Array.isArray(status.conditions) ? status.conditions.filter(isPlainObject) : [];
  return conditions.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True')?.type as string | undefined;
}

/** Creates the controller; `events` records SuccessfulCreate, Completed and BackoffLimitExceeded. */
export function createJobController(store: ObjectStore, events: EventRecorder): Controller {
  const jobs = store.registry.byKindKey('batch/Job')!;
  const pods = store.registry.byKindKey('/Pod')!;

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const job = store.peek(jobs, namespace, name);
    if (!job || job.metadata.deletionTimestamp || !isPlainObject(job.spec)) return;
    const spec = job.spec;
    const parallelism = count(spec.parallelism, 1);
    const completions = count(spec.completions, 1);
    const backoffLimit = count(spec.backoffLimit, 6);
    const owned = store.scan(pods, { namespace }).items.filter((p) => isControlledBy(p, job));
    const old = isPlainObject(job.status) ? job.status : {};
    // finished pods deleted by someone else still count: the counts never go down
    const succeeded = Math.max(count(old.succeeded, 0), owned.filter((p) => phaseOf(p) === 'Succeeded').length);
    const failed = Math.max(count(old.failed, 0), owned.filter((p) => phaseOf(p) === 'Failed').length);
    let active = owned.filter((p) => phaseOf(p) !== 'Succeeded' && phaseOf(p) !== 'Failed');
    const conditions = Array.isArray(old.conditions) ? old.conditions.filter(isPlainObject) : [];
    const now = nowTimestamp();
    let finished = finishedCondition(job);
    let completionTime = old.completionTime;
    const cond = (type: string, reason: string, message: string) => ({
      type,
      status: 'True',
      lastProbeTime: now,
      lastTransitionTime: now,
      reason,
      message,
    });

    if (!finished && failed > backoffLimit) {
      finished = 'Failed';
      conditions.push(cond('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
      conditions.push(cond('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'));
      events.record(job, 'Warning', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit', COMPONENT);
    } else if (!finished && succeeded >= completions) {
      finished = 'Complete';
      completionTime = now;
      conditions.push(cond('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'));
      conditions.push(cond('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods'));
      events.record(job, 'Normal', 'Completed', 'Job completed', COMPONENT);
    }
    if (finished) {
      for (const pod of active) {
        try {
          store.delete(pods, namespace, pod.metadata.name!);
          events.record(job, 'Normal', 'SuccessfulDelete', `Deleted pod: ${pod.metadata.name}`, COMPONENT);
        } catch {
          // already gone
        }
      }
      active = [];
    } else if (spec.suspend !== true) {
      const want = Math.min(parallelism, completions - succeeded);
      const template = templateOf(job);
      const labels = {
        'batch.kubernetes.io/controller-uid': job.metadata.uid!,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': job.metadata.uid!,
        'job-name': name,
      };
      // at most a burst per reconcile: each created pod's event queues this key again for the rest
      for (let i = active.length, end = Math.min(want, active.length + BURST_PODS); i < end; i++) {
        const pod = createPodFor(store, pods, job, podFromTemplate(job, template, `${name}-${randomSuffix()}`, labels), events, COMPONENT);
        if (!pod) break;
        active.push(pod);
        events.record(job, 'Normal', 'SuccessfulCreate', `Created pod: ${pod.metadata.name}`, COMPONENT);
      }
    }
    const status: Record<string, unknown> = {
      ...(conditions.length > 0 ? { conditions } : {}),
      startTime: old.startTime ?? now,
      ...(completionTime ? { completionTime } : {}),
      ...(active.length > 0 ? { active: active.length } : {}),
      ...(succeeded > 0 ? { succeeded } : {}),
      ...(failed > 0 ? { failed } : {}),
      ready: active.filter(podReady).length,
      terminating: 0,
      uncountedTerminatedPods: {},
    };
    const fresh = store.peek(jobs, namespace, name);
    if (fresh) store.update(jobs, { ...fresh, status }, { subresource: 'status' });
  }

  return {
    name: 'job',
    *keysFor(event) {
      if (event.kindKey === 'batch/Job') {
        if (event.type !== 'DELETED') yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      } else if (event.kindKey === '/Pod') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'Job') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}
