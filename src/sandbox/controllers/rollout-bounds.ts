/**
 * A Deployment's rolling-update fenceposts, resolved as Kubernetes resolves them (`deploymentutil.ResolveFenceposts`,
 * `MaxSurge`, `MaxUnavailable`): `maxSurge` (default 25%) and `maxUnavailable` (default 25%) are a number of pods or a
 * percentage of spec.replicas — maxSurge rounds up, maxUnavailable rounds down — and when both come to 0 (rounding can
 * do that) maxUnavailable becomes 1 so the rollout can still move. A value Kubernetes would refuse (a string that is not
 * a percentage, a negative number) counts as the default here: the sandbox paces what it can rather than stopping.
 * The Recreate strategy has no fenceposts (both 0).
 */
import { isPlainObject, type KubeObject } from '../types.js';

/** How far a rolling update may go above and below spec.replicas. */
export interface RolloutBounds {
  /** Pods allowed above spec.replicas, across all of the Deployment's ReplicaSets. */
  maxSurge: number;
  /** Pods allowed to be unavailable below spec.replicas (at most spec.replicas). */
  maxUnavailable: number;
}

const DEFAULT_FENCEPOST = '25%';

function strategyOf(deployment: KubeObject): Record<string, unknown> {
  const spec = isPlainObject(deployment.spec) ? deployment.spec : {};
  return isPlainObject(spec.strategy) ? spec.strategy : {};
}

/** True unless the Deployment's strategy is Recreate (RollingUpdate is the default). */
export function isRollingUpdate(deployment: KubeObject): boolean {
  return strategyOf(deployment).type !== 'Recreate';
}

/** An int-or-percent against `total`, rounded up or down; undefined when it is neither. */
function scaled(value: unknown, total: number, roundUp: boolean): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 ? value : undefined;
  const m = typeof value === 'string' ? /^(\d+)%$/.exec(value) : null;
  if (!m) return undefined;
  const exact = (total * Number(m[1])) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

/** The fenceposts of a Deployment whose spec.replicas is `desired`. */
export function rolloutBounds(deployment: KubeObject, desired: number): RolloutBounds {
  const strategy = strategyOf(deployment);
  if (strategy.type === 'Recreate') return { maxSurge: 0, maxUnavailable: 0 };
  const rolling = isPlainObject(strategy.rollingUpdate) ? strategy.rollingUpdate : {};
  const resolve = (value: unknown, roundUp: boolean) =>
    scaled(value ?? DEFAULT_FENCEPOST, desired, roundUp) ?? scaled(DEFAULT_FENCEPOST, desired, roundUp)!;
  const maxSurge = resolve(rolling.maxSurge, true);
  let maxUnavailable = resolve(rolling.maxUnavailable, false);
  if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
  // Kubernetes' MaxUnavailable: never more than the replicas there are, and none for a Deployment scaled to 0
  return { maxSurge, maxUnavailable: Math.min(maxUnavailable, Math.max(0, desired)) };
}
