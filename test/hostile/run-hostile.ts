/**
 * `npm run hostile -- [--seed S] [--cases N] [--driver pglite|postgres|both] [--case I,J] [--fixed] [--rss-bound MIB]
 * [--report FILE] [--check FILE]`: the hostile-input suite at length (test/hostile/hostile-input.test.ts runs a shorter
 * one inside `npm test`). Prints the seed first and the summary table of each driver (with the peak RSS of the gateway's
 * process) at the end; exits 1 when any case failed or the peak RSS passed its bound (RSS_BOUND_BYTES, or
 * `--rss-bound`). `--case` reruns only the given cases of the same seed and count; `--fixed` runs only the fixed
 * regression cases (fixed-cases.ts) and checks their verdicts. `--report FILE` replaces the marked summary section of
 * FILE (docs/hostile-input.md) with this run's tables; `--check FILE` only verifies that FILE's tables list the
 * current categories. Postgres runs need OUTPOST_TEST_POSTGRES. With both drivers, each runs in a child process of
 * its own (this command with `--driver`), so each driver's peak RSS is its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeReportSection } from '../../testkit/report-section.js';
import { seedFrom } from '../../testkit/rng.js';
import { HOSTILE_CATEGORIES } from './hostile-case.js';
import { generateCases } from './hostile-cases.js';
import { fixedCaseProblems, fixedCases } from './fixed-cases.js';
import { RSS_BOUND_BYTES, runHostile, type HostileReport } from './hostile-runner.js';
import { startHostileTarget } from './hostile-target.js';
import { categoryDrift, renderReport, reportFromJson, reportToJson } from './summary-table.js';

const USAGE =
  'usage: npm run hostile -- [--seed S (default: random, or OUTPOST_HOSTILE_SEED)] [--cases N (default 5000)] [--driver pglite|postgres|both]\n' +
  '                          [--case I,J (rerun only these)] [--fixed (only the fixed regression cases)] [--concurrency N]\n' +
  `                          [--rss-bound MIB (default ${RSS_BOUND_BYTES / 2 ** 20})] [--report FILE] [--check FILE]`;

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
        fixed: { type: 'boolean' },
        'rss-bound': { type: 'string' },
        report: { type: 'string' },
        check: { type: 'string' },
        // internal: a child run of one driver writes its report here (see runDriverProcess)
        json: { type: 'string' },
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

const rssBound = Number(values['rss-bound'] ?? RSS_BOUND_BYTES / 2 ** 20);
if (!Number.isFinite(rssBound) || rssBound <= 0) fail(`--rss-bound must be a positive number of MiB (got ${values['rss-bound']})`);
if (values.fixed && (values.case !== undefined || values.report !== undefined))
  fail('--fixed runs the fixed cases alone: no --case or --report');

let cases = values.fixed ? fixedCases() : generateCases(seed, total);
if (values.fixed) for (const c of cases) console.log(`fixed case ${c.index} [${c.hostileCase.category}] ${c.hostileCase.name}`);
else if (values.case !== undefined) {
  const wanted = new Set(values.case.split(',').map((s) => Number(s.trim())));
  cases = cases.filter((c) => wanted.has(c.index));
  if (cases.length === 0) fail(`--case ${values.case} selects no case of ${total}`);
  for (const c of cases) console.log(`case ${c.index} [${c.hostileCase.category}] ${c.hostileCase.name}`);
}
console.log(
  values.fixed
    ? `hostile: the ${cases.length} fixed regression case(s) on ${drivers.join(' and ')}`
    : `hostile: ${cases.length} cases on ${drivers.join(' and ')}, seed ${seed} (rerun: npm run hostile -- --seed ${seed} --cases ${total})`,
);

const reports: HostileReport[] = [];
let fixedProblems = 0;
let childFailed = false;
for (const driver of drivers) {
  if (drivers.length > 1) {
    // each driver in a process of its own, so the peak RSS of each is its own (not what the other one left behind)
    const child = runDriverProcess(driver, seed);
    reports.push(child.report);
    childFailed ||= child.failed;
    continue;
  }
  const target = await startHostileTarget(driver);
  try {
    const report = await runHostile(target, cases, {
      seed,
      concurrency,
      rssBoundBytes: rssBound * 2 ** 20,
      onBatch: (done, all, failures) => {
        if (done === all || done % 480 < 48) console.log(`${driver}: ${done}/${all} cases, ${failures} failure(s)`);
      },
    });
    reports.push(report);
    console.log(`\n${renderReport(report)}\n`);
    if (values.json !== undefined) writeFileSync(values.json, reportToJson(report));
    if (values.fixed) {
      const problems = fixedCaseProblems(report);
      fixedProblems += problems.length;
      for (const p of problems) console.log(`hostile: ${driver}: ${p}`);
    }
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
process.exit(!childFailed && fixedProblems === 0 && reports.every((r) => r.failures.length === 0) ? 0 : 1);

/** Runs this command for one driver in a child process (same seed and options); its report, and whether it failed. */
function runDriverProcess(driver: 'pglite' | 'postgres', seed: number): { report: HostileReport; failed: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-hostile-report-'));
  const json = join(dir, 'report.json');
  const args = ['--driver', driver, '--seed', String(seed), '--cases', String(total), '--concurrency', String(concurrency)];
  args.push('--rss-bound', String(rssBound), '--json', json);
  if (values.fixed) args.push('--fixed');
  if (values.case !== undefined) args.push('--case', values.case);
  try {
    const run = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, ...args], { stdio: 'inherit' });
    if (!existsSync(json)) fail(`the ${driver} run ended without a report (exit ${run.status ?? run.signal})`);
    return { report: reportFromJson(readFileSync(json, 'utf8')), failed: run.status !== 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
