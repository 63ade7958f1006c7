/**
 * Scenario — how long one `outpost get deployments -n demo` takes from the shell, process start to exit, against a
 * running gateway and agent (child processes, compiled build) over a TLS sandbox in this process. Side by side in one
 * run, alternated ABBA: the compiled build (what `bin/outpost.js` runs once `npm ci` has built it), the TypeScript
 * sources through tsx (what it ran before), `kubectl get deployments -n demo` straight to the sandbox (what an operator
 * compares it with), and `node -e 0` (the floor: starting Node alone). Target: compiled ≤ 300 ms at p50.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase } from '../../testkit/databases.js';
import { findKubectl, timeProcess } from '../kube-clients.js';
import { figureRow, type Row } from '../rows.js';
import { summarize } from '../machine.js';
import { startGatewayAndAgent, type Child } from '../processes.js';
import { interleave } from './kube-proxy.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';

/** Parameters of one run. */
export interface CliRoundTripParams {
  postgresUrl: string;
  /** Measured processes per side, and unmeasured ones first (disk cache, kubectl's discovery cache). */
  runs: number;
  warmup: number;
}

type Summary = ReturnType<typeof summarize>;

/** Wall-clock milliseconds per process, per side; kubectl absent when no binary was found. */
export interface CliRoundTripResult {
  command: string;
  node: Summary;
  compiled: Summary;
  sources: Summary;
  kubectl?: Summary;
}

const ENTRY = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));
type CliSide = 'node' | 'compiled' | 'sources' | 'kubectl';

/** Runs the scenario once with fresh processes and database. */
export async function runCliRoundTrip(params: CliRoundTripParams): Promise<CliRoundTripResult> {
  process.env.OUTPOST_TEST_POSTGRES = params.postgresUrl;
  const database = await createTestDatabase('postgres');
  const dir = mkdtempSync(join(tmpdir(), 'outpost-bench-cli-'));
  const sandbox = await startSandbox({ seed: 'demo', tls: true, logger: createSilentLogger() });
  const children: Child[] = [];
  try {
    const kubeconfig = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfig);
    const { httpUrl } = await startGatewayAndAgent({ dir, kubeconfig, databaseUrl: database.url, children });
    const get = ['get', 'deployments', '-n', 'demo', '--account', 'bench', '--gateway', httpUrl];
    // An operation for an account no agent registered yet is NOT_FOUND: wait until the agent's account is there (a
    // loaded machine may take seconds); the first call then waits for its stream if need be.
    await waitForAccounts(httpUrl, ['bench'], { timeoutMs: 120_000 });
    await timeProcess(process.execPath, [ENTRY, ...get, '--timeout', '60s'], { OUTPOST_RUNTIME: 'dist' });
    const kubectl = findKubectl();
    const sides: CliSide[] = kubectl ? ['node', 'compiled', 'sources', 'kubectl'] : ['node', 'compiled', 'sources'];
    const s = await interleave(sides, params.warmup, params.runs, (side) => {
      if (side === 'node') return timeProcess(process.execPath, ['-e', '0']);
      if (side === 'kubectl')
        return timeProcess(kubectl!, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'kcache'), 'get', 'deployments', '-n', 'demo']);
      return timeProcess(process.execPath, [ENTRY, ...get], { OUTPOST_RUNTIME: side === 'compiled' ? 'dist' : 'tsx' });
    });
    return {
      command: 'outpost get deployments -n demo',
      node: summarize(s.node),
      compiled: summarize(s.compiled),
      sources: summarize(s.sources),
      ...(kubectl ? { kubectl: summarize(s.kubectl) } : {}),
    };
  } finally {
    for (const child of children.reverse()) await child.stop();
    await sandbox.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Table rows: each side's p50/p99 and the compiled build against its target; `judged` false for --quick runs. */
export function cliRoundTripRows(runs: CliRoundTripResult[], judged = true): Row[] {
  const [r] = runs;
  if (!r) return [];
  const s = `cli: ${r.command}, process start → exit (${r.compiled.n} per side)`;
  const each = (f: (run: CliRoundTripResult) => number) => runs.map(f);
  const ms = { digits: 0 };
  return [
    figureRow(
      s,
      'node -e 0 (starting Node alone), p50 ms',
      each((x) => x.node.p50),
      ms,
    ),
    figureRow(
      s,
      'compiled build (the default entry), p50 ms',
      each((x) => x.compiled.p50),
      {
        ...ms,
        target: 'p50 ≤ 300 ms',
        meets: (m) => m <= 300,
        judged,
      },
    ),
    figureRow(
      s,
      'compiled build (the default entry), p99 ms',
      each((x) => x.compiled.p99),
      ms,
    ),
    figureRow(
      s,
      'TypeScript sources through tsx, p50 ms',
      each((x) => x.sources.p50),
      ms,
    ),
    ...(runs.every((x) => x.kubectl)
      ? [
          figureRow(
            s,
            'kubectl get deployments straight to the cluster, p50 ms',
            each((x) => x.kubectl!.p50),
            ms,
          ),
        ]
      : []),
  ];
}
