/**
 * `npm run chaos [-- --rounds N] [-- --seed S] [-- --report FILE]`: the chaos suite at length (test/chaos/chaos.test.ts
 * runs a short version inside `npm test`). Prints a row per round and the summary; with `--report` also writes the
 * summary into the marked section of FILE (docs/chaos.md holds a committed one). Exits 1 when any check failed; rerun with the printed seed.
 * Needs the machine's Postgres binaries (it runs a private server it can restart) and nothing else.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { seedFrom } from '../helpers/rng.js';
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
    return parseArgs({ options: { rounds: { type: 'string' }, seed: { type: 'string' }, report: { type: 'string' }, help: { type: 'boolean' } } });
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
  onRound: (r) => console.log(`round ${r.round}: ${r.faults.join(', ') || 'no fault'} → ${r.problems.length === 0 ? 'ok' : `FAILED: ${r.problems.join('; ')}`}`),
});
const markdown = renderChaosReport(report);
console.log(`\n${markdown}`);
if (values.report) {
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const doc = readFileSync(values.report, 'utf8');
  const start = doc.indexOf(SUMMARY_START);
  const end = doc.indexOf(SUMMARY_END);
  if (start < 0 || end < start) fail(`${values.report} has no ${SUMMARY_START} … ${SUMMARY_END} section`);
  const section = [
    SUMMARY_START,
    `Run by \`npm run chaos -- --rounds ${rounds} --seed ${seed}\` on ${new Date().toISOString().slice(0, 10)} (code ${commit}, Node ${process.version}).`,
    '',
    markdown,
    SUMMARY_END,
  ].join('\n');
  writeFileSync(values.report, doc.slice(0, start) + section + doc.slice(end + SUMMARY_END.length));
  console.log(`chaos: summary written to ${values.report}`);
}
process.exit(report.failures === 0 ? 0 : 1);
