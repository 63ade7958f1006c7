/**
 * The short chaos run inside `npm test`: a few seeded rounds over 3 gateway processes, 2 agents (one over WebSocket,
 * one over gRPC, each through a forward proxy), a private Postgres and the sandbox (test/chaos/chaos-runner.ts). The
 * seed is printed; OUTPOST_CHAOS_SEED reruns a failure, and `npm run chaos` runs many more rounds. Whatever the seed,
 * round 1 restarts a forward proxy mid-stream, round 2 terminates a cache-write group statement in flight, and it begins
 * with the WebSocket agent caching.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seedFrom } from '../../testkit/rng.js';
import { renderChaosReport, runChaos } from './chaos-runner.js';

const ROUNDS = Number(process.env.OUTPOST_CHAOS_ROUNDS ?? 3);

test(`chaos: ${ROUNDS} seeded rounds of faults under load; nothing lost, applied twice, leaked or left diverged`, {
  timeout: 400_000,
}, async (t) => {
  const seed = seedFrom('OUTPOST_CHAOS_SEED');
  t.diagnostic(`seed ${seed} (rerun with OUTPOST_CHAOS_SEED=${seed})`);
  const report = await runChaos({ seed, rounds: ROUNDS, required: ['proxy-restart', 'pg-terminate-writer'] });
  const markdown = renderChaosReport(report);
  console.log(markdown);
  assert.equal(report.rounds.length, ROUNDS);
  assert.ok(
    report.rounds.every((r) => r.operations.submitted > 0 && r.changes > 0),
    'every round carried load',
  );
  assert.ok((report.faultsInjected['proxy-restart'] ?? 0) >= 1, `no proxy-restart round:\n${markdown}`);
  assert.ok((report.faultsInjected['pg-terminate-writer'] ?? 0) >= 1, `no pg-terminate-writer round:\n${markdown}`);
  assert.ok((report.cachingTransports.websocket ?? 0) >= 1, `no round had the account cached over WebSocket:\n${markdown}`);
  assert.equal(report.failures, 0, markdown);
});
