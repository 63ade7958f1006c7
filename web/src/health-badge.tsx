import { type Health, HealthState } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import type { Tone } from './format.js';

/** The word shown for each health state; UNSPECIFIED (kinds without status rules) has none. */
const WORDS: Partial<Record<HealthState, string>> = {
  [HealthState.HEALTHY]: 'Healthy',
  [HealthState.PROGRESSING]: 'Progressing',
  [HealthState.DEGRADED]: 'Degraded',
  [HealthState.PAUSED]: 'Paused',
  [HealthState.UNKNOWN]: 'Unknown',
};

const TONES: Partial<Record<HealthState, Tone>> = {
  [HealthState.HEALTHY]: 'good',
  [HealthState.PROGRESSING]: 'busy',
  [HealthState.DEGRADED]: 'bad',
};

/** "Healthy", "Progressing"…; undefined when the object has no health (a ConfigMap). */
export function healthWord(health: Health | undefined): string | undefined {
  return health ? WORDS[health.state] : undefined;
}

/** The tone a health state is tinted with (`neutral` for Paused and Unknown): the same in badges and the graph. */
export function healthTone(health: Health): Tone {
  return TONES[health.state] ?? 'neutral';
}

/**
 * A workload's health as the gateway computed it (ObjectService sets it on every object): the word in a tinted
 * pill, and its reason — as visible text after the pill with `withReason` (the object page), otherwise as a tooltip
 * plus text only screen readers get (tables, trees), so the row stays one line. Objects without health show a muted
 * dash: no health is claimed for kinds the status model has no rules for. Tests find the pill by `data-health`.
 */
export function HealthBadge({ health, withReason = false }: { health: Health | undefined; withReason?: boolean }) {
  const word = healthWord(health);
  if (!health || !word) return <span class="muted">—</span>;
  const tone = healthTone(health);
  return (
    <span class="health">
      <span class={`badge tone-${tone}`} data-health={word} title={withReason ? undefined : health.reason}>
        {word}
      </span>
      {health.reason &&
        (withReason ? <span class="health-reason">{health.reason}</span> : <span class="visually-hidden">: {health.reason}</span>)}
    </span>
  );
}
