/**
 * Health of a workload for people (the dashboard's badges and counts), derived only from Clouddriver's status model
 * (manifest-status.ts) — the same one the Spinnaker API answers `status.stable/paused/available/failed` with, so
 * the dashboard and Orca never disagree about an object.
 *
 * Which kinds get a health: exactly those with status rules — Deployment, ReplicaSet, StatefulSet, DaemonSet (apps),
 * Pod, Job, CronJob, HorizontalPodAutoscaler. Every other kind (ConfigMap, Service, custom resources…) is "always
 * stable" in Clouddriver, which says nothing about it; those get no health at all (`undefined`) rather than a Healthy
 * nobody checked.
 */
import { hasStatusRules, manifestStatus } from './manifest-status.js';
import { podNotReadyReason } from './pod-readiness.js';
import { type ManifestStatus, NO_STATUS_MESSAGE, record, stringField } from './status-model.js';

/** One word for a status. */
export type Health = 'Healthy' | 'Progressing' | 'Degraded' | 'Paused' | 'Unknown';

/** A health word and the sentence that explains it. */
export interface HealthSummary {
  health: Health;
  reason: string;
}

/**
 * The spec fields the status rules read (besides apiVersion, kind, metadata.generation and the whole status). A
 * caller that reads a slimmed object to save work (SummarizeHealth) keeps exactly these; a rule that starts reading
 * another spec field must add it here (test/gateway/workload-health.test.ts compares slim and full objects).
 */
export const STATUS_SPEC_FIELDS: readonly string[] = ['replicas', 'completions', 'updateStrategy'];

/**
 * Sums up a status, the first match winning:
 * - failed → Degraded (a progress deadline exceeded, a failed Job, a rollout kind at an unsupported apiVersion);
 * - paused → Paused;
 * - no status reported (or no status at all, `undefined`) → Unknown;
 * - not stable → Progressing, with the stable message ("Waiting for all replicas to be updated");
 * - not available (while stable) → Degraded, with the available message. Clouddriver's rules never mark an object
 *   unavailable without also marking it unstable, so an unavailable object normally shows Progressing: being short
 *   of ready replicas is what every rollout and scale-up goes through, and a rollout that is stuck rather than slow
 *   is told apart only by its progress deadline, which is `failed`. Stable yet unavailable would be a broken
 *   object, not a converging one;
 * - else Healthy.
 * The reason is the deciding condition's message, or a short fallback when the rule gives none.
 */
export function healthOf(status: ManifestStatus | undefined): HealthSummary {
  if (!status) return { health: 'Unknown', reason: 'No status' };
  if (status.failed.state) return { health: 'Degraded', reason: status.failed.message ?? 'Failed' };
  if (status.paused.state) return { health: 'Paused', reason: status.paused.message ?? 'Paused' };
  if (!status.stable.state && status.stable.message === NO_STATUS_MESSAGE) return { health: 'Unknown', reason: NO_STATUS_MESSAGE };
  if (!status.stable.state) return { health: 'Progressing', reason: status.stable.message ?? 'Not yet stable' };
  if (!status.available.state) return { health: 'Degraded', reason: status.available.message ?? 'Not available' };
  return { health: 'Healthy', reason: status.stable.message ?? 'Stable' };
}

/**
 * The health of a cached object (Kubernetes JSON), or undefined for a kind without status rules. Never throws. One
 * addition to the status model: a Running Pod whose containers are not all ready is Progressing with the containers
 * named (pod-readiness.ts: Clouddriver counts such a Pod Down in its instance health, though its manifest status,
 * which Orca waits on, is stable). The
 * cache lags the cluster by a watch event, so a Deployment just changed may read Healthy for a moment before its
 * controller's status arrives; the next event corrects it.
 */
export function workloadHealth(object: Record<string, unknown>): HealthSummary | undefined {
  if (!hasStatusRules(stringField(object.apiVersion) ?? '', stringField(object.kind) ?? '')) return undefined;
  const summary = healthOf(manifestStatus(object));
  if (summary.health === 'Healthy' && object.kind === 'Pod') {
    const notReady = podNotReadyReason(object);
    if (notReady) return { health: 'Progressing', reason: notReady };
  }
  return summary;
}

/** `object` reduced to what the status rules read (see STATUS_SPEC_FIELDS); the result gives the same health. */
export function statusInputOf(object: Record<string, unknown>): Record<string, unknown> {
  const spec = record(object.spec);
  const metadata = record(object.metadata);
  const slim: Record<string, unknown> = { apiVersion: object.apiVersion, kind: object.kind };
  if (metadata) slim.metadata = { generation: metadata.generation };
  if (spec) slim.spec = Object.fromEntries(STATUS_SPEC_FIELDS.filter((f) => f in spec).map((f) => [f, spec[f]]));
  if ('status' in object) slim.status = object.status;
  return slim;
}
