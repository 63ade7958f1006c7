import { type Health, HealthState } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { healthTone, healthWord } from './health-badge.js';

/** The icon's box, in px; its top-left corner is where the mark is placed. */
const SIZE = 12;
const R = SIZE / 2;

/** One shape per state, so the state reads without colour: a check, a half-filled circle, a triangle, two bars, a "?". */
function Shape({ state }: { state: HealthState }) {
  switch (state) {
    case HealthState.HEALTHY:
      return (
        <>
          <circle cx={R} cy={R} r={R} class="mark-fill" />
          <path d="M3 6.2 L5.2 8.4 L9 4" class="mark-cut" />
        </>
      );
    case HealthState.PROGRESSING:
      return (
        <>
          <circle cx={R} cy={R} r={R - 0.75} class="mark-line" />
          <path d={`M${R} 0.75 A${R - 0.75} ${R - 0.75} 0 0 1 ${R} ${SIZE - 0.75} Z`} class="mark-fill" />
        </>
      );
    case HealthState.DEGRADED:
      return (
        <>
          <path d="M6 0.5 L11.8 11.5 L0.2 11.5 Z" class="mark-fill" />
          <path d="M6 4.2 L6 7.6 M6 9.2 L6 9.8" class="mark-cut" />
        </>
      );
    case HealthState.PAUSED:
      return (
        <>
          <rect x={2} y={1} width={3} height={10} class="mark-fill" />
          <rect x={7} y={1} width={3} height={10} class="mark-fill" />
        </>
      );
    default:
      return (
        <>
          <circle cx={R} cy={R} r={R - 0.75} class="mark-line" />
          <path d="M4.2 4.6 A1.8 1.8 0 1 1 6 6.4 L6 7.6 M6 9.2 L6 9.8" class="mark-cut mark-on-line" />
        </>
      );
  }
}

/**
 * A graph node's health line at (x, y) (the text's baseline): the state's shape and its word, tinted like the badges
 * (health.css, graph.css), the reason in the node's tooltip. Kinds without status rules read "no health rules" in
 * muted text: the graph claims no health the gateway did not compute. Tests find the state in `data-health`.
 */
export function GraphHealthMark({ health, x, y }: { health: Health | undefined; x: number; y: number }) {
  const word = healthWord(health);
  if (!health || !word) {
    return (
      <text x={x} y={y} class="graph-muted">
        no health rules
      </text>
    );
  }
  return (
    <g class={`graph-health tone-${healthTone(health)}`} data-health={word}>
      <g transform={`translate(${x} ${y - SIZE + 1})`}>
        <Shape state={health.state} />
      </g>
      <text x={x + SIZE + 6} y={y}>
        {word}
      </text>
    </g>
  );
}
