import { useEffect, useState } from 'preact/hooks';
import type { OperationRecord } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { isTerminal } from './format.js';
import { describePhases, operationPhases, PHASE_INFO, phaseLength } from './operation-phases.js';
import { TimelineBar } from './timeline-bar.js';

/** How often an open operation's running phase is redrawn. */
const TICK_MS = 1000;

/**
 * The operation page's timeline: where the operation's time went, as one bar of its phases (store, dispatch, agent,
 * Kubernetes, result; operation-phases.ts) proportional to their lengths, and under it a legend with, per phase in
 * order, its colour, its name (what it measures as the tooltip), its length and "slowest" after the longest — so
 * colour is never the only cue. The bar is an image named by the same text. While the operation is open its current
 * phase is measured to now, says "so far" and is redrawn every second, so a stuck operation visibly grows.
 */
export function OperationTimeline({ op }: { op: OperationRecord }) {
  const open = !isTerminal(op.state);
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!open) return undefined;
    const timer = setInterval(() => setNow(Date.now()), TICK_MS);
    return () => clearInterval(timer);
  }, [open]);
  const timeline = operationPhases(op, Math.max(now, Date.now()));
  if (timeline.phases.length === 0) return <p class="muted">No timing recorded yet.</p>;
  return (
    <div class="timeline" data-operation={op.id}>
      <TimelineBar timeline={timeline} size="full" label={`Timeline: ${describePhases(timeline)}`} />
      <ol class="timeline-legend" aria-label="Phases">
        {timeline.phases.map((p) => {
          const slowest = p.name === timeline.slowest;
          return (
            <li key={p.name} data-phase={p.name} class={slowest ? 'is-slowest' : undefined} title={PHASE_INFO[p.name].meaning}>
              <span class={`phase-swatch phase-${p.name}`} aria-hidden="true" />
              <span class="phase-name">{PHASE_INFO[p.name].label}</span> <span class="phase-ms">{phaseLength(p)}</span>
              {slowest && (
                <>
                  {' '}
                  <strong class="slowest-mark">slowest</strong>
                </>
              )}
            </li>
          );
        })}
      </ol>
    </div>
  );
}
