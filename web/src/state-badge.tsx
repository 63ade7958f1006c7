import { stateTone } from './format.js';

/**
 * A state name in a tinted pill ("ACTIVE", "FAILED", "SUCCEEDED"). The text is the state itself, so the colour
 * is decoration only; all tones meet 4.5:1 contrast (see styles.css).
 */
export function StateBadge({ state }: { state: string }) {
  if (!state) return <span class="muted">—</span>;
  return <span class={`badge tone-${stateTone(state)}`}>{state}</span>;
}
