/**
 * `npm run bench:readme [-- FILE.json] [-- --check]`: writes the README's benchmark section (between the
 * `<!-- bench:start FILE -->` and `<!-- bench:end -->` markers) from a committed results file — the newest in
 * bench/results/ unless one is named — so the README shows exactly what a run measured. `--check` changes nothing
 * and exits 1 when the README is not what the named (or marked) file renders to (the test suite runs it).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderSetup, renderTable, type BenchResults } from './report.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MARKER = /<!-- bench:start (\S+) -->\n[\s\S]*?<!-- bench:end -->/;

/** The README section for one results file (markers included). `file` is relative to the repository root. */
export function renderReadmeSection(file: string, results: BenchResults): string {
  return [
    `<!-- bench:start ${file} -->`,
    `Measured by \`npm run bench\` on ${results.started.slice(0, 10)} (\`${file}\`, regenerate with \`npm run bench:readme\`).`,
    ...renderSetup(results),
    '',
    ...renderTable(results),
    '<!-- bench:end -->',
  ].join('\n');
}

/** The README with its section replaced; throws when the markers are missing. */
export function updateReadme(readme: string, file: string, results: BenchResults): string {
  if (!MARKER.test(readme)) throw new Error('README.md has no <!-- bench:start FILE --> … <!-- bench:end --> section');
  return readme.replace(MARKER, () => renderReadmeSection(file, results));
}

/** The results file the README's section names, or undefined. */
export function markedResultsFile(readme: string): string | undefined {
  return MARKER.exec(readme)?.[1];
}

function newestResults(): string {
  const dir = join(ROOT, 'bench', 'results');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  if (files.length === 0) throw new Error('no results in bench/results/: run `npm run bench` first');
  return relative(ROOT, join(dir, files[files.length - 1]!));
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { check: { type: 'boolean', default: false } } });
  const readmePath = join(ROOT, 'README.md');
  const readme = readFileSync(readmePath, 'utf8');
  const file = positionals[0] ? relative(ROOT, positionals[0]) : values.check ? markedResultsFile(readme) : newestResults();
  if (!file) throw new Error('README.md names no results file');
  const results = JSON.parse(readFileSync(join(ROOT, file), 'utf8')) as BenchResults;
  const updated = updateReadme(readme, file, results);
  if (values.check) {
    if (updated !== readme) {
      console.error(`README.md's benchmark section is not what ${file} renders to: run \`npm run bench:readme -- ${file}\``);
      process.exit(1);
    }
    console.log(`README.md's benchmark section matches ${basename(file)}`);
    return;
  }
  writeFileSync(readmePath, updated);
  console.log(`README.md: benchmark section written from ${file}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((err) => {
    console.error(`bench:readme: ${(err as Error).message}`);
    process.exit(1);
  });
}
