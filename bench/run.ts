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
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  console.log('usage: npm run bench -- [--quick] [--objects N] [--runs K] [--only initial-sync,churn,operations,forwarding,failover]');
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

const rate = summarize(syncRuns.map((r) => r.objectsPerSecond));
const copyRate = summarize(syncRuns.map((r) => r.copyObjectsPerSecond));
const ratio = summarize(syncRuns.map((r) => r.ratioToCopy));
const total = summarize(syncRuns.map((r) => r.totalSeconds));

const syncRows = () => [
  ['initial sync', `seconds, agent start → ${params.objects} objects synced`, total.p50.toFixed(2), total.p90.toFixed(2), '≤ 20 s (100k)', String(params.objects < 100_000 ? 'n/a (quick)' : total.p50 <= 20)],
  ['initial sync', 'objects/s (first → last row committed)', rate.p50.toFixed(0), rate.p90.toFixed(0), '', ''],
  ['initial sync', 'raw COPY objects/s (baseline, same rows)', copyRate.p50.toFixed(0), copyRate.p90.toFixed(0), '', ''],
  ['initial sync', 'ratio ours / COPY', ratio.p50.toFixed(2), ratio.p90.toFixed(2), '≥ 0.50', String(ratio.p50 >= 0.5)],
  ['initial sync', 'agent peak RSS MiB', summarize(syncRuns.map((r) => r.agentPeakRssMiB)).p50.toFixed(0), '', '', ''],
  ['initial sync', 'gateway peak RSS MiB', summarize(syncRuns.map((r) => r.gatewayPeakRssMiB)).p50.toFixed(0), '', '', ''],
];
const churnRows = (churn: NonNullable<Awaited<ReturnType<typeof runChurn>>>) => [
  ['churn 1000/s', `change → committed row, ms (${churn.changes} changes; p99 ${churn.cache.p99.toFixed(1)}, max ${churn.cache.max.toFixed(1)})`, churn.cache.p50.toFixed(1), churn.cache.p90.toFixed(1), 'p99 ≤ 100 ms', String(churn.cache.p99 <= 100)],
  ['churn 1000/s', `bare client-node watch, ms (baseline; p99 ${churn.informer.p99.toFixed(1)}, max ${churn.informer.max.toFixed(1)})`, churn.informer.p50.toFixed(1), churn.informer.p90.toFixed(1), '', ''],
];
const operationRows = (operations: Awaited<ReturnType<typeof runOperations>>) => [
  ...operations.levels.map((l) => [
    `operations (get) c=${l.concurrency}`,
    `overhead ms = round trip − kubernetes_duration (${l.operations} ops, p99 ${l.overhead.p99.toFixed(2)}, ${l.failed} failed)`,
    l.overhead.p50.toFixed(2),
    l.overhead.p90.toFixed(2),
    'p99 ≤ 10 ms',
    String(l.overhead.p99 <= 10),
  ]),
  ['operations (get) c=100', 'max operations/s, one gateway replica', operations.maxOperationsPerSecond.toFixed(0), '', '≥ 1000', String(operations.maxOperationsPerSecond >= 1000)],
];
const forwardingRows = (f: NonNullable<typeof forwarding>) => [
  ['forwarding (get) c=1', `local round trip ms, submitted to gw-1 holding the stream (${f.local.n} ops; p99 ${f.local.p99.toFixed(2)}, max ${f.local.max.toFixed(1)})`, f.local.p50.toFixed(2), f.local.p90.toFixed(2), '', ''],
  ['forwarding (get) c=1', `forwarded round trip ms, submitted to gw-2 (${f.forwarded.n} ops; p99 ${f.forwarded.p99.toFixed(2)}, max ${f.forwarded.max.toFixed(1)})`, f.forwarded.p50.toFixed(2), f.forwarded.p90.toFixed(2), '', ''],
  ['forwarding (get) c=1', `server side: receiving replica's total_duration ms, forwarded − local (local p50 ${f.localServer.p50.toFixed(1)}, forwarded p50 ${f.forwardedServer.p50.toFixed(1)}; p99 ${(f.forwardedServer.p99 - f.localServer.p99).toFixed(1)})`, (f.forwardedServer.p50 - f.localServer.p50).toFixed(1), (f.forwardedServer.p90 - f.localServer.p90).toFixed(1), '', ''],
  ['forwarding (get) c=1', `extra ms = forwarded − local, per percentile (p99 ${f.extra.p99.toFixed(2)}; paired per round: p50 ${f.paired.p50.toFixed(2)}; ${f.failed} failed)`, f.extra.p50.toFixed(2), f.extra.p90.toFixed(2), 'p99 ≤ 5 ms', String(f.failed === 0 && f.extra.p99 <= 5)],
];
const failoverRows = (f: NonNullable<typeof failover>) => {
  const runs = f.runs.map((r) => (r.seconds === null ? 'none' : r.seconds.toFixed(2))).join(', ');
  const p99Note = f.seconds.n < 100 ? `p99 = max with ${f.seconds.n} samples` : 'p99';
  return [
    ['failover (kill -9 holder)', `seconds, kill → first successful operation (runs: ${runs}; ${p99Note}: ${f.seconds.p99.toFixed(2)}; ${f.failedRuns} not recovered)`, f.seconds.p50.toFixed(2), f.seconds.p90.toFixed(2), 'p99 ≤ 5 s', String(f.failedRuns === 0 && f.seconds.p99 <= 5)],
    ['failover (kill -9 holder)', `seconds, kill → agent's new session on a survivor (max ${f.reconnect.max.toFixed(2)})`, f.reconnect.p50.toFixed(2), f.reconnect.p90.toFixed(2), '', ''],
  ];
};
const rows = [
  ['scenario', 'measure', 'median', 'p90', 'target', 'met'],
  ...(syncRuns.length > 0 ? syncRows() : []),
  ...(churn ? churnRows(churn) : []),
  ...(operations ? operationRows(operations) : []),
  ...(forwarding ? forwardingRows(forwarding) : []),
  ...(failover ? failoverRows(failover) : []),
];
const table = rows.map((r) => `| ${r.join(' | ')} |`);
table.splice(1, 0, `|${rows[0]!.map(() => ' --- ').join('|')}|`);
const loadAtEnd = describeMachine().loadAverage;
const markdown = [
  `# Outpost benchmark ${started.toISOString()}`,
  '',
  `Code: ${source.commit}${source.srcChanged ? ' with uncommitted changes in src/' : ''}.`,
  `Machine: ${machine.cores} cores (${machine.cpuModel}), ${machine.memoryGiB} GiB, node ${machine.node}, ${machine.platform}; load average (1/5/15 min) ${machine.loadAverage.join(' / ')} at start, ${loadAtEnd.join(' / ')} at end.`,
  `Parameters: ${JSON.stringify({ objects: params.objects, runs: params.runs, only, ...(forwarding ? { forwarding: forwardingParams } : {}), ...(failover ? { failover: failoverParams } : {}) })}.`,
  ...(forwarding ? ['', `Forwarding: 2 gateway replicas on one Postgres, the agent's stream on gw-1; \`get\` operations (wait) alternated gw-1 / gw-2 (ABBA) at concurrency 1. Replica config ${JSON.stringify(forwarding.config.gateway)}.`] : []),
  ...(failover
    ? ['', `Failover: 3 gateway replicas on one Postgres behind a round-robin TCP balancer; each run waits until the agent's stream is ${failover.config.minSessionSeconds} s old, kill -9s the lease holder and retries \`get\` (wait, ${failover.config.attemptTimeoutSeconds} s timeout each) on the survivors until one succeeds, then restarts the killed replica. Replica config ${JSON.stringify(failover.config.gateway)} (lease length default, 15 s); agent config ${JSON.stringify(failover.config.agent)}.`]
    : []),
  '',
  ...table,
  '',
].join('\n');
console.log(`\n${markdown}`);

const dir = fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const stamp = started.toISOString().replace(/[:.]/g, '-');
writeFileSync(`${dir}${stamp}.json`, JSON.stringify({ started, source, machine, loadAverageAtEnd: loadAtEnd, params: { ...params, postgresUrl: undefined, only, forwarding: forwardingParams, failover: failoverParams }, initialSync: { runs: syncRuns, rate, copyRate, ratio, total }, churn, operations, forwarding, failover }, null, 2));
writeFileSync(`${dir}${stamp}.md`, markdown);
console.log(`bench: wrote bench/results/${stamp}.json and .md`);
