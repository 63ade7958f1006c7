/**
 * `npm run bench:readme [-- FILE.json] [-- --before EARLIER.json] [-- --check]`: writes the README's benchmark
 * section (between the `<!-- bench:start FILE [EARLIER] -->` and `<!-- bench:end -->` markers) from a committed
 * results file — the newest in bench/results/ unless one is named — so the README shows exactly what a run measured;
 * `--before` adds a column with an earlier run's values (before/after a change). `--check` changes nothing and exits
 * 1 when the README is not what the marked files render to (the test suite runs it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderSetup, renderTable, type BenchResults } from './report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MARKER = /<!-- bench:start (\S+)(?: (\S+))? -->\n[\s\S]*?<!-- bench:end -->/;

/** A results file and its path relative to the repository root. */
export interface ResultsFile {
  file: string;
  results: BenchResults;
}

/** The README section for one results file (markers included), with an optional earlier run to compare with. */
export function renderReadmeSection(current: ResultsFile, before?: ResultsFile): string {
  const regenerate = `npm run bench:readme -- ${current.file}${before ? ` --before ${before.file}` : ''}`;
  return [
    `<!-- bench:start ${current.file}${before ? ` ${before.file}` : ''} -->`,
    `Measured by \`npm run bench\` on ${current.results.started.slice(0, 10)} (\`${current.file}\`; regenerate this section with \`${regenerate}\`).`,
    ...renderSetup(current.results, before),
    '',
    ...renderTable(current.results, before?.results),
    '<!-- bench:end -->',
  ].join('\n');
}

/** The README with its section replaced; throws when the markers are missing. */
export function updateReadme(readme: string, current: ResultsFile, before?: ResultsFile): string {
  if (!MARKER.test(readme)) throw new Error('README.md has no <!-- bench:start FILE --> … <!-- bench:end --> section');
  return readme.replace(MARKER, () => renderReadmeSection(current, before));
}

/** The results files the README's section names (current, and the earlier one when there is a before column). */
export function markedResultsFiles(readme: string): { file?: string; before?: string } {
  const m = MARKER.exec(readme);
  return { file: m?.[1], before: m?.[2] };
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
  const readmePath = join(ROOT, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const marked = markedResultsFiles(readme);
  const file = positionals[0] ? relative(ROOT, positionals[0]) : values.check ? marked.file : newestResults();
  if (!file) throw new Error('README.md names no results file');
  const beforeFile = values.before ? relative(ROOT, values.before) : values.check ? marked.before : undefined;
  const updated = updateReadme(readme, load(file), beforeFile ? load(beforeFile) : undefined);
  if (values.check) {
    if (updated !== readme) {
      console.error(
        `README.md's benchmark section is not what ${file} renders to: run \`npm run bench:readme -- ${file}${beforeFile ? ` --before ${beforeFile}` : ''}\``,
      );
      process.exit(1);
    }
    console.log(`README.md's benchmark section matches ${basename(file)}`);
    return;
  }
  writeFileSync(readmePath, updated);
  console.log(`README.md: benchmark section written from ${file}${beforeFile ? ` (before: ${beforeFile})` : ''}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`bench:readme: ${(err as Error).message}`);
    process.exit(1);
  });
}
