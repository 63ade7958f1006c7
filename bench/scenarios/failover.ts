/**
 * Scenario — failover time: a sandbox, three gateway replicas (gw-1…gw-3) on one fresh Postgres database, and one
 * agent reaching them through a round-robin TCP balancer in this process (an L4 Service without health checks: a
 * target that refuses connections is skipped). Each run waits for the steady state (every replica sees the other two,
 * the account is ACTIVE with a valid lease, an operation succeeds through every replica, and the agent's stream is
 * older than the agent's stable-session threshold, so its reconnect backoff starts over as it would after a long
 * quiet period), then `kill -9`s the replica holding the account's lease and submits `get` operations (`wait: true`,
 * short timeout each) to the survivors in turn until one succeeds. Failover time = kill → first successful operation on that account, as a user retrying
 * would see it. The killed replica is restarted on the same ports before the next run.
 */
import { figureRow, type Row } from '../rows.js';
import { Code, ConnectError } from '@connectrpc/connect';
import { setTimeout as sleep } from 'node:timers/promises';
import { createOperationClient, type OperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startBalancer, type Balancer } from '../../testkit/balancer.js';
import { summarize } from '../machine.js';
import { readAccount, startReplicaSet, type ConfigObject, type ReplicaSet } from '../replicas.js';
import { eventually, StopWaiting } from '../../testkit/eventually.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

/** Parameters of the scenario. */
export interface FailoverParams {
  postgresUrl: string;
  /** Kill/recover cycles. */
  runs: number;
  /** Timeout of each operation submitted after the kill (the client waits 2 s longer for the answer). */
  attemptTimeoutSeconds: number;
  /** A run with no successful operation this long after the kill is recorded as failed. */
  giveUpSeconds: number;
  /**
   * The agent's `clouddriver.reconnect.stableSeconds` (default 10): it resets its reconnect backoff only after a
   * stream that lasted this long, so kills closer together measure a growing backoff (up to reconnect.maxSeconds),
   * not a failover.
   */
  stableSeconds: number;
  /** The agent's stream must be at least this old before the kill (more than `stableSeconds`). */
  minSessionSeconds: number;
  /**
   * The agent's `clouddriver.connections` (default 1). With 2 it keeps a standby stream on another replica: the steady
   * state then also waits for the agent's two streams to be live on two different replicas.
   */
  connections?: 1 | 2;
}

/** One submitted operation after the kill. */
interface FailoverAttempt {
  /** Replica it was submitted to. */
  replica: string;
  /** Submitted this long after the kill, and answered after `ms`. */
  atSeconds: number;
  ms: number;
  outcome: string;
}

/** One kill/recover cycle. */
interface FailoverRun {
  run: number;
  /** The replica killed (it held the account's lease). */
  killed: string;
  /** Kill → first successful operation; null when none succeeded within giveUpSeconds. */
  seconds: number | null;
  /** Age of the agent's stream on the killed replica at the kill. */
  sessionAgeSeconds: number;
  /** Replica holding the lease afterwards. */
  newHolder: string;
  /** Kill → the agent's new session row on a survivor (Postgres `connected_at`), when found. */
  reconnectSeconds: number | null;
  /** Kill → the account's lease held by a survivor (polled every 50 ms); null when it did not move within giveUpSeconds. */
  leaseMovedSeconds: number | null;
  attempts: FailoverAttempt[];
  error?: string;
}

/** Figures of the scenario (seconds). */
export interface FailoverResult {
  runs: FailoverRun[];
  /** Over the runs that recovered; with fewer than 100 runs p99 is the maximum (nearest rank). */
  seconds: ReturnType<typeof summarize>;
  reconnect: ReturnType<typeof summarize>;
  leaseMoved: ReturnType<typeof summarize>;
  failedRuns: number;
  /** The agent's `clouddriver.connections` in these runs. */
  connections: 1 | 2;
  config: { gateway: ConfigObject; agent: ConfigObject; attemptTimeoutSeconds: number; minSessionSeconds: number };
  /** Set when logs were kept (a run failed): the temp dir holding every child's log. */
  logsDir?: string;
}

const ACCOUNT = 'bench';
const AGENT_ID = 'bench-agent';
const NAMES = ['gw-1', 'gw-2', 'gw-3'];
/**
 * A stored operation that changes nothing: an empty merge patch of one ConfigMap (a get is a read since reads stopped
 * being stored, and would measure another path).
 */
const SPEC = {
  case: 'patch' as const,
  value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: 'web-config', type: PatchType.MERGE, patch: '{}' },
};

/** Short heartbeats so a dead replica and a dead stream are noticed in seconds; lease length left at its default. */
const GATEWAY_CONFIG: ConfigObject = {
  replicas: { discovery: 'database', heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 2 },
  agents: { heartbeatIntervalSeconds: 1, deadAfterSeconds: 3 },
};
/** Agent reconnect backoff (full jitter: each delay uniform in [0, min(max, base × factor^n)]). */
const agentConfig = (stableSeconds: number, connections: 1 | 2): ConfigObject => ({
  clouddriver: {
    keepAliveHeartbeatSeconds: 1,
    reconnect: { baseSeconds: 0.5, factor: 1.6, maxSeconds: 5, stableSeconds },
    ...(connections === 2 ? { connections } : {}),
  },
});

type Outcome = { ok: true } | { ok: false; reason: string };

async function attempt(client: OperationClient, timeoutSeconds: number): Promise<Outcome> {
  try {
    const res = await client.raw.submitOperation(
      { account: ACCOUNT, wait: true, timeout: { seconds: BigInt(timeoutSeconds) }, spec: SPEC },
      { timeoutMs: timeoutSeconds * 1000 + 2000 },
    );
    const op = res.operation;
    if (op?.state === OperationState.SUCCEEDED && op.result?.success) return { ok: true };
    return { ok: false, reason: `${OperationState[op?.state ?? 0]} ${op?.error || op?.result?.message || ''}`.trim() };
  } catch (err) {
    const e = ConnectError.from(err);
    return { ok: false, reason: `${Code[e.code]}: ${e.rawMessage}` };
  }
}

/**
 * Waits (testkit's `eventually`, up to 60 s) until `check` returns true; a string it returns says why not yet and is
 * what a timeout reports. Ends at once when a child of the replica set died.
 */
function until(what: string, set: ReplicaSet, check: () => Promise<string | true>): Promise<true> {
  const attempt = async () => {
    try {
      set.checkAlive();
    } catch (err) {
      throw new StopWaiting((err as Error).message);
    }
    const result = await check();
    if (result !== true) throw new Error(result);
    return result;
  };
  return eventually(what, attempt, { timeoutMs: 60_000, intervalMs: 100 });
}

/**
 * Every replica lists the three as ready; the account is ACTIVE on a live lease holder; an operation succeeds through
 * each replica; the agent's stream on the holder is `minSessionSeconds` old.
 */
async function waitSteady(
  set: ReplicaSet,
  clients: Map<string, OperationClient>,
  minSessionSeconds: number,
  connections: 1 | 2,
  startedAt: ReadonlyMap<string, number>,
): Promise<{ holder: string; sessionAgeSeconds: number }> {
  await until('every replica to list 3 ready replicas', set, async () => {
    for (const name of NAMES) {
      const res = await fetch(`${set.replica(name).httpUrl}/armory/clouddrivers`, { signal: AbortSignal.timeout(2000) });
      const list = (await res.json()) as { id: string; ready: boolean }[];
      if (list.filter((r) => r.ready).length !== 3) return `${name} lists ${JSON.stringify(list)}`;
    }
    return true;
  });
  let holder = '';
  await until('the account ACTIVE with a valid lease and a live stream on its holder', set, async () => {
    const [row] = await set.sql<{ gateway_id: string; valid: boolean }>(
      'select gateway_id, lease_expires_at > now() as valid from accounts where name = $1',
      [ACCOUNT],
    );
    if (!row?.gateway_id || !row.valid || !set.isRunning(row.gateway_id)) return `lease row ${JSON.stringify(row)}`;
    const account = await readAccount(set.replica(row.gateway_id).httpUrl, ACCOUNT);
    if (account?.state !== 'ACTIVE') return `account ${JSON.stringify(account)}`;
    const live = await set.sql('select 1 from agent_sessions where agent_id = $1 and gateway_id = $2 and ended_at is null', [
      AGENT_ID,
      row.gateway_id,
    ]);
    if (live.length === 0) return `no live session of ${AGENT_ID} on ${row.gateway_id}`;
    holder = row.gateway_id;
    return true;
  });
  if (connections === 2) {
    await until("the agent's two streams live on two replicas", set, async () => {
      const rows = await set.sql<{ gateway_id: string; connected_at: Date }>(
        'select gateway_id, connected_at from agent_sessions where agent_id = $1 and ended_at is null',
        [AGENT_ID],
      );
      // A killed replica's rows stay open (nobody ended them): only sessions of the replica's current process count.
      const live = new Set(
        rows
          .filter((r) => set.isRunning(r.gateway_id) && r.connected_at.getTime() >= (startedAt.get(r.gateway_id) ?? 0))
          .map((r) => r.gateway_id),
      );
      return live.size === 2 ? true : `live on ${JSON.stringify([...live])}`;
    });
  }
  for (const name of NAMES) {
    await until(`an operation to succeed through ${name}`, set, async () => {
      const r = await attempt(clients.get(name)!, 5);
      return r.ok ? true : r.reason;
    });
  }
  let sessionAgeSeconds = 0;
  await until(`the agent's stream to be ${minSessionSeconds} s old`, set, async () => {
    const [live] = await set.sql<{ age: number }>(
      'select extract(epoch from now() - connected_at)::float8 as age from agent_sessions where agent_id = $1 and gateway_id = $2 and ended_at is null order by connected_at desc limit 1',
      [AGENT_ID, holder],
    );
    if (!live) return `no live session of ${AGENT_ID} on ${holder}`;
    sessionAgeSeconds = live.age;
    return live.age >= minSessionSeconds ? true : `${live.age.toFixed(1)} s old`;
  });
  const [row] = await set.sql<{ gateway_id: string }>('select gateway_id from accounts where name = $1', [ACCOUNT]);
  if (row?.gateway_id !== holder) throw new Error(`the lease moved from ${holder} to ${row?.gateway_id} while the system was idle`);
  return { holder, sessionAgeSeconds };
}

/** Runs the scenario: one set of processes, `params.runs` kill/recover cycles. */
export async function runFailover(params: FailoverParams): Promise<FailoverResult> {
  if (params.minSessionSeconds <= params.stableSeconds) throw new Error('failover: minSessionSeconds must be greater than stableSeconds');
  const connections = params.connections ?? 1;
  const AGENT_CONFIG = agentConfig(params.stableSeconds, connections);
  /** When each replica's current process started (wall clock), to tell its sessions from a killed process's. */
  const startedAt = new Map(NAMES.map((n) => [n, Date.now() - 1000]));
  const set = await startReplicaSet({
    postgresUrl: params.postgresUrl,
    gateways: NAMES,
    gatewayConfig: GATEWAY_CONFIG,
    logLevel: 'info',
    prefix: 'outpost-bench-failover-',
  });
  let balancer: Balancer | undefined;
  let keepLogs = true;
  try {
    balancer = await startBalancer(NAMES.map((n) => set.replica(n).grpcPort));
    set.startAgent(AGENT_ID, ACCOUNT, balancer.address, AGENT_CONFIG);
    const clients = new Map(NAMES.map((n) => [n, createOperationClient({ gatewayUrl: set.replica(n).httpUrl, binary: true })]));

    const runs: FailoverRun[] = [];
    for (let run = 1; run <= params.runs; run++) {
      const { holder, sessionAgeSeconds } = await waitSteady(set, clients, params.minSessionSeconds, connections, startedAt);
      const survivors = NAMES.filter((n) => n !== holder);
      const attempts: FailoverAttempt[] = [];
      const killedWall = Date.now();
      const killedAt = performance.now();
      await set.killGateway(holder);
      let seconds: number | null = null;
      for (let i = run; seconds === null && performance.now() - killedAt < params.giveUpSeconds * 1000; i++) {
        const replica = survivors[i % survivors.length]!;
        const t0 = performance.now();
        const r = await attempt(clients.get(replica)!, params.attemptTimeoutSeconds);
        const t1 = performance.now();
        attempts.push({ replica, atSeconds: (t0 - killedAt) / 1000, ms: t1 - t0, outcome: r.ok ? 'SUCCEEDED' : r.reason });
        if (r.ok) seconds = (t1 - killedAt) / 1000;
        else if (t1 - t0 < 100) await sleep(100); // an immediate refusal: do not spin
      }
      let leaseMovedSeconds: number | null = null;
      while (leaseMovedSeconds === null && performance.now() - killedAt < params.giveUpSeconds * 1000) {
        const [now] = await set.sql<{ gateway_id: string }>('select gateway_id from accounts where name = $1', [ACCOUNT]);
        if (now?.gateway_id && now.gateway_id !== holder) leaseMovedSeconds = (performance.now() - killedAt) / 1000;
        else await sleep(50);
      }
      const [row] = await set.sql<{ gateway_id: string }>('select gateway_id from accounts where name = $1', [ACCOUNT]);
      const [session] = await set.sql<{ connected_at: Date }>(
        'select connected_at from agent_sessions where agent_id = $1 and gateway_id <> $2 and connected_at >= $3 order by connected_at limit 1',
        [AGENT_ID, holder, new Date(killedWall - 1000)],
      );
      const result: FailoverRun = {
        run,
        killed: holder,
        seconds,
        sessionAgeSeconds,
        newHolder: row?.gateway_id ?? '',
        reconnectSeconds: session ? (session.connected_at.getTime() - killedWall) / 1000 : null,
        leaseMovedSeconds,
        attempts,
      };
      if (seconds === null) result.error = `no operation succeeded within ${params.giveUpSeconds} s of the kill`;
      runs.push(result);
      console.log(
        `failover${connections === 2 ? ' (two connections)' : ''} run ${run}: killed ${holder} (stream ${sessionAgeSeconds.toFixed(1)} s old) → ${seconds === null ? 'NOT RECOVERED' : `${seconds.toFixed(2)} s`} ` +
          `(${attempts.length} attempt(s), new holder ${result.newHolder}, lease moved after ${leaseMovedSeconds?.toFixed(2) ?? '?'} s, ` +
          `agent reconnected after ${result.reconnectSeconds?.toFixed(2) ?? '?'} s)`,
      );
      for (const a of attempts.filter((x) => x.outcome !== 'SUCCEEDED')) {
        console.log(`  attempt at +${a.atSeconds.toFixed(2)} s to ${a.replica}: ${a.outcome} after ${a.ms.toFixed(0)} ms`);
      }
      startedAt.set(holder, Date.now() - 1000);
      await set.startGateway(holder); // same config, same ports
    }
    const recovered = runs.filter((r) => r.seconds !== null);
    const failedRuns = runs.length - recovered.length;
    keepLogs = failedRuns > 0;
    return {
      runs,
      seconds: summarize(recovered.map((r) => r.seconds!)),
      reconnect: summarize(runs.flatMap((r) => (r.reconnectSeconds === null ? [] : [r.reconnectSeconds]))),
      leaseMoved: summarize(runs.flatMap((r) => (r.leaseMovedSeconds === null ? [] : [r.leaseMovedSeconds]))),
      failedRuns,
      connections,
      config: {
        gateway: GATEWAY_CONFIG,
        agent: AGENT_CONFIG,
        attemptTimeoutSeconds: params.attemptTimeoutSeconds,
        minSessionSeconds: params.minSessionSeconds,
      },
      ...(keepLogs ? { logsDir: set.dir } : {}),
    };
  } finally {
    await balancer?.close();
    await set.close(keepLogs);
  }
}

/** Table rows of the failover runs (one value per kill). */
export function failoverRows(f: FailoverResult): Row[] {
  const s = `failover (kill -9 of the holder, ${f.runs.length} runs${f.connections === 2 ? ', two connections per agent' : ''})`;
  const p99 = f.seconds.n < 100 ? `p99 (= max of ${f.seconds.n})` : 'p99';
  return [
    figureRow(s, 'seconds, kill → first successful operation, median', [f.seconds.p50], { digits: 2 }),
    figureRow(
      s,
      `seconds, kill → first successful operation, ${p99}; ${f.failedRuns} not recovered`,
      [f.failedRuns === 0 ? f.seconds.p99 : NaN],
      {
        digits: 2,
        // Two connections: the standby stream is already on a survivor, so no reconnect is waited for.
        target: f.connections === 2 ? 'p99 ≤ 0.5 s' : 'p99 ≤ 1 s',
        meets: (m) => m <= (f.connections === 2 ? 0.5 : 1),
      },
    ),
    // With two connections the agent's other stream is already on a survivor: no new session to time.
    ...(f.connections === 2
      ? []
      : [figureRow(s, "seconds, kill → the agent's new session on a survivor, median", [f.reconnect.p50], { digits: 2 })]),
    // Results written before the lease was timed have no `leaseMoved`.
    ...(f.leaseMoved ? [figureRow(s, "seconds, kill → the account's lease on a survivor, median", [f.leaseMoved.p50], { digits: 2 })] : []),
  ];
}
