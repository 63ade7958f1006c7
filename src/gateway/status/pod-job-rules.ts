/**
 * Status rules of the kinds that have rules but no rollout — Pod, Job, CronJob, HorizontalPodAutoscaler — with
 * Clouddriver's messages. None of them checks the apiVersion.
 */
import {
  count,
  defaultStatus,
  failedStatus,
  type ManifestStatus,
  noStatusReported,
  numberField,
  record,
  records,
  sameText,
  stringField,
  unavailableStatus,
  unstableStatus,
} from './status-model.js';

/** Unstable phases and their messages. Phases are matched exactly (case included); any other phase is "unknown". */
const UNSTABLE_POD_PHASES: Record<string, string> = {
  Pending: 'Pod is pending',
  Failed: 'Pod has failed',
  Unknown: 'Pod phase is unknown',
};

/**
 * Pod: `Running` and `Succeeded` are stable; `Pending`, `Failed`, a missing or unrecognised phase are unstable and
 * unavailable. A failed Pod is not `failed` (Orca keeps waiting on it until its stage times out), as in Clouddriver.
 */
export function podStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  const phase = stringField(status.phase);
  if (phase === 'Running' || phase === 'Succeeded') return defaultStatus();
  const known = phase !== undefined && Object.hasOwn(UNSTABLE_POD_PHASES, phase);
  return unavailableStatus(UNSTABLE_POD_PHASES[known ? phase : 'Unknown']!);
}

/**
 * Job: done once `status.succeeded` reaches `spec.completions` (1 when absent). Before that a `Failed=True`
 * condition makes it failed with the condition's message (stable is left true); otherwise it is waiting.
 */
export function jobStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  const completions = numberField(record(object.spec)?.completions) ?? 1;
  if (count(status.succeeded) >= completions) return defaultStatus();
  const failed = records(status.conditions).find((c) => sameText(c.type, 'Failed') && sameText(c.status, 'True'));
  if (failed) return failedStatus(stringField(failed.message) ?? null);
  return unstableStatus('Waiting for jobs to finish');
}

/** CronJob: only a missing status counts (an empty `status: {}` is stable). */
export function cronJobStatus(object: Record<string, unknown>): ManifestStatus {
  return record(object.status) ? defaultStatus() : noStatusReported();
}

/** HorizontalPodAutoscaler: unstable while `status.currentReplicas` differs from `status.desiredReplicas`. */
export function horizontalPodAutoscalerStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  const desired = count(status.desiredReplicas);
  const current = count(status.currentReplicas);
  if (desired > current) {
    return unstableStatus(`Waiting for HPA to complete a scale up, current: ${current} desired: ${desired}`);
  }
  if (desired < current) {
    return unstableStatus(`Waiting for HPA to complete a scale down, current: ${current} desired: ${desired}`);
  }
  return defaultStatus();
}
