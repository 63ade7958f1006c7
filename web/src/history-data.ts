import type { GetHistoryResponse } from '../../src/gen/outpost/api/v1/metrics_service_pb.js';

/** The palette of chart lines (styles/charts.css defines each, for light and dark). */
type LineColor = 'blue' | 'green' | 'red' | 'amber' | 'violet' | 'teal' | 'grey' | 'pink';

/** Account states with a colour of their own; others take the remaining colours in turn. */
const STATE_COLORS: Record<string, LineColor> = { ACTIVE: 'green', FAILED: 'red', DELETE_FAILED: 'red', INACTIVE: 'grey' };
const OTHER_COLORS: LineColor[] = ['teal', 'amber', 'violet', 'pink'];

/** One line of a chart: its label and one value per time (null where unknown: the line breaks there). */
interface ChartLine {
  label: string;
  color: LineColor;
  values: (number | null)[];
  /** Draw as steps (states: a count holds until the next sample). */
  stepped?: boolean;
}

/** One chart: what it shows, its unit, its lines over the shared times. */
export interface ChartSpec {
  id: string;
  title: string;
  /** Unit of the values, for the axis and the text summary (`/s`, `ms`, ``). */
  unit: string;
  times: number[];
  lines: ChartLine[];
}

/** The text a chart is summarised by (screen readers, and anyone who prefers words): per line, latest and peak. */
export interface LineSummary {
  label: string;
  latest: number | null;
  peak: number | null;
}

const known = (v: number): number | null => (Number.isFinite(v) ? v : null);

/**
 * The charts of a GetHistory answer, in the order an operator on call reads them: is data flowing (events), are
 * operations failing, are they slow, are agents and accounts where they should be. `fleet` adds the connected
 * agents; an account's states are 0/1 lines, the fleet's are counts. Lines that are zero throughout are kept for the
 * outcomes (an all-zero "failed" is news), dropped for states that never occur.
 */
export function chartsOf(history: GetHistoryResponse, fleet: boolean): ChartSpec[] {
  const times = [...history.times];
  const line = (label: string, color: LineColor, values: number[], stepped = false): ChartLine => ({
    label,
    color,
    values: values.map(known),
    stepped,
  });
  let other = 0;
  const stateColor = (state: string) => STATE_COLORS[state] ?? OTHER_COLORS[other++ % OTHER_COLORS.length]!;
  return [
    { id: 'events', title: 'Object events per second', unit: '/s', times, lines: [line('events', 'blue', history.eventsPerSecond)] },
    {
      id: 'operations',
      title: 'Operations ended per second, by outcome',
      unit: '/s',
      times,
      lines: [
        line('succeeded', 'green', history.succeededPerSecond),
        line('failed', 'red', history.failedPerSecond),
        line('timed out', 'amber', history.timedOutPerSecond),
      ],
    },
    {
      id: 'latency',
      title: 'Operation latency, reception to end',
      unit: 'ms',
      times,
      lines: [line('p50', 'blue', history.latencyP50Ms), line('p99', 'violet', history.latencyP99Ms)],
    },
    {
      id: 'states',
      title: fleet ? 'Connected agents and accounts by state' : 'Account state',
      unit: '',
      times,
      lines: [
        ...(fleet ? [line('connected agents', 'blue', history.connectedAgents, true)] : []),
        ...history.states.map((s) => line(s.state, stateColor(s.state), s.values, true)),
      ],
    },
  ];
}

/** Latest and peak of each line (null when the line has no known value). */
export function summarize(spec: ChartSpec): LineSummary[] {
  return spec.lines.map((l) => {
    const present = l.values.filter((v): v is number => v !== null);
    return {
      label: l.label,
      latest: [...l.values].reverse().find((v): v is number => v !== null) ?? null,
      peak: present.length > 0 ? Math.max(...present) : null,
    };
  });
}

/** A value with its unit, rounded for reading: `0.25/s`, `1,204 ms`, `12`. */
export function formatValue(v: number | null, unit: string): string {
  if (v === null) return '—';
  const digits = v !== 0 && Math.abs(v) < 10 && unit !== '' ? 2 : 0;
  const text = v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
  return unit === '' ? text : unit === '/s' ? `${text}/s` : `${text} ${unit}`;
}
