/**
 * Chaos rounds over a whole system (chaos-system.ts): each round starts the workload, injects one to three faults
 * chosen by the seeded generator at random moments, keeps the load on for a while, heals everything, stops the load,
 * and runs every check (checks.ts). The report has one row per round and the totals; any failed check fails the run.
 */
import { createRng, type Rng } from '../../testkit/rng.js';
import { checkAgentPaths, checkCache, checkLedger, checkProcesses, checkSecretMarker, listAgents, settleOperations } from './checks.js';
import { startChaosSystem, type ChaosSystem } from './chaos-system.js';
import { FAULTS, type Heal } from './faults.js';
import { createWorkload, type LedgerOperation } from './workload.js';

/** Options of {@link runChaos}. */
export interface ChaosOptions {
  seed: number;
  rounds: number;
  /** How long the faults of a round last (random in this range, ms). */
  faultMs?: [number, number];
  /** Largest RSS a gateway or agent may reach. */
  maxRssMiB?: number;
  /**
   * Fault names injected first in rounds 1, 2, … (one per round, before the seeded ones), so a short run is sure to
   * exercise them; unknown names are an error.
   */
  required?: readonly string[];
  /** Called with each finished round (progress). */
  onRound?: (round: RoundResult) => void;
}

/** One round's outcome. */
interface RoundResult {
  round: number;
  faults: string[];
  /** The transport of the stream caching the account when the faults began ('unknown' when no gateway said). */
  cachingTransport: string;
  operations: { submitted: number; succeeded: number; failed: number; timedOut: number; neverStored: number };
  changes: number;
  /** Seconds the cache still took to equal the cluster once the operations had settled (which follows the heal). */
  convergedSeconds: number;
  maxRssMiB: number;
  problems: string[];
}

/** The whole run. */
export interface ChaosReport {
  seed: number;
  rounds: RoundResult[];
  faultsInjected: Record<string, number>;
  /** Rounds per caching transport (`RoundResult.cachingTransport`). */
  cachingTransports: Record<string, number>;
  failures: number;
  seconds: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `rounds` rounds with a fresh system; always stops it. */
export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  for (const name of options.required ?? [])
    if (!FAULTS.some((f) => f.name === name)) throw new Error(`unknown required fault ${JSON.stringify(name)}`);
  const rng = createRng(options.seed);
  const marker = `OUTPOST-SECRET-MARKER-${options.seed.toString(36)}`;
  const started = Date.now();
  const system = await startChaosSystem();
  const rounds: RoundResult[] = [];
  const faultsInjected: Record<string, number> = {};
  const cachingTransports: Record<string, number> = {};
  try {
    const workload = createWorkload(
      {
        sandbox: system.cluster.sandbox,
        namespace: system.namespace,
        account: system.account,
        liveGateways: () =>
          system.cluster.gatewayNames
            .filter((g) => system.cluster.isRunning(g) && !system.cluster.isStopped(g))
            .map((g) => ({ name: g, httpUrl: system.cluster.gateway(g).httpUrl })),
      },
      rng.fork('workload'),
      marker,
    );
    const faultRng = rng.fork('faults');
    for (let round = 1; round <= options.rounds; round++) {
      const result = await runRound(system, workload, faultRng, round, options);
      for (const f of result.faults) faultsInjected[f] = (faultsInjected[f] ?? 0) + 1;
      cachingTransports[result.cachingTransport] = (cachingTransports[result.cachingTransport] ?? 0) + 1;
      rounds.push(result);
      options.onRound?.(result);
    }
    // The marker check reads every byte captured and every row and log line: once, at the end, over everything.
    const leaks = await checkSecretMarker(system, marker);
    // And whether the agents really took their forward proxies and transports (else those faults tested nothing).
    const paths = await checkAgentPaths(system, 30_000);
    rounds[rounds.length - 1]?.problems.push(...leaks, ...paths);
  } finally {
    await system.close();
  }
  return {
    seed: options.seed,
    rounds,
    faultsInjected,
    cachingTransports,
    failures: rounds.reduce((n, r) => n + r.problems.length, 0),
    seconds: (Date.now() - started) / 1000,
  };
}

async function runRound(
  system: ChaosSystem,
  workload: ReturnType<typeof createWorkload>,
  rng: Rng,
  round: number,
  options: ChaosOptions,
): Promise<RoundResult> {
  const [minMs, maxMs] = options.faultMs ?? [1500, 4000];
  const firstOp = workload.operations.length;
  const changesBefore = workload.changes;
  workload.start();
  await sleep(rng.int(300, 1000));
  const cachingTransport = await cachingTransportOf(system);
  const required = FAULTS.find((f) => f.name === options.required?.[round - 1]);
  const count = rng.int(1, 3);
  const faults: string[] = [];
  const heals: { heal: Heal; restarts: boolean }[] = [];
  const problems: string[] = [];
  for (let i = 0; i < count; i++) {
    // Picked either way, so a required fault replaces one choice and leaves the rest of the seeded sequence as it was.
    const picked = rng.pick(FAULTS);
    const fault = i === 0 && required ? required : picked;
    try {
      heals.push({ heal: await fault.inject(system, rng), restarts: fault.restarts === true });
      faults.push(fault.name);
    } catch (err) {
      problems.push(`injecting ${fault.name} failed: ${(err as Error).message}`);
    }
    await sleep(rng.int(100, 800));
  }
  await sleep(rng.int(minMs, maxMs));
  // Network and server faults first: a restarted process must find a working path to the gateways.
  for (const { heal } of [...heals.filter((h) => !h.restarts), ...heals.filter((h) => h.restarts)]) {
    try {
      await heal();
    } catch (err) {
      problems.push(`healing failed: ${(err as Error).message}`);
    }
  }
  // Load goes on for a moment on the healed system, then stops so the checks see a still cluster.
  await sleep(rng.int(500, 1500));
  await workload.stop();
  const ops: LedgerOperation[] = workload.operations.slice(firstOp);
  problems.push(...(await settleOperations(system, workload.operations, 40_000)));
  problems.push(...checkLedger(system, workload.operations));
  const cache = await checkCache(system, 45_000);
  problems.push(...cache.problems);
  const processes = checkProcesses(system, options.maxRssMiB ?? 1024);
  problems.push(...processes.problems);
  const count_ = (state: string) => ops.filter((o) => o.state === state).length;
  return {
    round,
    faults,
    cachingTransport,
    operations: {
      submitted: ops.length,
      succeeded: count_('SUCCEEDED'),
      failed: count_('FAILED'),
      timedOut: count_('TIMED_OUT'),
      neverStored: count_('NEVER_STORED'),
    },
    changes: workload.changes - changesBefore,
    convergedSeconds: cache.seconds,
    maxRssMiB: Math.max(0, ...Object.values(processes.rssMiB)),
    problems,
  };
}

/** The transport of the live stream caching the account ('none' when none does, 'unknown' when no gateway said). */
async function cachingTransportOf(system: ChaosSystem): Promise<string> {
  try {
    return (await listAgents(system)).find((a) => a.caching.includes(system.account))?.transport ?? 'none';
  } catch {
    return 'unknown';
  }
}

/** The report as a markdown table plus totals. */
export function renderChaosReport(report: ChaosReport): string {
  const lines = [
    `Seed ${report.seed}; ${report.rounds.length} rounds in ${report.seconds.toFixed(0)} s; ${report.failures} failures.`,
    '',
    '| round | caching over | faults | operations (ok / failed / timed out / never stored) | changes | cache equal after ops settled | max RSS | result |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...report.rounds.map((r) => {
      const o = r.operations;
      const result = r.problems.length === 0 ? 'ok' : `FAILED: ${r.problems.join('; ').replace(/\|/g, '/')}`;
      return `| ${r.round} | ${r.cachingTransport} | ${r.faults.join(', ') || '—'} | ${o.submitted} (${o.succeeded} / ${o.failed} / ${o.timedOut} / ${o.neverStored}) | ${r.changes} | ${r.convergedSeconds.toFixed(1)} s | ${r.maxRssMiB} MiB | ${result} |`;
    }),
    '',
    '| fault | injected |',
    '| --- | --- |',
    ...FAULTS.map((f) => `| ${f.name}: ${f.description} | ${report.faultsInjected[f.name] ?? 0} |`),
    '',
    `Caching transport at the faults: ${Object.entries(report.cachingTransports)
      .map(([t, n]) => `${t} ${n}`)
      .join(', ')} rounds.`,
    '',
    `Totals: ${report.rounds.length} rounds, ${Object.values(report.faultsInjected).reduce((a, b) => a + b, 0)} faults injected, ` +
      `${report.rounds.reduce((n, r) => n + r.operations.submitted, 0)} operations, ${report.rounds.reduce((n, r) => n + r.changes, 0)} cluster changes, ` +
      `${report.failures} failures.`,
  ];
  return lines.join('\n');
}
