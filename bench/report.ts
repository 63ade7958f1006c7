/**
 * Turns a benchmark results file (`bench/results/<timestamp>.json`, written by bench/run.ts) into its markdown
 * report: the machine and parameters, a note per multi-process scenario, and one table of
 * `scenario | measure | median | p90 | target | met`. The README's table is rendered by the same code from a committed
 * results file (bench/readme-table.ts), so the numbers users read are the numbers a run wrote.
 */
import type { MachineInfo } from './machine.js';
import type { ChurnResult } from './scenarios/churn.js';
import type { FailoverResult } from './scenarios/failover.js';
import type { ForwardingResult } from './scenarios/forwarding.js';
import type { InitialSyncResult } from './scenarios/initial-sync.js';
import type { OperationsResult } from './scenarios/operations.js';

type Summary = { n: number; min: number; p50: number; p90: number; p99: number; max: number };

/** Everything one `npm run bench` run writes. Scenarios not run are absent. */
export interface BenchResults {
  started: string;
  quick?: boolean;
  source: { commit: string; srcChanged: boolean };
  machine: MachineInfo;
  loadAverageAtEnd: number[];
  params: Record<string, unknown> & { objects: number; runs: number; only: string[] };
  initialSync?: { runs: InitialSyncResult[]; rate: Summary; copyRate: Summary; ratio: Summary; total: Summary };
  churn?: ChurnResult;
  operations?: OperationsResult;
  forwarding?: ForwardingResult;
  failover?: FailoverResult;
  /** Rows of scenarios that render their own (connection scale, agent footprint…). */
  extraRows?: string[][];
}

const fixed = (x: number, digits: number) => (Number.isFinite(x) ? x.toFixed(digits) : 'n/a');

function initialSyncRows(s: NonNullable<BenchResults['initialSync']>, objects: number): string[][] {
  const peak = (pick: (r: InitialSyncResult) => number) => {
    const xs = s.runs.map(pick).sort((a, b) => a - b);
    return fixed(xs[Math.floor((xs.length - 1) / 2)] ?? NaN, 0);
  };
  const full = objects >= 100_000;
  return [
    ['initial sync', `seconds, agent start → ${objects} objects synced (${s.total.n} runs)`, fixed(s.total.p50, 2), fixed(s.total.p90, 2), '≤ 20 s (100k)', full ? String(s.total.p50 <= 20) : 'n/a (quick)'],
    ['initial sync', 'objects/s (first → last row committed)', fixed(s.rate.p50, 0), fixed(s.rate.p90, 0), '', ''],
    ['initial sync', 'raw COPY objects/s (baseline, same rows)', fixed(s.copyRate.p50, 0), fixed(s.copyRate.p90, 0), '', ''],
    ['initial sync', 'ratio ours / COPY', fixed(s.ratio.p50, 2), fixed(s.ratio.p90, 2), '≥ 0.50', String(s.ratio.p50 >= 0.5)],
    ['initial sync', 'agent peak RSS MiB', peak((r) => r.agentPeakRssMiB), '', '', ''],
    ['initial sync', 'gateway peak RSS MiB', peak((r) => r.gatewayPeakRssMiB), '', '', ''],
  ];
}

function churnRows(c: ChurnResult): string[][] {
  return [
    ['churn 1000/s', `change → committed row, ms (${c.changes} changes; p99 ${fixed(c.cache.p99, 1)}, max ${fixed(c.cache.max, 1)})`, fixed(c.cache.p50, 1), fixed(c.cache.p90, 1), 'p99 ≤ 100 ms', String(c.cache.p99 <= 100)],
    ['churn 1000/s', `bare client-node watch, ms (baseline; p99 ${fixed(c.informer.p99, 1)}, max ${fixed(c.informer.max, 1)})`, fixed(c.informer.p50, 1), fixed(c.informer.p90, 1), '', ''],
  ];
}

function operationRows(o: OperationsResult): string[][] {
  return [
    ...o.levels.map((l) => [
      `operations (get) c=${l.concurrency}`,
      `overhead ms = round trip − kubernetes_duration (${l.operations} ops, p99 ${fixed(l.overhead.p99, 2)}, ${l.failed} failed)`,
      fixed(l.overhead.p50, 2),
      fixed(l.overhead.p90, 2),
      'p99 ≤ 10 ms',
      String(l.overhead.p99 <= 10),
    ]),
    ['operations (get) c=100', 'max operations/s, one gateway replica', fixed(o.maxOperationsPerSecond, 0), '', '≥ 1000', String(o.maxOperationsPerSecond >= 1000)],
  ];
}

function forwardingRows(f: ForwardingResult): string[][] {
  return [
    ['forwarding (get) c=1', `local round trip ms, submitted to gw-1 holding the stream (${f.local.n} ops; p99 ${fixed(f.local.p99, 2)}, max ${fixed(f.local.max, 1)})`, fixed(f.local.p50, 2), fixed(f.local.p90, 2), '', ''],
    ['forwarding (get) c=1', `forwarded round trip ms, submitted to gw-2 (${f.forwarded.n} ops; p99 ${fixed(f.forwarded.p99, 2)}, max ${fixed(f.forwarded.max, 1)})`, fixed(f.forwarded.p50, 2), fixed(f.forwarded.p90, 2), '', ''],
    ['forwarding (get) c=1', `server side: receiving replica's total_duration ms, forwarded − local (local p50 ${fixed(f.localServer.p50, 1)}, forwarded p50 ${fixed(f.forwardedServer.p50, 1)}; p99 ${fixed(f.forwardedServer.p99 - f.localServer.p99, 1)})`, fixed(f.forwardedServer.p50 - f.localServer.p50, 1), fixed(f.forwardedServer.p90 - f.localServer.p90, 1), '', ''],
    ['forwarding (get) c=1', `extra ms = forwarded − local, per percentile (p99 ${fixed(f.extra.p99, 2)}; paired per round: p50 ${fixed(f.paired.p50, 2)}; ${f.failed} failed)`, fixed(f.extra.p50, 2), fixed(f.extra.p90, 2), 'p99 ≤ 5 ms', String(f.failed === 0 && f.extra.p99 <= 5)],
  ];
}

function failoverRows(f: FailoverResult): string[][] {
  const runs = f.runs.map((r) => (r.seconds === null ? 'none' : r.seconds.toFixed(2))).join(', ');
  const p99Note = f.seconds.n < 100 ? `p99 = max with ${f.seconds.n} samples` : 'p99';
  return [
    ['failover (kill -9 holder)', `seconds, kill → first successful operation (runs: ${runs}; ${p99Note}: ${fixed(f.seconds.p99, 2)}; ${f.failedRuns} not recovered)`, fixed(f.seconds.p50, 2), fixed(f.seconds.p90, 2), 'p99 ≤ 5 s', String(f.failedRuns === 0 && f.seconds.p99 <= 5)],
    ['failover (kill -9 holder)', `seconds, kill → agent's new session on a survivor (max ${fixed(f.reconnect.max, 2)})`, fixed(f.reconnect.p50, 2), fixed(f.reconnect.p90, 2), '', ''],
  ];
}

/** The results table as markdown lines (header, separator, rows). */
export function renderTable(r: BenchResults): string[] {
  const rows = [
    ['scenario', 'measure', 'median', 'p90', 'target', 'met'],
    ...(r.initialSync && r.initialSync.runs.length > 0 ? initialSyncRows(r.initialSync, r.params.objects) : []),
    ...(r.churn ? churnRows(r.churn) : []),
    ...(r.operations ? operationRows(r.operations) : []),
    ...(r.forwarding ? forwardingRows(r.forwarding) : []),
    ...(r.failover ? failoverRows(r.failover) : []),
    ...(r.extraRows ?? []),
  ];
  const table = rows.map((row) => `| ${row.join(' | ')} |`);
  table.splice(1, 0, `|${rows[0]!.map(() => ' --- ').join('|')}|`);
  return table;
}

/** The machine, code and parameters a run measured, in one paragraph. */
export function renderSetup(r: BenchResults): string[] {
  const m = r.machine;
  return [
    `Code: ${r.source.commit}${r.source.srcChanged ? ' with uncommitted changes in src/' : ''}${r.quick ? ' (--quick)' : ''}.`,
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, node ${m.node}, ${m.platform}; load average (1/5/15 min) ${m.loadAverage.join(' / ')} at start, ${r.loadAverageAtEnd.join(' / ')} at end.`,
    `Parameters: ${JSON.stringify(r.params)}.`,
  ];
}

/** The whole report of one run. */
export function renderReport(r: BenchResults): string {
  const f = r.forwarding;
  const fo = r.failover;
  return [
    `# Outpost benchmark ${r.started}`,
    '',
    ...renderSetup(r),
    ...(f ? ['', `Forwarding: 2 gateway replicas on one Postgres, the agent's stream on gw-1; \`get\` operations (wait) alternated gw-1 / gw-2 (ABBA) at concurrency 1. Replica config ${JSON.stringify(f.config.gateway)}.`] : []),
    ...(fo
      ? ['', `Failover: 3 gateway replicas on one Postgres behind a round-robin TCP balancer; each run waits until the agent's stream is ${fo.config.minSessionSeconds} s old, kill -9s the lease holder and retries \`get\` (wait, ${fo.config.attemptTimeoutSeconds} s timeout each) on the survivors until one succeeds, then restarts the killed replica. Replica config ${JSON.stringify(fo.config.gateway)} (lease length default, 15 s); agent config ${JSON.stringify(fo.config.agent)}.`]
      : []),
    '',
    ...renderTable(r),
    '',
  ].join('\n');
}
