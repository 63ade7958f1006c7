import { Fragment } from 'preact';
import { describePhase, describePhases, type OperationPhases } from './operation-phases.js';

/** Width of a share in percent, with enough digits that a 1 px phase of a 2,000 px bar keeps its size. */
const percent = (part: number, whole: number): string => `${whole > 0 ? ((part / whole) * 100).toFixed(4) : '0'}%`;

/**
 * An operation's phases as one horizontal SVG bar, each phase a `<rect>` as wide as its share of the whole (the
 * widths are SVG attributes in percent, not style attributes: the dashboard's CSP, `style-src 'self'`, would drop
 * those), coloured by its `phase-{name}` class (styles/timeline.css) and carrying `data-phase` and `data-ms` for
 * tests. `size` picks the operation page's bar or the history's small one. With `label` the bar is an image named
 * by it; without, it is decoration and hidden from assistive technology, so callers must show the phases as text
 * beside it (the legend, the history's breakdown).
 */
export function TimelineBar({ timeline, size, label }: { timeline: OperationPhases; size: 'full' | 'mini'; label?: string }) {
  let x = 0;
  return (
    <svg
      class={`timeline-bar timeline-${size}`}
      role={label ? 'img' : undefined}
      aria-label={label}
      aria-hidden={label ? undefined : 'true'}
      focusable="false"
      data-total-ms={timeline.totalMs}
    >
      <rect class="timeline-track" width="100%" height="100%" />
      {timeline.phases.map((p) => {
        const at = x;
        x += p.ms;
        return (
          <rect
            key={p.name}
            class={`phase-fill phase-${p.name}${p.status === 'running' ? ' is-running' : ''}`}
            x={percent(at, timeline.totalMs)}
            width={percent(p.ms, timeline.totalMs)}
            height="100%"
            data-phase={p.name}
            data-ms={p.ms}
          />
        );
      })}
    </svg>
  );
}

/**
 * The history's timing under a row's total: the small bar, then the same phases as text with the slowest in bold,
 * the whole timeline (with "slowest: …") as the tooltip and as `data-timeline`. Callers compute every row's
 * timeline with the same `now`, so running phases compare.
 */
export function TimelineCell({ timeline }: { timeline: OperationPhases }) {
  const tooltip = describePhases(timeline);
  return (
    <span class="timeline-cell" title={tooltip} data-timeline={tooltip}>
      <TimelineBar timeline={timeline} size="mini" />
      <small class="breakdown">
        {timeline.phases.length === 0
          ? 'no timing yet'
          : timeline.phases.map((p, i) => (
              <Fragment key={p.name}>
                {i > 0 && ' · '}
                <span data-phase={p.name}>{p.name === timeline.slowest ? <strong>{describePhase(p)}</strong> : describePhase(p)}</span>
              </Fragment>
            ))}
      </small>
    </span>
  );
}
