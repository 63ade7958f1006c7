import { useEffect, useRef, useState } from 'preact/hooks';
import type uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatLocalMs } from './format.js';
import { type ChartSpec, formatValue, summarize } from './history-data.js';

/** Chart height in CSS pixels (the width follows the box). */
const HEIGHT = 160;

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** Follows the system's colour scheme, so a chart is drawn again in the new colours when it changes. */
function useColorScheme(): boolean {
  const query = typeof window === 'undefined' ? undefined : window.matchMedia('(prefers-color-scheme: dark)');
  const [dark, setDark] = useState(query?.matches ?? false);
  useEffect(() => {
    if (!query) return;
    const on = () => setDark(query.matches);
    query.addEventListener('change', on);
    return () => query.removeEventListener('change', on);
  }, [query]);
  return dark;
}

/** Tick increments of a count axis: whole numbers. */
const COUNT_INCREMENTS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000];

/** A time tick in local 24-hour time: with seconds when ticks are less than a minute apart. */
function clockText(unixSeconds: number, increment: number): string {
  const local = formatLocalMs(unixSeconds * 1000);
  return increment < 60 ? local.slice(11, 19) : local.slice(11, 16);
}

/** A value tick: up to two decimals, with its unit (`/s` on rates, `ms`, none on counts). */
function axisText(v: number, unit: string): string {
  const text = v.toLocaleString('en-US', { maximumFractionDigits: 2 });
  return unit === '' ? text : unit === '/s' ? `${text}/s` : `${text} ${unit}`;
}

function optionsOf(UPlot: typeof uPlot, spec: ChartSpec, width: number): uPlot.Options {
  const axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--border'), width: 1 }, ticks: { stroke: cssVar('--border') } };
  const stepped = UPlot.paths.stepped?.({ align: 1 });
  return {
    width,
    height: HEIGHT,
    legend: { show: false },
    cursor: { drag: { x: false, y: false } },
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      { ...axis, values: (_u, splits, _axis, _space, incr) => splits.map((s) => clockText(s, incr)) },
      {
        ...axis,
        size: 64,
        // Counts (agents, accounts) tick on whole numbers only.
        ...(spec.unit === '' ? { incrs: COUNT_INCREMENTS } : {}),
        values: (_u, splits) => splits.map((s) => axisText(s, spec.unit)),
      },
    ],
    series: [
      {},
      ...spec.lines.map((line) => ({
        label: line.label,
        stroke: cssVar(`--chart-${line.color}`),
        width: 2,
        spanGaps: false,
        points: { show: false },
        ...(line.stepped && stepped ? { paths: stepped } : {}),
      })),
    ],
  };
}

function dataOf(spec: ChartSpec): uPlot.AlignedData {
  return [spec.times, ...spec.lines.map((l) => l.values)];
}

/**
 * One time series chart: uPlot on a canvas (fast at thousands of points, no SVG per point), its own legend with
 * each line's latest and peak value in words, and the value under the pointer. The canvas is hidden from
 * screen readers: the legend says what it shows. Drawn again when the data, the width or the colour scheme change.
 */
export function TimeSeriesChart({ spec, rangeText }: { spec: ChartSpec; rangeText: string }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const specRef = useRef(spec);
  specRef.current = spec;
  const dark = useColorScheme();
  const [hover, setHover] = useState<number | null>(null);
  const shape = `${spec.id}|${spec.lines.map((l) => `${l.label}:${l.color}`).join(',')}|${dark}`;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let u: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let gone = false;
    // uPlot is its own chunk (the build output lists its size), loaded with the first chart.
    void import('uplot').then(({ default: UPlot }) => {
      if (gone) return;
      const opts = optionsOf(UPlot, spec, Math.max(200, el.clientWidth));
      opts.hooks = { setCursor: [(p) => setHover(p.cursor.idx ?? null)] };
      const created = new UPlot(opts, dataOf(specRef.current), el);
      u = created;
      plot.current = created;
      resize = new ResizeObserver(() => created.setSize({ width: Math.max(200, el.clientWidth), height: HEIGHT }));
      resize.observe(el);
    });
    return () => {
      gone = true;
      resize?.disconnect();
      u?.destroy();
      plot.current = null;
    };
    // Recreated only when the lines or the scheme change; new data goes through setData below.
  }, [shape]);

  useEffect(() => {
    plot.current?.setData(dataOf(spec));
  }, [spec]);

  const summary = summarize(spec);
  const at = hover !== null ? spec.times[hover] : undefined;
  return (
    <figure class="chart" data-chart={spec.id} data-points={spec.times.length}>
      <figcaption>
        <span class="chart-title">{spec.title}</span>
        <span class="muted"> · {rangeText}</span>
      </figcaption>
      <div class="chart-canvas" ref={box} aria-hidden="true" />
      <ul class="chart-legend">
        {summary.map((s, i) => (
          <li key={s.label} data-line={s.label} data-latest={s.latest ?? ''} data-peak={s.peak ?? ''}>
            <span class={`swatch chart-${spec.lines[i]!.color}`} aria-hidden="true" />
            <span class="chart-line-label">{s.label}</span>{' '}
            {at !== undefined ? (
              <span>
                {formatValue(spec.lines[i]!.values[hover!] ?? null, spec.unit)} at {formatLocalMs(at * 1000).slice(11)}
              </span>
            ) : (
              <span>
                latest {formatValue(s.latest, spec.unit)}, peak {formatValue(s.peak, spec.unit)}
              </span>
            )}
          </li>
        ))}
      </ul>
    </figure>
  );
}
