/**
 * `npm run chaos [-- --rounds N] [-- --seed S] [-- --report FILE]`: the chaos suite at length (test/chaos/chaos.test.ts
 * runs a short version inside `npm test`). Prints a row per round and the summary; with `--report` also writes the
 * summary into the marked section of FILE (docs/chaos.md holds a committed one). Exits 1 when any check failed; rerun with the printed seed.
 * Needs the machine's Postgres binaries (it runs a private server it can restart) and nothing else.
 */
import { parseArgs } from 'node:util';
import { writeReportSection } from '../../testkit/report-section.js';
import { seedFrom } from '../../testkit/rng.js';
import { renderChaosReport, runChaos } from './chaos-runner.js';

/** Where `--report` writes in its file (docs/chaos.md), between these markers. */
const SUMMARY_START = '<!-- chaos-summary:start -->';
const SUMMARY_END = '<!-- chaos-summary:end -->';

const USAGE = 'usage: npm run chaos -- [--rounds N (default 20)] [--seed S (default: random, or OUTPOST_CHAOS_SEED)] [--report FILE]';

function fail(message: string): never {
  console.error(`chaos: ${message}\n${USAGE}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: { rounds: { type: 'string' }, seed: { type: 'string' }, report: { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (err) {
    return fail((err as Error).message);
  }
})();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const rounds = Number(values.rounds ?? 20);
if (!Number.isInteger(rounds) || rounds <= 0) fail(`--rounds must be a positive integer (got ${values.rounds})`);
if (values.seed !== undefined) process.env.OUTPOST_CHAOS_SEED = values.seed;
let seed: number;
try {
  seed = seedFrom('OUTPOST_CHAOS_SEED');
} catch (err) {
  fail((err as Error).message);
}
console.log(`chaos: ${rounds} rounds, seed ${seed} (rerun: npm run chaos -- --rounds ${rounds} --seed ${seed})`);
const report = await runChaos({
  seed,
  rounds,
  onRound: (r) =>
    console.log(
      `round ${r.round}: ${r.faults.join(', ') || 'no fault'} → ${r.problems.length === 0 ? 'ok' : `FAILED: ${r.problems.join('; ')}`}`,
    ),
});
const markdown = renderChaosReport(report);
console.log(`\n${markdown}`);
if (values.report) {
  try {
    writeReportSection(
      values.report,
      { start: SUMMARY_START, end: SUMMARY_END },
      `npm run chaos -- --rounds ${rounds} --seed ${seed}`,
      markdown,
    );
  } catch (err) {
    fail((err as Error).message);
  }
  console.log(`chaos: summary written to ${values.report}`);
}
process.exit(report.failures === 0 ? 0 : 1);
