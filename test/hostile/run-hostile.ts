/**
 * `npm run hostile -- [--seed S] [--cases N] [--driver pglite|postgres|both] [--case I,J] [--report FILE] [--check FILE]`:
 * the hostile-input suite at length (test/hostile/hostile-input.test.ts runs a shorter one inside `npm test`). Prints
 * the seed first and the summary table of each driver at the end; exits 1 when any case failed. `--case` reruns only
 * the given cases of the same seed and count. `--report FILE` replaces the marked summary section of FILE (docs/
 * hostile-input.md) with this run's tables; `--check FILE` only verifies that FILE's tables list the current
 * categories. Postgres runs need OUTPOST_TEST_POSTGRES.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { writeReportSection } from '../../testkit/report-section.js';
import { seedFrom } from '../../testkit/rng.js';
import { HOSTILE_CATEGORIES } from './hostile-case.js';
import { generateCases } from './hostile-cases.js';
import { runHostile, type HostileReport } from './hostile-runner.js';
import { startHostileTarget } from './hostile-target.js';
import { categoryDrift, renderReport } from './summary-table.js';

const USAGE =
  'usage: npm run hostile -- [--seed S (default: random, or OUTPOST_HOSTILE_SEED)] [--cases N (default 5000)] [--driver pglite|postgres|both]\n' +
  '                          [--case I,J (rerun only these)] [--concurrency N] [--report FILE] [--check FILE]';

/** Where `--report` writes, between these markers. */
export const SUMMARY_START = '<!-- hostile-summary:start -->';
export const SUMMARY_END = '<!-- hostile-summary:end -->';

function fail(message: string): never {
  console.error(`hostile: ${message}\n${USAGE}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        seed: { type: 'string' },
        cases: { type: 'string' },
        driver: { type: 'string' },
        case: { type: 'string' },
        concurrency: { type: 'string' },
        report: { type: 'string' },
        check: { type: 'string' },
        help: { type: 'boolean' },
      },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

if (values.check !== undefined) {
  const { missing, stale } = categoryDrift(readFileSync(values.check, 'utf8'));
  if (missing.length > 0 || stale.length > 0) {
    console.error(
      `hostile: ${values.check} is out of date (missing: ${missing.join(', ') || 'none'}; no longer a category: ${stale.join(', ') || 'none'}); rerun with --report`,
    );
    process.exit(1);
  }
  console.log(`hostile: ${values.check} lists the ${Object.keys(HOSTILE_CATEGORIES).length} current categories`);
  process.exit(0);
}

const total = Number(values.cases ?? 5000);
if (!Number.isInteger(total) || total < Object.keys(HOSTILE_CATEGORIES).length)
  fail(`--cases must be an integer ≥ ${Object.keys(HOSTILE_CATEGORIES).length} (got ${values.cases})`);
const concurrency = Number(values.concurrency ?? 8);
if (!Number.isInteger(concurrency) || concurrency < 1) fail(`--concurrency must be a positive integer (got ${values.concurrency})`);
const driverChoice = values.driver ?? (process.env.OUTPOST_TEST_POSTGRES ? 'both' : 'pglite');
if (!['pglite', 'postgres', 'both'].includes(driverChoice)) fail(`--driver must be pglite, postgres or both (got ${driverChoice})`);
if (driverChoice !== 'pglite' && !process.env.OUTPOST_TEST_POSTGRES) fail('Postgres runs need OUTPOST_TEST_POSTGRES (a server URL)');
const drivers = (driverChoice === 'both' ? ['pglite', 'postgres'] : [driverChoice]) as ('pglite' | 'postgres')[];
if (values.seed !== undefined) process.env.OUTPOST_HOSTILE_SEED = values.seed;
let seed: number;
try {
  seed = seedFrom('OUTPOST_HOSTILE_SEED');
} catch (err) {
  fail((err as Error).message);
}

let cases = generateCases(seed, total);
if (values.case !== undefined) {
  const wanted = new Set(values.case.split(',').map((s) => Number(s.trim())));
  cases = cases.filter((c) => wanted.has(c.index));
  if (cases.length === 0) fail(`--case ${values.case} selects no case of ${total}`);
  for (const c of cases) console.log(`case ${c.index} [${c.hostileCase.category}] ${c.hostileCase.name}`);
}
console.log(
  `hostile: ${cases.length} cases on ${drivers.join(' and ')}, seed ${seed} (rerun: npm run hostile -- --seed ${seed} --cases ${total})`,
);

const reports: HostileReport[] = [];
for (const driver of drivers) {
  const target = await startHostileTarget(driver);
  try {
    const report = await runHostile(target, cases, {
      seed,
      concurrency,
      onBatch: (done, all, failures) => {
        if (done === all || done % 480 < 48) console.log(`${driver}: ${done}/${all} cases, ${failures} failure(s)`);
      },
    });
    reports.push(report);
    console.log(`\n${renderReport(report)}\n`);
  } finally {
    await target.close();
  }
}

if (values.report !== undefined) {
  try {
    const body = reports.map((r) => `### ${r.driver}\n\n${renderReport(r)}\n`).join('\n');
    writeReportSection(
      values.report,
      { start: SUMMARY_START, end: SUMMARY_END },
      `npm run hostile -- --seed ${seed} --cases ${total}`,
      body,
    );
  } catch (err) {
    fail((err as Error).message);
  }
  console.log(`hostile: summary written to ${values.report}`);
}
process.exit(reports.every((r) => r.failures.length === 0) ? 0 : 1);
