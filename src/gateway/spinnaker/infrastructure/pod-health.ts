/**
 * Pod health as Clouddriver's Kubernetes provider reports it (§3.7 of the Deck contract; `KubernetesHealth`,
 * `KubernetesModelUtil.getHealthState`): one entry from the pod phase and one per container status, folded into the
 * pod's `healthState`, and a server group's `instanceCounts` by those states. Deck colours instances by
 * `healthState` and draws health bars from the counts, so the rules follow Clouddriver's order exactly.
 */
import { arrayAt, type CachedObject, recordAt, textAt } from './object-facts.js';

/** Spinnaker's `HealthState` names. */
export type HealthState = 'Up' | 'Down' | 'Unknown' | 'Starting' | 'OutOfService' | 'Succeeded' | 'Failed';

/** One `KubernetesHealth` entry. */
export interface HealthEntry {
  type: 'kubernetes/pod' | 'kubernetes/container';
  source: string;
  state: HealthState;
}

/** The health entries of a pod: its phase (Pending → Down, Running → Up, else Unknown), then each container (ready → Up). */
export function healthEntriesOf(pod: CachedObject): HealthEntry[] {
  const status = recordAt(pod, 'status');
  if (Object.keys(status).length === 0) return [];
  const entries: HealthEntry[] = [];
  const phase = textAt(status, 'phase');
  entries.push({ type: 'kubernetes/pod', source: 'Pod', state: phase === 'Pending' ? 'Down' : phase === 'Running' ? 'Up' : 'Unknown' });
  for (const container of arrayAt(status, 'containerStatuses')) {
    entries.push({
      type: 'kubernetes/container',
      source: `Container ${textAt(container, 'name')}`,
      state: recordAt(container).ready === true ? 'Up' : 'Down',
    });
  }
  return entries;
}

/**
 * The state of an instance from its entries: every known entry Up (at least one) → Up; else every known entry Succeeded
 * → Succeeded; else any Starting, Down, Failed, OutOfService (in that order) wins; else Unknown.
 */
export function healthStateOf(entries: readonly HealthEntry[]): HealthState {
  const known = entries.map((e) => e.state).filter((s) => s !== 'Unknown');
  if (known.length > 0 && known.every((s) => s === 'Up')) return 'Up';
  if (known.length > 0 && known.every((s) => s === 'Succeeded')) return 'Succeeded';
  for (const state of ['Starting', 'Down', 'Failed', 'OutOfService'] as const) if (known.includes(state)) return state;
  return 'Unknown';
}

/** Clouddriver's `InstanceCounts`. */
export interface InstanceCounts {
  total: number;
  up: number;
  down: number;
  unknown: number;
  outOfService: number;
  starting: number;
}

/** Counts instances by state (Succeeded and Failed count only in `total`, as in Clouddriver). */
export function instanceCountsOf(states: readonly HealthState[]): InstanceCounts {
  const counts: InstanceCounts = { total: states.length, up: 0, down: 0, unknown: 0, outOfService: 0, starting: 0 };
  for (const state of states) {
    if (state === 'Up') counts.up++;
    else if (state === 'Down') counts.down++;
    else if (state === 'Unknown') counts.unknown++;
    else if (state === 'OutOfService') counts.outOfService++;
    else if (state === 'Starting') counts.starting++;
  }
  return counts;
}
