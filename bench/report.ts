/**
 * Turns a benchmark results file (`bench/results/<timestamp>.json`, written by bench/run.ts) into its markdown
 * report: the machine, code and parameters, a note per multi-process scenario, and one table of
 * `scenario | measure | median | range over runs | target | met` (plus a `before` column when an earlier results
 * file is given, matched row by row). The README's section is rendered by the same code from a committed results
 * file (bench/readme-table.ts), so the numbers users read are the numbers a run wrote.
 */
import type { MachineInfo } from './machine.js';
import type { Row } from './rows.js';
import { agentFootprintRows, type AgentFootprintParams, type AgentFootprintResult } from './scenarios/agent-footprint.js';
import type { CachePartitionsParams, CachePartitionsResult } from './scenarios/cache-partitions.js';
import { cachePartitionsNote, cachePartitionsRows } from './scenarios/cache-partitions-rows.js';
import { historyCostRows, type HistoryCostParams, type HistoryCostResult } from './scenarios/history-cost.js';
import { cliRoundTripRows, type CliRoundTripParams, type CliRoundTripResult } from './scenarios/cli-round-trip.js';
import { churnRows, type ChurnParams, type ChurnResult } from './scenarios/churn.js';
import { connectionScaleRows, type ConnectionScaleParams, type ConnectionScaleResult } from './scenarios/connection-scale.js';
import { failoverRows, type FailoverParams, type FailoverResult } from './scenarios/failover.js';
import { forwardingRows, type ForwardingParams, type ForwardingResult } from './scenarios/forwarding.js';
import { spinnakerDeployRows, type SpinnakerDeployParams, type SpinnakerDeployResult } from './scenarios/spinnaker-deploy.js';
import type { SpinnakerInfraParams, SpinnakerInfraResult } from './scenarios/spinnaker-infra.js';
import { spinnakerInfraNote, spinnakerInfraRows } from './scenarios/spinnaker-infra-rows.js';
import { initialSyncRows, type InitialSyncParams, type InitialSyncResult } from './scenarios/initial-sync.js';
import type { KubeProxyParams, KubeProxyResult } from './scenarios/kube-proxy.js';
import { kubeProxyRows } from './scenarios/kube-proxy-rows.js';
import { operationsRows, type OperationsParams, type OperationsResult } from './scenarios/operations.js';
import { replicaScaleRows, type ReplicaScaleParams, type ReplicaScaleResult } from './scenarios/replica-scale.js';
import { fleetChurnRows, type FleetChurnParams, type FleetChurnResult } from './scenarios/fleet-churn.js';
import { transportsRows, type TransportsParams, type TransportsResult } from './scenarios/transports.js';

/** A scenario run `runs` times with the same parameters (the database URL left out). */
export interface Repeated<P, R> {
  params: Omit<P, 'postgresUrl'>;
  runs: R[];
}

/** Everything one `npm run bench` run writes. Scenarios not run are absent. */
export interface BenchResults {
  started: string;
  finished: string;
  quick: boolean;
  source: { commit: string; srcChanged: boolean };
  machine: MachineInfo;
  loadAverageAtEnd: number[];
  /** Repetitions of the repeated scenarios, and the scenarios selected. */
  params: { runs: number; only: string[] };
  initialSync?: Repeated<InitialSyncParams, InitialSyncResult>;
  churn?: Repeated<ChurnParams, ChurnResult>;
  /** Stored operations (merge patches); stored gets in files from before reads stopped being stored. */
  operations?: Repeated<OperationsParams, OperationsResult>;
  /** Reads (gets), never stored: the same round trip as `operations` without the database. */
  reads?: Repeated<OperationsParams, OperationsResult>;
  /** One run of many operations (its percentiles are over the operations). */
  forwarding?: Repeated<ForwardingParams, ForwardingResult>;
  /** One run of many kill/recover cycles (its percentiles are over the cycles). */
  failover?: Repeated<FailoverParams, FailoverResult>;
  /** The failover scenario with `clouddriver.connections: 2`, run right after the one-connection runs. */
  failoverTwoConnections?: Repeated<FailoverParams, FailoverResult>;
  connectionScale?: Repeated<ConnectionScaleParams, ConnectionScaleResult>;
  /** One run of the swarm over 3 replicas (its figures are per replica). */
  replicaScale?: Repeated<ReplicaScaleParams, ReplicaScaleResult>;
  /** One run of sparse changes from a swarm, coalesced and not. */
  fleetChurn?: Repeated<FleetChurnParams, FleetChurnResult>;
  agentFootprint?: Repeated<AgentFootprintParams, AgentFootprintResult>;
  /** One run of the history writer through a simulated hour, per fleet size and activity. */
  historyCost?: Repeated<Omit<HistoryCostParams, 'postgresUrl'>, HistoryCostResult>;
  spinnakerDeploy?: Repeated<SpinnakerDeployParams, SpinnakerDeployResult>;
  /** One run of the infrastructure views (its percentiles are over the requests and changes). */
  spinnakerInfra?: Repeated<SpinnakerInfraParams, SpinnakerInfraResult>;
  /** One run of the generated cache, partitioned and one table (its percentiles are over the requests). */
  cachePartitions?: Repeated<CachePartitionsParams, CachePartitionsResult>;
  /** Each run: churn and initial sync over HTTP/2 and over WebSocket, the order alternating between runs. */
  transports?: Repeated<TransportsParams, TransportsResult>;
  /** Runs of kubectl get and watch through the gateway, two bare relays and straight to the sandbox, interleaved. */
  kubeProxy?: Repeated<KubeProxyParams, KubeProxyResult>;
  /** Runs of `outpost get` processes (compiled, sources), `kubectl get` and `node -e 0`, interleaved. */
  cliRoundTrip?: Repeated<CliRoundTripParams, CliRoundTripResult>;
}

/** Every row of the results, in scenario order. */
export function resultRows(r: BenchResults): Row[] {
  return [
    ...(r.initialSync ? initialSyncRows(r.initialSync.runs, r.initialSync.params.objects) : []),
    ...(r.churn ? churnRows(r.churn.runs, r.churn.params) : []),
    ...(r.operations ? operationsRows(r.operations.runs) : []),
    ...(r.reads ? operationsRows(r.reads.runs) : []),
    ...(r.forwarding?.runs[0] ? forwardingRows(r.forwarding.runs[0]) : []),
    ...(r.failover?.runs[0] ? failoverRows(r.failover.runs[0]) : []),
    ...(r.failoverTwoConnections?.runs[0] ? failoverRows(r.failoverTwoConnections.runs[0]) : []),
    ...(r.connectionScale ? connectionScaleRows(r.connectionScale.runs, r.connectionScale.params.agents) : []),
    ...(r.replicaScale ? replicaScaleRows(r.replicaScale.runs, r.replicaScale.params.agents) : []),
    ...(r.fleetChurn?.runs[0] ? fleetChurnRows(r.fleetChurn.runs[0], r.fleetChurn.params) : []),
    ...(r.historyCost?.runs[0] ? historyCostRows(r.historyCost.runs[0]) : []),
    ...(r.agentFootprint ? agentFootprintRows(r.agentFootprint.runs, r.agentFootprint.params) : []),
    ...(r.spinnakerDeploy?.runs[0] ? spinnakerDeployRows(r.spinnakerDeploy.runs[0]) : []),
    ...(r.spinnakerInfra?.runs[0] ? spinnakerInfraRows(r.spinnakerInfra.runs[0], r.spinnakerInfra.params) : []),
    ...(r.cachePartitions?.runs[0] ? cachePartitionsRows(r.cachePartitions.runs[0]) : []),
    ...(r.transports ? transportsRows(r.transports.runs, r.transports.params, !r.quick) : []),
    ...(r.kubeProxy ? kubeProxyRows(r.kubeProxy.runs, !r.quick) : []),
    ...(r.cliRoundTrip ? cliRoundTripRows(r.cliRoundTrip.runs, !r.quick) : []),
  ];
}

/** The results table as markdown lines; with `before`, a column of its values for the same scenario and measure. */
export function renderTable(r: BenchResults, before?: BenchResults): string[] {
  const earlier = new Map((before ? resultRows(before) : []).map((row) => [`${row.scenario}\n${row.measure}`, row.value]));
  const header = ['scenario', 'measure', 'median', 'range over runs', ...(before ? ['before'] : []), 'target', 'met'];
  const rows = resultRows(r).map((row) => [
    row.scenario,
    row.measure,
    row.value,
    row.range,
    ...(before ? [earlier.get(`${row.scenario}\n${row.measure}`) ?? ''] : []),
    row.target,
    row.met,
  ]);
  return [`| ${header.join(' | ')} |`, `|${header.map(() => ' --- ').join('|')}|`, ...rows.map((row) => `| ${row.join(' | ')} |`)];
}

/** The machine, code and parameters a run measured. */
export function renderSetup(r: BenchResults, before?: { file: string; results: BenchResults }): string[] {
  const m = r.machine;
  const scenarioParams = Object.fromEntries(
    (
      [
        'initialSync',
        'churn',
        'operations',
        'reads',
        'forwarding',
        'failover',
        'connectionScale',
        'replicaScale',
        'fleetChurn',
        'historyCost',
        'agentFootprint',
        'spinnakerDeploy',
        'spinnakerInfra',
        'cachePartitions',
        'transports',
        'kubeProxy',
        'cliRoundTrip',
      ] as const
    )
      .filter((k) => r[k])
      .map((k) => [k, r[k]!.params]),
  );
  return [
    `Code: ${r.source.commit}${r.source.srcChanged ? ' with uncommitted changes in src/' : ''}${r.quick ? ' (--quick: too small to judge the targets)' : ''}; ` +
      `${r.params.runs} run(s) of each repeated scenario${r.transports ? `, ${r.transports.runs.length} of transports (its HTTP/2 and WebSocket runs in alternating order)` : ''}.`,
    `Machine: ${m.cores} cores (${m.cpuModel}), ${m.memoryGiB} GiB, node ${m.node}, ${m.platform}; load average (1/5/15 min) ${m.loadAverage.join(' / ')} at start, ${r.loadAverageAtEnd.join(' / ')} at end.`,
    `Parameters: ${JSON.stringify(scenarioParams)}.`,
    ...(before ? [`The before column: \`${before.file}\` (code ${before.results.source.commit}, ${before.results.started}).`] : []),
  ];
}

/** Notes on how the multi-process scenarios were set up (printed above the table). */
function scenarioNotes(r: BenchResults): string[] {
  const f = r.forwarding?.runs[0];
  const fo = r.failover?.runs[0];
  const t = r.transports?.runs;
  const k = r.kubeProxy?.runs[0];
  return [
    ...(f
      ? [
          `Forwarding: 2 gateway replicas on one Postgres, the agent's stream on gw-1; \`get\` operations (wait) alternated gw-1 / gw-2 (ABBA) at concurrency 1. Replica config ${JSON.stringify(f.config.gateway)}.`,
        ]
      : []),
    ...(fo
      ? [
          `Failover: 3 gateway replicas on one Postgres behind a round-robin TCP balancer; each run waits until the agent's stream is ${fo.config.minSessionSeconds} s old, kill -9s the lease holder and retries \`get\` (wait, ${fo.config.attemptTimeoutSeconds} s timeout each) on the survivors until one succeeds, then restarts the killed replica. Replica config ${JSON.stringify(fo.config.gateway)} (lease length default, 15 s); agent config ${JSON.stringify(fo.config.agent)}.`,
        ]
      : []),
    ...(r.replicaScale
      ? [
          `Replica scale: 3 gateway replicas (config defaults) on one Postgres; one swarm process of simulated agents, agent K dialling replica K mod 3 directly (round robin, no balancer), each with an account of its own; Postgres figures from pg_stat_database and pg_stat_user_tables over the idle window, renewals and touches per replica from the rows' shared now() stamps.`,
        ]
      : []),
    ...(r.spinnakerInfra ? [spinnakerInfraNote(r.spinnakerInfra.params)] : []),
    ...(r.cachePartitions ? [cachePartitionsNote(r.cachePartitions.params)] : []),
    ...(t
      ? [
          `Transports: each of ${t.length} run(s) runs churn, then initial sync, once with the agent's stream over HTTP/2 (gRPC port) and once over WebSocket (HTTP port), fresh processes and database each time; first in each run: ${t.map((x) => (x.first === 'grpc' ? 'HTTP/2' : 'WebSocket')).join(', ')}. Ratios are taken within a run, then their median.`,
        ]
      : []),
    ...(k
      ? [
          `Kube-proxy: one sandbox (TLS, in the bench process), an insecure gateway over plain HTTP and an agent streaming over gRPC; the same requests as the same Kubernetes user (\`outpost:anonymous\`) straight to the sandbox (admin token + Impersonate-User), through two bare Node relay processes in a row (baseline: the same process hops without Outpost) and through \`/k8s/bench\`, alternated ABBA; the three watches open at once on the same ConfigMaps.${k.kubectl ? ` kubectl: ${k.kubectl.bin} (${k.kubectl.version}).` : ' No kubectl binary: its rows are left out.'}`,
        ]
      : []),
  ];
}

/** The whole report of one run. */
export function renderReport(r: BenchResults, before?: { file: string; results: BenchResults }): string {
  const notes = scenarioNotes(r);
  return [
    `# Outpost benchmark ${r.started}`,
    '',
    ...renderSetup(r, before),
    ...(notes.length > 0 ? ['', ...notes] : []),
    '',
    ...renderTable(r, before?.results),
    '',
  ].join('\n');
}
