/**
 * `npm run bench:readme [-- FILE.json] [-- --before EARLIER.json] [-- --check]`: writes the benchmark tables of
 * docs/benchmarks.md and the headline summary in README.md from committed results files, so the figures users read
 * are the figures a run wrote.
 *
 * docs/benchmarks.md holds one or more sections, each between `<!-- bench:start FILE [EARLIER] -->` and
 * `<!-- bench:end -->`. The first is the latest run of every scenario: it is rendered from FILE (the newest in
 * bench/results/ unless one is named), with `--before` adding a column of an earlier run's values (before/after a
 * change). Every other section is rendered again from the files its own marker names (add one by writing its
 * markers by hand). The README's summary, between `<!-- bench:summary FILE -->` and `<!-- bench:end -->`, is the
 * {@link HEADLINES} rows of the first section's run.
 *
 * `--check` changes nothing and exits 1 when either file is not what its marked results files render to (the test
 * suite runs it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderSetup, renderTable, resultRows, type BenchResults } from './report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The page holding the benchmark tables, and the README holding their summary (relative to the root). */
export const BENCH_DOC = 'docs/benchmarks.md';
export const README = 'README.md';
const SECTION = /<!-- bench:start (\S+)(?: (\S+))? -->\n[\s\S]*?<!-- bench:end -->/g;
const SUMMARY = /<!-- bench:summary (\S+) -->\n[\s\S]*?<!-- bench:end -->/;

/**
 * The rows of the README summary, in order: the first row whose scenario and measure start with these. A run that
 * lacks one (a run of some scenarios only) cannot feed the summary.
 */
export const HEADLINES: readonly { scenario: string; measure: string }[] = [
  { scenario: 'initial sync', measure: 'seconds, agent start →' },
  { scenario: 'churn', measure: 'change → committed row, p99 ms' },
  // "operations (get)" in runs from before reads stopped being stored, "operations (merge patch, stored)" since.
  { scenario: 'operations (', measure: 'overhead, p99 ms' },
  { scenario: 'failover', measure: 'seconds, kill → first successful operation, p99' },
  { scenario: 'connection scale', measure: 'gateway RSS per agent, KiB' },
];

/** A results file and its path relative to the repository root. */
export interface ResultsFile {
  file: string;
  results: BenchResults;
}

/**
 * One section of docs/benchmarks.md (markers included), with an optional earlier run to compare with. `first`: the
 * section `npm run bench:readme -- FILE` writes; the others are only rendered again from their own files.
 */
export function renderBenchmarkSection(current: ResultsFile, before?: ResultsFile, first = true): string {
  const regenerate = first
    ? `regenerate this section with \`npm run bench:readme -- ${current.file}${before ? ` --before ${before.file}` : ''}\``
    : 'rendered again from that file by `npm run bench:readme`';
  return [
    `<!-- bench:start ${current.file}${before ? ` ${before.file}` : ''} -->`,
    `Measured by \`npm run bench\` on ${current.results.started.slice(0, 10)} (\`${current.file}\`; ${regenerate}).`,
    ...renderSetup(current.results, before),
    '',
    ...renderTable(current.results, before?.results),
    '<!-- bench:end -->',
  ].join('\n');
}

/** The README's summary of a run (markers included): its {@link HEADLINES} rows. Throws when the run lacks one. */
export function renderSummary(current: ResultsFile): string {
  const rows = resultRows(current.results);
  const picked = HEADLINES.map((h) => {
    const row = rows.find((r) => r.scenario.startsWith(h.scenario) && r.measure.startsWith(h.measure));
    if (!row) throw new Error(`${current.file} has no row "${h.scenario} | ${h.measure}…" for the README summary (run every scenario)`);
    return row;
  });
  return [
    `<!-- bench:summary ${current.file} -->`,
    `Measured by \`npm run bench\` on ${current.results.started.slice(0, 10)} on ${current.results.machine.cores} cores (\`${current.file}\`); every figure, the machine and the parameters: [docs/benchmarks.md](docs/benchmarks.md).`,
    '',
    '| scenario | measure | median | target | met |',
    '| --- | --- | --- | --- | --- |',
    ...picked.map((r) => `| ${r.scenario} | ${r.measure} | ${r.value} | ${r.target} | ${r.met} |`),
    '<!-- bench:end -->',
  ].join('\n');
}

/** The results files each section of docs/benchmarks.md names, in order (current, and the earlier one if any). */
export function markedSections(doc: string): { file: string; before?: string }[] {
  return [...doc.matchAll(SECTION)].map((m) => ({ file: m[1]!, ...(m[2] ? { before: m[2] } : {}) }));
}

/** The results file the README's summary names. */
export function markedSummary(readme: string): string | undefined {
  return SUMMARY.exec(readme)?.[1];
}

/**
 * docs/benchmarks.md with its first section rendered from `first` (and `before`) and every other section from the
 * files its marker names; throws when the page has no section.
 */
export function updateBenchmarkDoc(
  doc: string,
  first: ResultsFile,
  before: ResultsFile | undefined,
  load: (file: string) => ResultsFile,
): string {
  if (markedSections(doc).length === 0) throw new Error(`${BENCH_DOC} has no <!-- bench:start FILE --> … <!-- bench:end --> section`);
  let index = 0;
  return doc.replace(SECTION, (_, file: string, earlier: string | undefined) =>
    index++ === 0 ? renderBenchmarkSection(first, before) : renderBenchmarkSection(load(file), earlier ? load(earlier) : undefined, false),
  );
}

/** The README with its summary rendered from `current`; throws when the markers are missing. */
export function updateReadme(readme: string, current: ResultsFile): string {
  if (!SUMMARY.test(readme)) throw new Error(`${README} has no <!-- bench:summary FILE --> … <!-- bench:end --> section`);
  return readme.replace(SUMMARY, () => renderSummary(current));
}

function newestResults(): string {
  const dir = join(ROOT, 'bench', 'results');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort();
  if (files.length === 0) throw new Error('no results in bench/results/: run `npm run bench` first');
  return relative(ROOT, join(dir, files[files.length - 1]!));
}

function load(file: string): ResultsFile {
  return { file, results: JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as BenchResults };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { check: { type: 'boolean', default: false }, before: { type: 'string' } },
  });
  const docPath = join(ROOT, BENCH_DOC);
  const readmePath = join(ROOT, README);
  const doc = readFileSync(docPath, 'utf8');
  const readme = readFileSync(readmePath, 'utf8');
  const [marked] = markedSections(doc);
  const file = positionals[0] ? relative(ROOT, positionals[0]) : values.check ? marked?.file : newestResults();
  if (!file) throw new Error(`${BENCH_DOC} names no results file`);
  const beforeFile = values.before ? relative(ROOT, values.before) : values.check ? marked?.before : undefined;
  const current = load(file);
  const updatedDoc = updateBenchmarkDoc(doc, current, beforeFile ? load(beforeFile) : undefined, load);
  const updatedReadme = updateReadme(readme, current);
  if (values.check) {
    const regenerate = `npm run bench:readme -- ${file}${beforeFile ? ` --before ${beforeFile}` : ''}`;
    const problems = [
      ...(updatedDoc !== doc ? [`${BENCH_DOC}'s benchmark sections are not what their results files render to`] : []),
      ...(markedSummary(readme) !== file
        ? [`${README}'s summary names ${markedSummary(readme)}, ${BENCH_DOC}'s first section ${file}`]
        : []),
      ...(updatedReadme !== readme ? [`${README}'s benchmark summary is not what ${file} renders to`] : []),
    ];
    if (problems.length > 0) {
      for (const problem of problems) console.error(problem);
      console.error(`run \`${regenerate}\``);
      process.exit(1);
    }
    console.log(`${BENCH_DOC} and ${README}'s summary match ${markedSections(doc).length} marked results file(s)`);
    return;
  }
  writeFileSync(docPath, updatedDoc);
  writeFileSync(readmePath, updatedReadme);
  console.log(`${BENCH_DOC} and ${README}'s summary written from ${file}${beforeFile ? ` (before: ${beforeFile})` : ''}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`bench:readme: ${(err as Error).message}`);
    process.exit(1);
  });
}
