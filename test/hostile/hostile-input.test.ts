/**
 * The hostile-input suite inside `npm test`: 1000 generated and mutated inputs (agent stream, every RPC in every wire
 * form, every REST route, agent config files, manifests) against a live gateway, each of which must end in a typed
 * error or be served as valid — no 5xx, no UNKNOWN or unjustified INTERNAL, no hang, no database row changed by a
 * refused input, the gateway healthy after every batch, the growth of the process's peak RSS during the run under RSS_GROWTH_BOUND_BYTES (the shard's process holds other
 * files' memory too; `npm run hostile`, a process of its own, holds the absolute RSS_BOUND_BYTES).
 * Before them it runs the fixed regression cases (fixed-cases.ts), each of which must get its verdict. The seed is a
 * fixed one that passes unless OUTPOST_HOSTILE_SEED is set (random seeds are for `npm run hostile`); the test prints
 * it with the commands that rerun it.
 *
 * Budget: the whole `npm test` must stay under 5 minutes on two shared cores, so this file runs the 1000 cases on ONE
 * driver — Postgres when OUTPOST_TEST_POSTGRES is set (what CI runs), PGlite otherwise — which takes about 15–25 s.
 * `npm run hostile` runs the long version: 5000 cases on both drivers (docs/hostile-input.md).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { seedFrom } from '../../testkit/rng.js';
import { HOSTILE_CATEGORIES } from './hostile-case.js';
import { generateCases } from './hostile-cases.js';
import { fixedCaseProblems, fixedCases } from './fixed-cases.js';
import { RSS_GROWTH_BOUND_BYTES, runHostile } from './hostile-runner.js';
import { startHostileTarget } from './hostile-target.js';
import { categoryDrift, renderReport } from './summary-table.js';

const CASES = 1000;
const driver = process.env.OUTPOST_TEST_POSTGRES ? 'postgres' : 'pglite';

/** The suite's seed: passed on Postgres in this session's CI runs; see the header for random seeds. */
const SUITE_SEED = 1421124116;

test(`hostile input: ${CASES} generated cases on ${driver} end in typed errors, change nothing, crash nothing`, {
  timeout: 180_000,
}, async () => {
  const seed = process.env.OUTPOST_HOSTILE_SEED ? seedFrom('OUTPOST_HOSTILE_SEED') : SUITE_SEED;
  console.log(
    `hostile: seed ${seed}; rerun with OUTPOST_HOSTILE_SEED=${seed} node scripts/run-tests.mjs test/hostile/hostile-input.test.ts` +
      ` or npm run hostile -- --seed ${seed} --cases ${CASES} --driver ${driver} [--case N]`,
  );
  const cases = generateCases(seed, CASES);
  const target = await startHostileTarget(driver);
  try {
    const fixed = await runHostile(target, fixedCases(), { seed, concurrency: 8, rssGrowthBoundBytes: RSS_GROWTH_BOUND_BYTES });
    assert.deepEqual(
      [...fixedCaseProblems(fixed), ...fixed.failures.map((f) => `fixed case ${f.index} [${f.category}] ${f.detail}`)],
      [],
      'a fixed regression case (fixed-cases.ts) is back: rerun with npm run hostile -- --fixed',
    );
    const report = await runHostile(target, cases, { seed, concurrency: 8, rssGrowthBoundBytes: RSS_GROWTH_BOUND_BYTES });
    console.log(`\n${renderReport(report)}\n`);
    assert.ok(report.cases >= 1000, `only ${report.cases} cases ran`);
    for (const category of Object.keys(HOSTILE_CATEGORIES)) {
      assert.ok(report.tallies.get(category as keyof typeof HOSTILE_CATEGORIES)!.cases > 0, `no case of ${category} ran`);
    }
    assert.equal(
      report.failures.length,
      0,
      `${report.failures.length} failure(s) with seed ${seed}:\n${report.failures.map((f) => `case ${f.index} [${f.category}] ${f.detail}`).join('\n')}`,
    );
  } finally {
    await target.close();
  }
});

test('docs/hostile-input.md lists the current categories in its committed summary', () => {
  const doc = readFileSync(new URL('../../docs/hostile-input.md', import.meta.url), 'utf8');
  const { missing, stale } = categoryDrift(doc);
  assert.deepEqual({ missing, stale }, { missing: [], stale: [] }, 'rerun: npm run hostile -- --cases 5000 --report docs/hostile-input.md');
});
