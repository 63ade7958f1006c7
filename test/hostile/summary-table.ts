/**
 * The hostile-input summary as markdown — printed by every run and committed in docs/hostile-input.md — and the
 * reverse: the categories a committed summary lists, so a test can tell when the document fell behind the suite. Also
 * a report as JSON, for `npm run hostile` to collect the report of a driver run in a process of its own.
 */
import { HOSTILE_CATEGORIES, type HostileCategory } from './hostile-case.js';
import { mb, type HostileReport } from './hostile-runner.js';

/** The table's header row. */
const TABLE_HEADER = '| category | cases | typed errors | accepted | failures |';

/** Renders one report: a header line, the table with its total, the checks, the error codes seen and any failures. */
export function renderReport(report: HostileReport): string {
  const rows = [TABLE_HEADER, '| --- | ---: | ---: | ---: | ---: |'];
  const total = { cases: 0, typed: 0, accepted: 0, failures: 0 };
  for (const category of Object.keys(HOSTILE_CATEGORIES) as HostileCategory[]) {
    const t = report.tallies.get(category)!;
    rows.push(`| ${category} | ${t.cases} | ${t.typed} | ${t.accepted} | ${t.failures} |`);
    total.cases += t.cases;
    total.typed += t.typed;
    total.accepted += t.accepted;
    total.failures += t.failures;
  }
  const checkFailures = report.failures.filter((f) => f.category === 'database').length;
  rows.push(`| **total** | **${total.cases}** | **${total.typed}** | **${total.accepted}** | **${total.failures}** |`);
  const codes = [...report.codes].sort((a, b) => b[1] - a[1]).map(([code, n]) => `${code} ${n}`);
  const lines = [
    `Seed ${report.seed}, ${report.driver}: ${report.cases} cases in ${report.batches} batches, ${(report.durationMs / 1000).toFixed(1)} s.`,
    '',
    ...rows,
    '',
    `Database compared before and after each of the ${report.batches} batches, gateway health checked after each: ${checkFailures} failure(s).`,
    '',
    peakRssLine(report),
    '',
    `Typed errors by code: ${codes.join(', ') || 'none'}.`,
  ];
  if (report.failures.length > 0) {
    lines.push('', `Failures (${report.failures.length}; rerun one with --seed ${report.seed} --cases ${report.cases} --case N):`);
    for (const f of report.failures.slice(0, 50)) lines.push(`- case ${f.index} [${f.category}] ${f.detail}`);
  }
  return lines.join('\n');
}

/** The RSS of the gateway's process at the start and its peak, where the peak was reached, and the bound. */
function peakRssLine(report: HostileReport): string {
  const { batch, first, last } = report.peakRssBatch;
  const where = batch > 0 ? ` in batch ${batch} (cases ${first}–${last})` : ' before the first batch';
  const since = report.peakRssWindowed ? '' : ' (the peak since the process started: it could not be reset)';
  const bound =
    report.rssBoundBytes === undefined
      ? 'no bound'
      : `bound ${mb(report.rssBoundBytes)}: ${report.peakRssBytes > report.rssBoundBytes ? 'exceeded' : 'kept'}`;
  return (
    `RSS of the gateway's process (the gateway, its database driver, the sandbox and the runner): ` +
    `peak ${mb(report.peakRssBytes)}${where}${since}, ${mb(report.startRssBytes)} at the start; ${bound}.`
  );
}

/** The category names of every summary table in `markdown` (first column, header and total rows left out). */
function documentedCategories(markdown: string): string[] {
  const out: string[] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith(TABLE_HEADER)) {
      inTable = true;
      continue;
    }
    if (!inTable) continue;
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const first = line.split('|')[1]!.trim();
    if (first.startsWith('---') || first === '**total**') continue;
    if (!out.includes(first)) out.push(first);
  }
  return out;
}

/** How a committed summary differs from the suite: categories it lacks, and ones it lists that no longer exist. */
export function categoryDrift(markdown: string): { missing: string[]; stale: string[] } {
  const listed = documentedCategories(markdown);
  const expected = Object.keys(HOSTILE_CATEGORIES);
  return { missing: expected.filter((c) => !listed.includes(c)), stale: listed.filter((c) => !expected.includes(c)) };
}

/** A report as JSON text (its maps as entry lists). */
export function reportToJson(report: HostileReport): string {
  return JSON.stringify({ ...report, tallies: [...report.tallies], codes: [...report.codes], verdicts: [...report.verdicts] });
}

/** The report {@link reportToJson} wrote. */
export function reportFromJson(text: string): HostileReport {
  const raw = JSON.parse(text);
  return { ...raw, tallies: new Map(raw.tallies), codes: new Map(raw.codes), verdicts: new Map(raw.verdicts) };
}
