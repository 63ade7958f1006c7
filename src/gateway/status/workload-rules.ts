/**
 * Status rules of the rollout controllers — Deployment, ReplicaSet, StatefulSet, DaemonSet — with Clouddriver's
 * order and messages. The caller has already checked the object is `apps/v1` (the only version Clouddriver reads
 * them at). Where Clouddriver would crash on a field the API server always defaults (`updateStrategy`, the revisions),
 * the rules assume the API server's default instead.
 */
import {
  count,
  defaultStatus,
  generationMatches,
  type ManifestStatus,
  noStatusReported,
  numberField,
  OLD_GENERATION_MESSAGE,
  record,
  records,
  sameText,
  stableStatus,
  stringField,
  unavailableStatus,
  unstableStatus,
} from './status-model.js';

const AVAILABLE_REPLICAS = 'Waiting for all replicas to be available';
const FULLY_LABELED_REPLICAS = 'Waiting for all replicas to be fully-labeled';
const OLD_REPLICAS = 'Waiting for old replicas to finish termination';
const READY_REPLICAS = 'Waiting for all replicas to be ready';
const UPDATED_REPLICAS = 'Waiting for all replicas to be updated';

function messageOf(condition: Record<string, unknown>): string | null {
  return stringField(condition.message) ?? null;
}

/**
 * Deployment. Unlike the other kinds its checks accumulate: a paused condition, an `Available=False` condition, a
 * `ProgressDeadlineExceeded` condition and a replica-count shortfall can all show at once; the replica message
 * replaces the unavailable one on `stable`. Paused alone leaves the Deployment stable.
 */
export function deploymentStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  if (!generationMatches(object, status)) return unstableStatus(OLD_GENERATION_MESSAGE);

  const conditions = records(status.conditions);
  const result = defaultStatus();
  const paused = conditions.find((c) => sameText(c.reason, 'DeploymentPaused'));
  if (paused) result.paused = { state: true, message: messageOf(paused) };
  const unavailable = conditions.find((c) => sameText(c.type, 'Available') && sameText(c.status, 'False'));
  if (unavailable) {
    result.stable = { state: false, message: messageOf(unavailable) };
    result.available = { state: false, message: messageOf(unavailable) };
  }
  const deadline = conditions.find((c) => sameText(c.type, 'Progressing') && sameText(c.reason, 'ProgressDeadlineExceeded'));
  if (deadline) result.failed = { state: true, message: 'Deployment exceeded its progress deadline' };
  const shortfall = deploymentReplicaShortfall(count(record(object.spec)?.replicas), status);
  if (shortfall) result.stable = { state: false, message: shortfall };
  return result;
}

function deploymentReplicaShortfall(desired: number, status: Record<string, unknown>): string | undefined {
  const updated = count(status.updatedReplicas);
  if (updated < desired) return UPDATED_REPLICAS;
  if (count(status.replicas) > updated) return OLD_REPLICAS;
  if (count(status.availableReplicas) < desired) return AVAILABLE_REPLICAS;
  if (count(status.readyReplicas) < desired) return READY_REPLICAS;
  return undefined;
}

/** ReplicaSet: replica counts first (unstable and unavailable), the generation last. */
export function replicaSetStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  const desired = count(record(object.spec)?.replicas);
  let shortfall: string | undefined;
  if (desired > count(status.fullyLabeledReplicas)) shortfall = FULLY_LABELED_REPLICAS;
  else if (desired > count(status.readyReplicas)) shortfall = READY_REPLICAS;
  else if (desired > count(status.availableReplicas)) shortfall = AVAILABLE_REPLICAS;
  if (shortfall) return unavailableStatus(shortfall);
  if (!generationMatches(object, status)) return unstableStatus('Waiting for replicaset spec update to be observed');
  return defaultStatus();
}

/** The update strategy type, `RollingUpdate` when absent (the API server's default for both kinds). */
function updateStrategyOf(spec: Record<string, unknown> | undefined): { type: string; rollingUpdate?: Record<string, unknown> } {
  const strategy = record(spec?.updateStrategy);
  return { type: stringField(strategy?.type) ?? 'RollingUpdate', rollingUpdate: record(strategy?.rollingUpdate) };
}

/**
 * StatefulSet. `OnDelete` sets are always stable (checked before anything else, even a missing status). A
 * RollingUpdate set with `rollingUpdate` and `status.updatedReplicas` both present stops at the partition check:
 * unstable while fewer than `status.replicas − partition` pods are updated, else stable "Partitioned roll out
 * complete" — also when the partition or `status.replicas` is absent.
 */
export function statefulSetStatus(object: Record<string, unknown>): ManifestStatus {
  const spec = record(object.spec);
  const strategy = updateStrategyOf(spec);
  if (sameText(strategy.type, 'OnDelete')) return defaultStatus();
  const status = record(object.status);
  if (!status) return noStatusReported();
  if (!generationMatches(object, status)) return unstableStatus(OLD_GENERATION_MESSAGE);

  const desired = count(spec?.replicas);
  if (desired > count(status.replicas)) return unstableStatus('Waiting for at least the desired replica count to be met');
  if (desired > count(status.readyReplicas)) return unstableStatus('Waiting for all updated replicas to be ready');

  const updated = numberField(status.updatedReplicas);
  if (sameText(strategy.type, 'RollingUpdate') && updated !== undefined && strategy.rollingUpdate) {
    const partition = numberField(strategy.rollingUpdate.partition);
    const replicas = numberField(status.replicas);
    if (replicas !== undefined && partition !== undefined && updated < replicas - partition) {
      return unstableStatus('Waiting for partitioned roll out to finish');
    }
    return stableStatus('Partitioned roll out complete');
  }

  if (desired > count(status.currentReplicas)) return unstableStatus('Waiting for all updated replicas to be scheduled');
  if (status.currentRevision !== status.updateRevision) {
    return unstableStatus('Waiting for the updated revision to match the current revision');
  }
  return defaultStatus();
}

/**
 * DaemonSet. Any strategy but RollingUpdate is stable once the generation is observed. (Clouddriver also has a
 * "Waiting for daemonset spec update to be observed" check after the generation check; it can never fire.)
 */
export function daemonSetStatus(object: Record<string, unknown>): ManifestStatus {
  const status = record(object.status);
  if (!status) return noStatusReported();
  if (!generationMatches(object, status)) return unstableStatus(OLD_GENERATION_MESSAGE);
  if (!sameText(updateStrategyOf(record(object.spec)).type, 'RollingUpdate')) return defaultStatus();

  const desired = count(status.desiredNumberScheduled);
  if (desired > count(status.currentNumberScheduled)) return unstableStatus('Waiting for all replicas to be scheduled');
  if (desired > count(status.updatedNumberScheduled)) return unstableStatus('Waiting for all updated replicas to be scheduled');
  if (desired > count(status.numberAvailable)) return unstableStatus(AVAILABLE_REPLICAS);
  if (desired > count(status.numberReady)) return unstableStatus(READY_REPLICAS);
  return defaultStatus();
}
