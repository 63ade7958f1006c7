/**
 * Scenario — forwarded vs local operations: a sandbox, two gateway replicas (gw-1, gw-2) on one fresh Postgres
 * database and one agent whose stream goes straight to gw-1 (it holds the account's lease). A client in this process
 * submits `get` operations with `wait: true` at concurrency 1, alternately to gw-1 (dispatched down the local stream)
 * and to gw-2 (forwarded with `POST /armory/agent/forwardedoperations` to gw-1, which answers that call with the
 * committed result: one hop, docs/replicas.md), in ABBA order so
 * drift (JIT, Postgres caches, a noisy neighbour) hits both sides alike. The difference of the round trips is what
 * forwarding costs.
 */
import { figureRow, type Row } from '../rows.js';
import { fromProtoDuration } from '../../src/client/duration.js';
import { createOperationClient, type OperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { summarize } from '../machine.js';
import { readAccount, startReplicaSet, type ConfigObject, type ReplicaSet } from '../replicas.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

/** Parameters of one run. */
export interface ForwardingParams {
  postgresUrl: string;
  /** Measured operations per side (local and forwarded each). */
  operations: number;
  /** Unmeasured operations per side first (connections, JIT, prepared statements). */
  warmup: number;
}

/** Figures of the scenario (milliseconds). */
export interface ForwardingResult {
  operations: number;
  failed: number;
  firstError?: string;
  /** Round trip of operations submitted to gw-1, which holds the stream. */
  local: ReturnType<typeof summarize>;
  /** Round trip of operations submitted to gw-2 (forwarded to gw-1, the result in the forward's answer). */
  forwarded: ReturnType<typeof summarize>;
  /** The agent's kubernetes_duration of the same operations (the part that is not Outpost). */
  localKubernetes: ReturnType<typeof summarize>;
  forwardedKubernetes: ReturnType<typeof summarize>;
  /** The receiving replica's total_duration (received → terminal): the round trip without the client's HTTP legs. */
  localServer: ReturnType<typeof summarize>;
  forwardedServer: ReturnType<typeof summarize>;
  /** forwarded − local, percentile by percentile. */
  extra: { p50: number; p90: number; p99: number; max: number };
  /** forwarded − local within each round (the two operations submitted back to back): less sensitive to drift. */
  paired: ReturnType<typeof summarize>;
  /** Configuration the replicas and the agent ran with. */
  config: { gateway: ConfigObject; agent: ConfigObject };
}

const ACCOUNT = 'bench';
/**
 * A stored operation that changes nothing: an empty merge patch of one ConfigMap (a get is a read since reads stopped
 * being stored, and would measure another path).
 */
const SPEC = {
  case: 'patch' as const,
  value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: 'web-config', type: PatchType.MERGE, patch: '{}' },
};

/** Replica discovery fast enough that gw-2 finds gw-1 within a second of starting (the default is 5 s / 15 s). */
const GATEWAY_CONFIG: ConfigObject = { replicas: { discovery: 'database', heartbeatIntervalSeconds: 1, deadAfterSeconds: 5 } };
const AGENT_CONFIG: ConfigObject = {};

async function submit(client: OperationClient) {
  const t0 = performance.now();
  const op = await client.submitAndWait({ account: ACCOUNT, timeout: { seconds: 10n }, spec: SPEC });
  const ms = performance.now() - t0;
  const ok = op.state === OperationState.SUCCEEDED && op.result?.success === true;
  return {
    ms,
    ok,
    kubernetes: ok ? fromProtoDuration(op.result!.kubernetesDuration) : 0,
    server: op.totalDuration ? fromProtoDuration(op.totalDuration) : NaN,
    error: ok ? '' : `${OperationState[op.state]} ${op.error || op.result?.message || ''}`,
  };
}

/** Waits until gw-1 holds the account's lease and an operation succeeds through each replica. */
async function waitReady(set: ReplicaSet, local: OperationClient, forwarded: OperationClient): Promise<void> {
  const deadline = Date.now() + 90_000;
  let last = '';
  for (;;) {
    set.checkAlive();
    if (Date.now() > deadline) throw new Error(`not ready within 90 s: ${last}`);
    const account = await readAccount(set.replica('gw-1').httpUrl, ACCOUNT);
    if (account?.state !== 'ACTIVE' || account.gatewayId !== 'gw-1') {
      last = `account ${JSON.stringify(account)}`;
      await sleep(200);
      continue;
    }
    const results = [];
    for (const client of [local, forwarded]) results.push(await submit(client).catch((err: Error) => ({ ok: false, error: err.message })));
    if (results.every((r) => r.ok)) return;
    last = results.map((r) => r.error).join(' / ');
    await sleep(200);
  }
}

/** Runs the scenario with fresh processes and a fresh database. */
export async function runForwarding(params: ForwardingParams): Promise<ForwardingResult> {
  const set = await startReplicaSet({
    postgresUrl: params.postgresUrl,
    gateways: ['gw-1', 'gw-2'],
    gatewayConfig: GATEWAY_CONFIG,
    logLevel: 'info',
    prefix: 'outpost-bench-forwarding-',
  });
  let failed = true;
  try {
    // Straight to gw-1's gRPC port: gw-1 holds the stream and the lease; gw-2 has none and must forward.
    set.startAgent('bench-agent', ACCOUNT, `127.0.0.1:${set.replica('gw-1').grpcPort}`, AGENT_CONFIG);
    // Binary protobuf over Connect/HTTP 1.1, as in the operations scenario.
    const local = createOperationClient({ gatewayUrl: set.replica('gw-1').httpUrl, binary: true });
    const forwarded = createOperationClient({ gatewayUrl: set.replica('gw-2').httpUrl, binary: true });
    await waitReady(set, local, forwarded);

    const samples = {
      local: [] as number[],
      forwarded: [] as number[],
      localK8s: [] as number[],
      forwardedK8s: [] as number[],
      localServer: [] as number[],
      forwardedServer: [] as number[],
    };
    const paired: number[] = [];
    let errors = 0;
    let firstError = '';
    for (let i = 0; i < params.warmup + params.operations; i++) {
      const measured = i >= params.warmup;
      // ABBA: local first on even rounds, forwarded first on odd ones.
      const order = i % 2 === 0 ? (['local', 'forwarded'] as const) : (['forwarded', 'local'] as const);
      const round: Partial<Record<'local' | 'forwarded', number>> = {};
      for (const side of order) {
        const r = await submit(side === 'local' ? local : forwarded).catch((err: Error) => ({
          ms: 0,
          ok: false,
          kubernetes: 0,
          server: NaN,
          error: err.message,
        }));
        if (!r.ok) {
          errors++;
          firstError ||= `${side}: ${r.error}`;
          continue;
        }
        if (!measured) continue;
        round[side] = r.ms;
        samples[side].push(r.ms);
        samples[side === 'local' ? 'localK8s' : 'forwardedK8s'].push(r.kubernetes);
        if (!Number.isNaN(r.server)) samples[side === 'local' ? 'localServer' : 'forwardedServer'].push(r.server);
      }
      if (round.local !== undefined && round.forwarded !== undefined) paired.push(round.forwarded - round.local);
    }
    if (samples.local.length === 0 || samples.forwarded.length === 0) throw new Error(`no operation succeeded: ${firstError}`);
    // The lease must still be gw-1's, or the "forwarded" side was not forwarded.
    const [row] = await set.sql<{ gateway_id: string }>('select gateway_id from accounts where name = $1', [ACCOUNT]);
    if (row?.gateway_id !== 'gw-1') throw new Error(`the account moved to ${row?.gateway_id} during the run`);

    const l = summarize(samples.local);
    const f = summarize(samples.forwarded);
    failed = false;
    return {
      operations: params.operations,
      failed: errors,
      ...(firstError ? { firstError } : {}),
      local: l,
      forwarded: f,
      localKubernetes: summarize(samples.localK8s),
      forwardedKubernetes: summarize(samples.forwardedK8s),
      localServer: summarize(samples.localServer),
      forwardedServer: summarize(samples.forwardedServer),
      extra: { p50: f.p50 - l.p50, p90: f.p90 - l.p90, p99: f.p99 - l.p99, max: f.max - l.max },
      paired: summarize(paired),
      config: { gateway: GATEWAY_CONFIG, agent: AGENT_CONFIG },
    };
  } finally {
    await set.close(failed);
  }
}

/** Table rows of the forwarding run. */
export function forwardingRows(f: ForwardingResult): Row[] {
  const s = 'forwarding (get) c=1';
  return [
    figureRow(s, `local round trip (submitted to the replica holding the stream), p50 ms (${f.local.n} ops)`, [f.local.p50], { digits: 2 }),
    figureRow(s, 'forwarded round trip (submitted to the other replica), p50 ms', [f.forwarded.p50], { digits: 2 }),
    figureRow(s, 'extra ms = forwarded − local, p50', [f.extra.p50], { digits: 2 }),
    figureRow(s, `extra ms = forwarded − local, p99 (${f.failed} failed)`, [f.failed === 0 ? f.extra.p99 : NaN], {
      digits: 2,
      target: 'p99 ≤ 2 ms',
      meets: (m) => m <= 2,
    }),
    figureRow(s, "receiving replica's total_duration, forwarded − local, p50 ms", [f.forwardedServer.p50 - f.localServer.p50], {
      digits: 2,
    }),
  ];
}
