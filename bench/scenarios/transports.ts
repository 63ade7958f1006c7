/**
 * Scenario — the agent stream over WebSocket against HTTP/2 (gRPC), side by side in one run: each repetition runs the
 * churn scenario and then the initial-sync scenario once per transport, with fresh processes and databases each
 * time, the transport measured first alternating between repetitions (HTTP/2 first in even ones) so neither profits
 * from going second. The figures are ratios within a repetition (WebSocket against the HTTP/2 run beside it), because
 * absolute times on a shared machine drift from one minute to the next.
 */
import type { BenchTransport } from '../processes.js';
import { figureRow, type Row } from '../rows.js';
import { runChurn, type ChurnResult } from './churn.js';
import { runInitialSync, type InitialSyncResult } from './initial-sync.js';

/** Parameters of one repetition: the sizes of its churn and initial-sync runs. */
export interface TransportsParams {
  churn: { changesPerSecond: number; seconds: number };
  initialSync: { objects: number };
  postgresUrl: string;
}

/** One repetition: both scenarios over both transports. */
export interface TransportsResult {
  /** The transport each scenario ran over first in this repetition. */
  first: BenchTransport;
  churn: Record<BenchTransport, ChurnResult>;
  initialSync: Record<BenchTransport, InitialSyncResult>;
}

/** The order of the transports in repetition `repetition` (0-based): HTTP/2 first in even ones, WebSocket in odd. */
function transportOrder(repetition: number): [BenchTransport, BenchTransport] {
  return repetition % 2 === 0 ? ['grpc', 'websocket'] : ['websocket', 'grpc'];
}

/** Runs repetition `repetition` (0-based; it sets the order) of the scenario. */
export async function runTransports(params: TransportsParams, repetition = 0): Promise<TransportsResult> {
  const order = transportOrder(repetition);
  const { postgresUrl } = params;
  const churn: Partial<Record<BenchTransport, ChurnResult>> = {};
  for (const transport of order) churn[transport] = await runChurn({ ...params.churn, postgresUrl, transport });
  const initialSync: Partial<Record<BenchTransport, InitialSyncResult>> = {};
  for (const transport of order) initialSync[transport] = await runInitialSync({ ...params.initialSync, postgresUrl, transport });
  return {
    first: order[0],
    churn: churn as Record<BenchTransport, ChurnResult>,
    initialSync: initialSync as Record<BenchTransport, InitialSyncResult>,
  };
}

/** The target: WebSocket within 1.5× of HTTP/2 (a ratio, WebSocket the slower side, of at most 1.5). */
const TARGET = { target: '≤ 1.5 (WebSocket within 1.5× of HTTP/2)', meets: (m: number) => m <= 1.5 };

/**
 * Table rows of the repetitions: each transport's figures and the ratio of the two within each repetition (the row
 * shows their medians over the repetitions). `judged` false (a --quick run) leaves the target unjudged.
 */
export function transportsRows(runs: TransportsResult[], params: Omit<TransportsParams, 'postgresUrl'>, judged = true): Row[] {
  const c = `transports: churn ${params.churn.changesPerSecond}/s × ${params.churn.seconds} s`;
  const s = `transports: initial sync ${params.initialSync.objects} objects`;
  return [
    figureRow(
      c,
      'HTTP/2 (gRPC): change → committed row, p99 ms',
      runs.map((r) => r.churn.grpc.cache.p99),
    ),
    figureRow(
      c,
      'WebSocket: change → committed row, p99 ms',
      runs.map((r) => r.churn.websocket.cache.p99),
    ),
    figureRow(
      c,
      'ratio WebSocket / HTTP/2, p99',
      runs.map((r) => r.churn.websocket.cache.p99 / r.churn.grpc.cache.p99),
      { digits: 2, ...TARGET, judged },
    ),
    figureRow(
      c,
      'ratio WebSocket / HTTP/2, p50',
      runs.map((r) => r.churn.websocket.cache.p50 / r.churn.grpc.cache.p50),
      { digits: 2 },
    ),
    figureRow(
      c,
      'load check: bare client-node watch p99 in the WebSocket run / in the HTTP/2 run (> 1: the WebSocket run had the busier machine)',
      runs.map((r) => r.churn.websocket.informer.p99 / r.churn.grpc.informer.p99),
      { digits: 2 },
    ),
    figureRow(
      s,
      'HTTP/2 (gRPC): objects/s, first → last row committed',
      runs.map((r) => r.initialSync.grpc.objectsPerSecond),
      { digits: 0 },
    ),
    figureRow(
      s,
      'WebSocket: objects/s, first → last row committed',
      runs.map((r) => r.initialSync.websocket.objectsPerSecond),
      { digits: 0 },
    ),
    figureRow(
      s,
      'ratio HTTP/2 / WebSocket, objects/s (> 1: WebSocket slower)',
      runs.map((r) => r.initialSync.grpc.objectsPerSecond / r.initialSync.websocket.objectsPerSecond),
      { digits: 2, ...TARGET, judged },
    ),
    figureRow(
      s,
      'ratio WebSocket / HTTP/2, seconds agent start → synced',
      runs.map((r) => r.initialSync.websocket.totalSeconds / r.initialSync.grpc.totalSeconds),
      { digits: 2 },
    ),
  ];
}
