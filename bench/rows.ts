/**
 * Rows of the benchmark table. Every figure is a per-run value (a latency percentile of one run, one run's rate…);
 * a row shows the median over the runs and their range, next to the target it is judged against. Scenarios build
 * their rows with {@link figureRow}; bench/report.ts renders them.
 */

/** One row of the results table. */
export interface Row {
  scenario: string;
  measure: string;
  /** Median over the runs, formatted. */
  value: string;
  /** Lowest – highest over the runs, formatted ('' with one run). */
  range: string;
  target: string;
  /** '✔', '✘', 'n/a (too small)' when the run was too small to judge its target, or '' when the row has none. */
  met: string;
}

/** Median (the lower middle value for an even count) of a sample; NaN when empty. */
function median(values: number[]): number {
  const xs = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return xs.length === 0 ? NaN : xs[Math.floor((xs.length - 1) / 2)]!;
}

/** `x` with `digits` decimals, 'n/a' when not a finite number. */
function fixed(x: number, digits: number): string {
  return Number.isFinite(x) ? x.toFixed(digits) : 'n/a';
}

/** Options of {@link figureRow}. */
export interface FigureOptions {
  digits?: number;
  /** Shown in the target column. */
  target?: string;
  /** Judges the median; absent for figures without a target. */
  meets?: (median: number) => boolean;
  /** False when this run is too small to judge the target (a --quick run, or below the size the target is set for): the met column says so. */
  judged?: boolean;
}

/** A row for one figure measured once per run. */
export function figureRow(scenario: string, measure: string, perRun: number[], options: FigureOptions = {}): Row {
  const digits = options.digits ?? 1;
  const m = median(perRun);
  const finite = perRun.filter((x) => Number.isFinite(x));
  const range = finite.length > 1 ? `${fixed(Math.min(...finite), digits)} – ${fixed(Math.max(...finite), digits)}` : '';
  let met = '';
  if (options.meets) met = options.judged === false ? 'n/a (too small)' : options.meets(m) ? '✔' : '✘';
  return { scenario, measure, value: fixed(m, digits), range, target: options.target ?? '', met };
}
