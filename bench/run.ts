/**
 * `npm run bench [-- --quick] [-- --runs K] [-- --only a,b] [-- --objects N] [-- --out DIR]`: runs the benchmark
 * scenarios (all unless `--only` names some), prints a markdown report and writes `<timestamp>.json` and `.md` into
 * bench/results/ (or DIR). Not part of `npm test` (test/bench/harness.test.ts runs `--quick` on a few scenarios to prove the harness
 * works; it asserts no figure). Needs Postgres (OUTPOST_BENCH_POSTGRES, default
 * postgres://postgres@127.0.0.1:5432/postgres).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isBuildFresh } from '../bin/build-freshness.js';
import { parseArgs } from 'node:util';
import { describeMachine } from './machine.js';
import { renderReport, type BenchResults, type Repeated } from './report.js';
import { runAgentFootprint } from './scenarios/agent-footprint.js';
import { runCachePartitions } from './scenarios/cache-partitions.js';
import { runChurn } from './scenarios/churn.js';
import { runCliRoundTrip } from './scenarios/cli-round-trip.js';
import { runConnectionScale } from './scenarios/connection-scale.js';
import { runFailover } from './scenarios/failover.js';
import { runForwarding } from './scenarios/forwarding.js';
import { runInitialSync } from './scenarios/initial-sync.js';
import { runKubeProxy } from './scenarios/kube-proxy.js';
import { runOperations } from './scenarios/operations.js';
import { runReplicaScale } from './scenarios/replica-scale.js';
import { runFleetChurn } from './scenarios/fleet-churn.js';
import { runHistoryCost } from './scenarios/history-cost.js';
import { runSpinnakerDeploy } from './scenarios/spinnaker-deploy.js';
import { runSpinnakerInfra } from './scenarios/spinnaker-infra.js';
import { runTransports } from './scenarios/transports.js';

const SCENARIOS = [
  'initial-sync',
  'churn',
  'operations',
  'reads',
  'forwarding',
  'failover',
  'connection-scale',
  'replica-scale',
  'fleet-churn',
  'history-cost',
  'agent-footprint',
  'spinnaker-deploy',
  'spinnaker-infra',
  'cache-partitions',
  'transports',
  'kube-proxy',
  'cli',
] as const;
type Scenario = (typeof SCENARIOS)[number];

const USAGE = `usage: npm run bench -- [--quick] [--runs K] [--only ${SCENARIOS.join(',')}] [--objects N] [--fleet-agents N] [--cache-accounts N] [--out DIR]
  --quick    small sizes and short runs: a smoke run of every scenario in about a minute (too small to judge targets)
  --runs K   repetitions of initial-sync, churn, operations, reads, connection-scale, agent-footprint, kube-proxy and cli (default 3; 1 with
             --quick), and of transports (default 4, so HTTP/2 and WebSocket each go first twice; 1 with --quick)
  --only     a comma-separated subset of the scenarios
  --objects  objects of the initial-sync scenario and of transports' initial sync (default 100000; 5000 with --quick)
  --fleet-agents  simulated agents of fleet-churn (default 10000; 60 with --quick)
  --cache-accounts  generated accounts of cache-partitions, 200 objects each (default 100000: 20 million rows in each of
             two databases, about 30 GB each, loaded side by side in about 40 minutes on 2 cores, about 60 GB of disk
             at the peak; 200 with --quick)
  --out      write <timestamp>.json and .md into DIR instead of bench/results/
operations: stored operations (an empty merge patch of a ConfigMap, wait) at concurrency 1, 10 and 100.
reads:      the same with a get, which the gateway runs in memory and never stores.
transports: each run, churn (1000/s for 20 s; 3 s with --quick) and initial sync over HTTP/2 and over WebSocket.
kube-proxy: kubectl get and watch through the gateway's /k8s/ACCOUNT, through two bare relays and straight to the
             sandbox, interleaved (kubectl from OUTPOST_BENCH_KUBECTL or the newest one installed).
replica-scale: idle swarm agents spread round robin over 3 gateway replicas on one Postgres (9000; 60 with --quick),
             one run: per replica streams, RSS and CPU, lease renewals and session touches, Postgres writes.
fleet-churn: swarm agents on 3 replicas (10000; 60 with --quick), each changing a ConfigMap every 3 s for 30 s (5 s with
             --quick), once with the replicas' write coalescer and once without: commits, rows, change → committed.
spinnaker-infra: one run: GET /applications/APP/serverGroups for 1000 server groups (3000 pods) over 50 accounts
             (100 server groups over 5 with --quick), loaded by simulated agents, beside the store's SQL run straight
             against Postgres; sandbox scale → shown and new application → listed through a real agent (20 and 10
             times; 2 each with --quick); the load rate with and without migrations 0012-0013's columns and indexes (3 loads
             each; 1 with --quick).
cache-partitions: one run: two Postgres databases of the same generated cache, objects partitioned by account and one
             table (migration 0015); ListObjects p50/p99 by account, kind, namespace and label, the object writer's batch,
             table and index sizes; then migration 0016 converts the one table (timed). --runs does not repeat it.
history-cost: one run: the history writer through a simulated hour (default steps) on fresh databases of 1000 and
             10000 accounts (100 and 1000 with --quick), 10 % and 100 % of them storing events each minute: rows, table
             size, WAL and step time per hour.
cli:        outpost get deployments processes (compiled build and sources), kubectl get and node -e 0, interleaved.
Environment: OUTPOST_BENCH_POSTGRES (default postgres://postgres@127.0.0.1:5432/postgres);
OUTPOST_BENCH_PROFILE=DIR writes a V8 CPU profile of every outpost child process into DIR.`;

function fail(message: string): never {
  console.error(`bench: ${message}\n${USAGE}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        quick: { type: 'boolean', default: false },
        runs: { type: 'string' },
        only: { type: 'string' },
        objects: { type: 'string' },
        'fleet-agents': { type: 'string' },
        'cache-accounts': { type: 'string' },
        out: { type: 'string' },
        help: { type: 'boolean', default: false },
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
const quick = values.quick;
const positive = (text: string | undefined, fallback: number, flag: string) => {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) fail(`${flag} must be a positive integer (got ${text})`);
  return n;
};
const runs = positive(values.runs, quick ? 1 : 3, '--runs');
/** Runs of the transports scenario: an even count by default, so each transport goes first equally often. */
const transportRuns = positive(values.runs, quick ? 1 : 4, '--runs');
const objects = positive(values.objects, quick ? 5000 : 100_000, '--objects');
const fleetAgents = positive(values['fleet-agents'], quick ? 60 : 10_000, '--fleet-agents');
const cacheAccounts = positive(values['cache-accounts'], quick ? 200 : 100_000, '--cache-accounts');
const only = values.only ? values.only.split(',').map((s) => s.trim()) : [...SCENARIOS];
const unknown = only.filter((s) => !(SCENARIOS as readonly string[]).includes(s));
if (unknown.length > 0 || only.length === 0) fail(`unknown scenario in --only: ${values.only}`);
const wants = (s: Scenario) => only.includes(s);
const postgresUrl = process.env.OUTPOST_BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Parameters of each scenario, full and quick. */
const params = {
  initialSync: { objects },
  churn: { changesPerSecond: 1000, seconds: quick ? 3 : 60 },
  operations: { concurrency: [1, 10, 100], seconds: quick ? 1.5 : 10, warmupSeconds: quick ? 0.5 : 2, spec: 'patch' as const },
  reads: { concurrency: [1, 10, 100], seconds: quick ? 1.5 : 10, warmupSeconds: quick ? 0.5 : 2, spec: 'get' as const },
  forwarding: { operations: quick ? 20 : 300, warmup: quick ? 5 : 30 },
  // minSessionSeconds: past the agent's stable-session threshold (reconnect.stableSeconds), so each kill meets a reset
  // reconnect backoff; quick mode lowers the threshold from its 10 s default to 1 s so the kills come 1.5 s apart.
  failover: quick
    ? { runs: 1, attemptTimeoutSeconds: 3, giveUpSeconds: 60, stableSeconds: 1, minSessionSeconds: 1.5 }
    : { runs: 10, attemptTimeoutSeconds: 3, giveUpSeconds: 60, stableSeconds: 10, minSessionSeconds: 12 },
  connectionScale: quick
    ? { agents: 100, warmupAgents: 10, heartbeatSeconds: 1, settleSeconds: 1, samples: 2, idleSeconds: 1, connectConcurrency: 50 }
    : { agents: 10_000, warmupAgents: 100, heartbeatSeconds: 10, settleSeconds: 21, samples: 9, idleSeconds: 20, connectConcurrency: 100 },
  // One run (its figures are per replica); gateway config defaults (heartbeat 10 s, lease 15 s renewed every 5 s).
  replicaScale: quick
    ? { agents: 60, warmupAgents: 6, settleSeconds: 1, samples: 2, idleSeconds: 6, connectConcurrency: 30 }
    : { agents: 9000, warmupAgents: 30, settleSeconds: 21, samples: 5, idleSeconds: 30, connectConcurrency: 100 },
  fleetChurn: quick
    ? { agents: fleetAgents, churnMs: 3000, churnSeconds: 5, settleSeconds: 1, connectConcurrency: 30 }
    : { agents: fleetAgents, churnMs: 3000, churnSeconds: 30, settleSeconds: 11, connectConcurrency: 100 },
  spinnakerDeploy: { rounds: quick ? 1 : 20, warmup: quick ? 0 : 3, replicas: 3 },
  spinnakerInfra: quick
    ? {
        fixture: { accounts: 5, serverGroups: 100, clustersPerAccount: 2, podsPerServerGroup: 3, otherApps: 4 },
        reads: { warmup: 2, sequential: 10, concurrency: 4, concurrentRequests: 8, applications: 5 },
        freshness: { rounds: 2, warmup: 0 },
        firstDeploy: { rounds: 2 },
        pollMs: 10,
        writeRounds: 1,
      }
    : {
        fixture: { accounts: 50, serverGroups: 1000, clustersPerAccount: 5, podsPerServerGroup: 3, otherApps: 20 },
        reads: { warmup: 10, sequential: 200, concurrency: 4, concurrentRequests: 200, applications: 100 },
        freshness: { rounds: 20, warmup: 2 },
        firstDeploy: { rounds: 10 },
        pollMs: 10,
        writeRounds: 3,
      },
  cachePartitions: { accounts: cacheAccounts, requests: quick ? 20 : 500 },
  agentFootprint: quick
    ? { accounts: 3, objects: 2000, settleSeconds: 0.3, samples: 2 }
    : { accounts: 100, objects: 100_000, settleSeconds: 3, samples: 9 },
  // Churn shorter than the churn scenario's 60 s: each run measures it twice, and 20 s is 20,000 changes per transport.
  transports: { churn: { changesPerSecond: 1000, seconds: quick ? 3 : 20 }, initialSync: { objects } },
  kubeProxy: quick
    ? { requests: 30, warmup: 5, kubectlRuns: 2, kubectlWarmup: 1, watchChanges: 10, watchSpacingMs: 50 }
    : { requests: 300, warmup: 30, kubectlRuns: 15, kubectlWarmup: 2, watchChanges: 100, watchSpacingMs: 50 },
  cli: quick ? { runs: 1, warmup: 0 } : { runs: 20, warmup: 2 },
  historyCost: quick
    ? { accounts: [100, 1000], activeShares: [0.1, 1], minutes: 5 }
    : { accounts: [1000, 10_000], activeShares: [0.1, 1], minutes: 60 },
};

/** Runs `run` `times` times with `p` and the repetition's index (from 0), logging each result. */
async function repeat<P extends object, R>(
  name: string,
  times: number,
  p: P,
  run: (p: P & { postgresUrl: string }, repetition: number) => Promise<R>,
): Promise<Repeated<P, R>> {
  const results: R[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    const r = await run({ ...p, postgresUrl }, i);
    console.log(`${name} run ${i + 1}/${times} (${((performance.now() - t0) / 1000).toFixed(0)} s): ${JSON.stringify(r).slice(0, 600)}`);
    results.push(r);
  }
  return { params: p, runs: results };
}

// Measure what ships: the compiled build, which bin/outpost.js runs when it is fresh (forced here for every child);
// built here unless it already is.
const ROOT = fileURLToPath(new URL('..', import.meta.url));
if (isBuildFresh(ROOT)) console.log('bench: the compiled build in dist/ is fresh');
else execFileSync('npm', ['run', '--silent', 'build:server'], { cwd: ROOT, stdio: 'inherit' });
process.env.OUTPOST_RUNTIME = 'dist';

const started = new Date();
const machine = describeMachine();
/** The code measured: HEAD, and whether src/ had uncommitted changes (they are measured too). */
const source = (() => {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' }).trim();
    return { commit: git('rev-parse', '--short', 'HEAD'), srcChanged: git('status', '--porcelain', '--', 'src', 'bin').length > 0 };
  } catch {
    return { commit: 'unknown', srcChanged: false };
  }
})();
console.log(
  `bench: ${only.join(', ')}; ${runs} run(s)${wants('transports') ? ` (transports: ${transportRuns})` : ''}${quick ? ', quick' : ''}; ${machine.cores} cores, ${machine.memoryGiB} GiB, node ${machine.node}`,
);

const results: BenchResults = {
  started: started.toISOString(),
  finished: '',
  quick,
  source,
  machine,
  loadAverageAtEnd: [],
  params: { runs, only },
};
if (wants('initial-sync')) results.initialSync = await repeat('initial-sync', runs, params.initialSync, runInitialSync);
if (wants('churn')) results.churn = await repeat('churn', runs, params.churn, runChurn);
if (wants('operations')) results.operations = await repeat('operations', runs, params.operations, runOperations);
if (wants('reads')) results.reads = await repeat('reads', runs, params.reads, runOperations);
if (wants('forwarding')) results.forwarding = await repeat('forwarding', 1, params.forwarding, runForwarding);
if (wants('failover')) {
  results.failover = await repeat('failover', 1, params.failover, runFailover);
  // The same kills with the agent keeping a standby stream on another replica (clouddriver.connections: 2).
  results.failoverTwoConnections = await repeat('failover', 1, { ...params.failover, connections: 2 as const }, runFailover);
}
if (wants('connection-scale')) results.connectionScale = await repeat('connection-scale', runs, params.connectionScale, runConnectionScale);
if (wants('replica-scale')) results.replicaScale = await repeat('replica-scale', 1, params.replicaScale, runReplicaScale);
if (wants('fleet-churn')) results.fleetChurn = await repeat('fleet-churn', 1, params.fleetChurn, runFleetChurn);
if (wants('history-cost')) results.historyCost = await repeat('history-cost', 1, params.historyCost, runHistoryCost);
if (wants('spinnaker-deploy')) results.spinnakerDeploy = await repeat('spinnaker-deploy', 1, params.spinnakerDeploy, runSpinnakerDeploy);
if (wants('spinnaker-infra')) results.spinnakerInfra = await repeat('spinnaker-infra', 1, params.spinnakerInfra, runSpinnakerInfra);
if (wants('cache-partitions')) results.cachePartitions = await repeat('cache-partitions', 1, params.cachePartitions, runCachePartitions);
if (wants('agent-footprint')) results.agentFootprint = await repeat('agent-footprint', runs, params.agentFootprint, runAgentFootprint);
if (wants('transports')) results.transports = await repeat('transports', transportRuns, params.transports, runTransports);
if (wants('kube-proxy')) results.kubeProxy = await repeat('kube-proxy', runs, params.kubeProxy, runKubeProxy);
if (wants('cli')) results.cliRoundTrip = await repeat('cli', runs, params.cli, runCliRoundTrip);
results.finished = new Date().toISOString();
results.loadAverageAtEnd = describeMachine().loadAverage;

const markdown = renderReport(results);
console.log(`\n${markdown}`);
const dir = values.out ? `${values.out.replace(/\/+$/, '')}/` : fileURLToPath(new URL('./results/', import.meta.url));
mkdirSync(dir, { recursive: true });
const stamp = started.toISOString().replace(/[:.]/g, '-');
writeFileSync(`${dir}${stamp}.json`, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(`${dir}${stamp}.md`, markdown);
console.log(`bench: wrote ${dir}${stamp}.json and .md`);
