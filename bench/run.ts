/**
 * `npm run bench [-- --quick] [-- --objects N --runs K] [-- --only initial-sync,churn,operations,forwarding,failover]`:
 * runs the benchmark scenarios (all unless `--only` names some), prints a markdown table and
 * writes `bench/results/<timestamp>.json` and `.md`. Not part of `npm test`. Needs Postgres (OUTPOST_BENCH_POSTGRES,
 * default postgres://postgres@127.0.0.1:5432/postgres).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { describeMachine, summarize } from './machine.js';
import { renderReport, type BenchResults } from './report.js';
import { runChurn } from './scenarios/churn.js';
import { runFailover } from './scenarios/failover.js';
import { runForwarding } from './scenarios/forwarding.js';
import { runInitialSync, type InitialSyncResult } from './scenarios/initial-sync.js';
import { runOperations } from './scenarios/operations.js';

const { values } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    objects: { type: 'string' },
    runs: { type: 'string' },
    only: { type: 'string' },
    out: { type: 'string' },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('usage: npm run bench -- [--quick] [--objects N] [--runs K] [--only initial-sync,churn,operations,forwarding,failover] [--out DIR]');
  console.log('  --quick   smaller sizes and shorter runs: a smoke run of every scenario in about a minute');
  console.log('  --out     write <timestamp>.json and .md into DIR instead of bench/results/');
  process.exit(0);
}
const params = {
  objects: Number(values.objects ?? (values.quick ? 10_000 : 100_000)),
  runs: Number(values.runs ?? (values.quick ? 1 : 3)),
  postgresUrl: process.env.OUTPOST_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres',
};
if (!Number.isInteger(params.objects) || params.objects <= 0 || !Number.isInteger(params.runs) || params.runs <= 0) {
  console.error('bench: --objects and --runs must be positive integers');
  process.exit(2);
}

const SCENARIOS = ['initial-sync', 'churn', 'operations', 'forwarding', 'failover'];
const only = values.only ? values.only.split(',').map((s) => s.trim()) : SCENARIOS;
const unknown = only.filter((s) => !SCENARIOS.includes(s));
if (unknown.length > 0 || only.length === 0) {
  console.error(`bench: --only takes a comma-separated list of ${SCENARIOS.join(', ')} (got ${values.only})`);
  process.exit(2);
}
const wants = (scenario: string) => only.includes(scenario);

const started = new Date();
const machine = describeMachine();
/** The code measured: HEAD, and whether src/ had uncommitted changes (they are measured too). */
const source = (() => {
  try {
    const git = (...args: string[]) => execFileSync('git', args, { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', '--short', 'HEAD'), srcChanged: git('status', '--porcelain', '--', 'src', 'bin').length > 0 };
  } catch {
    return { commit: 'unknown', srcChanged: false };
  }
})();
console.log(`bench: ${JSON.stringify(params)} on ${machine.cores} cores, ${machine.memoryGiB} GiB, node ${machine.node}`);

const syncRuns: InitialSyncResult[] = [];
for (let i = 0; wants('initial-sync') && i < params.runs; i++) {
  const r = await runInitialSync({ objects: params.objects, postgresUrl: params.postgresUrl });
  console.log(`initial-sync run ${i + 1}: ${JSON.stringify(r)}`);
  syncRuns.push(r);
}
const churn = wants('churn') ? await runChurn({ changesPerSecond: 1000, seconds: values.quick ? 10 : 60, postgresUrl: params.postgresUrl }) : undefined;
if (churn) console.log(`churn: ${JSON.stringify(churn)}`);
const operations = wants('operations')
  ? await runOperations({
      postgresUrl: params.postgresUrl,
      concurrency: [1, 10, 100],
      seconds: values.quick ? 3 : 10,
      warmupSeconds: values.quick ? 1 : 2,
    })
  : undefined;
if (operations) {
  console.log(`operations: ${JSON.stringify({ max: operations.maxOperationsPerSecond, levels: operations.levels.map((l) => [l.concurrency, l.operationsPerSecond, l.overhead]) })}`);
}

// Forwarding: operations per side (local, forwarded), after a warm-up. Failover: kill/recover cycles.
const forwardingParams = { operations: values.quick ? 60 : 300, warmup: values.quick ? 10 : 30 };
// minSessionSeconds: past the agent's 10 s stable-session threshold, so each kill meets a reset reconnect backoff.
const failoverParams = { runs: values.quick ? 3 : 10, attemptTimeoutSeconds: 3, giveUpSeconds: 60, minSessionSeconds: 12 };
const forwarding = wants('forwarding') ? await runForwarding({ postgresUrl: params.postgresUrl, ...forwardingParams }) : undefined;
if (forwarding) console.log(`forwarding: ${JSON.stringify({ local: forwarding.local, forwarded: forwarding.forwarded, extra: forwarding.extra, failed: forwarding.failed })}`);
const failover = wants('failover') ? await runFailover({ postgresUrl: params.postgresUrl, ...failoverParams }) : undefined;
if (failover) console.log(`failover: ${JSON.stringify({ seconds: failover.runs.map((r) => r.seconds), summary: failover.seconds, failedRuns: failover.failedRuns })}`);

const loadAtEnd = describeMachine().loadAverage;
const results: BenchResults = {
  started: started.toISOString(),
  quick: values.quick,
  source,
  machine,
  loadAverageAtEnd: loadAtEnd,
  params: {
    objects: params.objects,
    runs: params.runs,
    only,
    ...(forwarding ? { forwarding: forwardingParams } : {}),
    ...(failover ? { failover: failoverParams } : {}),
  },
  initialSync:
    syncRuns.length > 0
      ? {
          runs: syncRuns,
          rate: summarize(syncRuns.map((r) => r.objectsPerSecond)),
          copyRate: summarize(syncRuns.map((r) => r.copyObjectsPerSecond)),
          ratio: summarize(syncRuns.map((r) => r.ratioToCopy)),
          total: summarize(syncRuns.map((r) => r.totalSeconds)),
        }
      : undefined,
  churn,
  operations,
  forwarding,
  failover,
  extraRows: [],
};
const markdown = renderReport(results);
console.log(`\n${markdown}`);

const dir = values.out ? `${values.out.replace(/\/+$/, '')}/` : fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const stamp = started.toISOString().replace(/[:.]/g, '-');
writeFileSync(`${dir}${stamp}.json`, JSON.stringify(results, null, 2));
writeFileSync(`${dir}${stamp}.md`, markdown);
console.log(`bench: wrote ${dir}${stamp}.json and .md`);
