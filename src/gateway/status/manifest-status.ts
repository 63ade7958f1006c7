/**
 * Clouddriver's status model of a live Kubernetes object — the one implementation the Spinnaker API (Orca's "wait
 * for manifest stable") and the dashboard share. `manifestStatus` picks the rules by kind as Clouddriver's handlers
 * do (Deployment, ReplicaSet, StatefulSet, DaemonSet, Pod, Job, CronJob, HorizontalPodAutoscaler; every other kind,
 * custom resources included, is always stable). `workload-health.ts` sums a status up in one word for people.
 */
import { REGISTERED_KINDS, registeredKindOf } from './kind-names.js';
import { defaultStatus, type ManifestStatus, stringField } from './status-model.js';
import { cronJobStatus, horizontalPodAutoscalerStatus, jobStatus, podStatus } from './pod-job-rules.js';
import { daemonSetStatus, deploymentStatus, replicaSetStatus, statefulSetStatus } from './workload-rules.js';

export type { ManifestStatus } from './status-model.js';

type Rules = (object: Record<string, unknown>) => ManifestStatus;

/** Rules per registered kind name; the rollout controllers are read at `apps/v1` only. */
const RULES: Record<string, { rules: Rules; appsV1Only: boolean }> = {
  deployment: { rules: deploymentStatus, appsV1Only: true },
  replicaSet: { rules: replicaSetStatus, appsV1Only: true },
  statefulSet: { rules: statefulSetStatus, appsV1Only: true },
  daemonSet: { rules: daemonSetStatus, appsV1Only: true },
  pod: { rules: podStatus, appsV1Only: false },
  job: { rules: jobStatus, appsV1Only: false },
  cronJob: { rules: cronJobStatus, appsV1Only: false },
  horizontalpodautoscaler: { rules: horizontalPodAutoscalerStatus, appsV1Only: false },
};

/** The Kubernetes `kind` names that have rules ("Deployment", "Pod"…), to narrow a query before hasStatusRules. */
export const STATUS_RULE_KINDS: readonly string[] = REGISTERED_KINDS.filter((k) => Object.hasOwn(RULES, k.name)).map((k) => k.kind);

/**
 * True when `apiVersion`/`kind` has rules of its own (the kinds listed above, in a Kubernetes group): only these
 * objects can be anything but stable, so only they get a health (workload-health.ts).
 */
export function hasStatusRules(apiVersion: string, kind: string): boolean {
  const registered = registeredKindOf(apiVersion, kind);
  return registered !== undefined && Object.hasOwn(RULES, registered.name);
}

/**
 * The status of `object` (a Kubernetes object as JSON: apiVersion, kind, metadata, spec, status), as Clouddriver
 * computes it for `GET /manifests/...`. Pass the object as read live from the API server: a cached copy older than
 * the last write can look stable (generation already observed) before the controller has seen the change.
 *
 * A Deployment, ReplicaSet, StatefulSet or DaemonSet at any apiVersion but `apps/v1` (e.g. `extensions/v1beta1`)
 * makes Clouddriver throw, so Orca sees HTTP 500 and polls until its stage times out. Waiting cannot change the
 * version an object is read at, so this returns unstable and **failed** with Clouddriver's exception text
 * ("No deployment is supported at api version extensions/v1beta1"): the stage fails at once with that reason.
 *
 * Returns a fresh object; never throws.
 */
export function manifestStatus(object: Record<string, unknown>): ManifestStatus {
  const apiVersion = stringField(object.apiVersion) ?? '';
  const kind = registeredKindOf(apiVersion, stringField(object.kind) ?? '');
  const entry = kind ? RULES[kind.name] : undefined;
  if (!entry) return defaultStatus();
  if (entry.appsV1Only && apiVersion.toLowerCase() !== 'apps/v1') {
    const message = `No ${kind!.name} is supported at api version ${apiVersion.toLowerCase()}`;
    const status = defaultStatus();
    status.stable = { state: false, message };
    status.failed = { state: true, message };
    return status;
  }
  return entry.rules(object);
}
