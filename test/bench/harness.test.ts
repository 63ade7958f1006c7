/**
 * The benchmark harness works: `npm run bench -- --quick --only …` runs a cross-section of the scenarios end to end
 * (in-process sandbox and a raw COPY baseline, gateway and agent processes, bare relays and kubectl, CLI processes,
 * simulated agents filling a cache for the Spinnaker infrastructure reads)
 * and writes a results file and a report with a row for each figure; bad flags are refused; the tables of
 * docs/benchmarks.md and the README's summary are what their committed results files render to. No figure is asserted
 * (timings on a shared machine are not test material), only that each was measured. Every scenario is not run here:
 * benchmarks are not part of the suite's time budget (a quick run of all of them takes minutes); `npm run bench --
 * --quick` runs them all.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderBenchmarkSection, renderSummary, HEADLINES } from '../../bench/readme-table.js';
import { resultRows, type BenchResults } from '../../bench/report.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const POSTGRES = process.env.OUTPOST_TEST_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Runs `bench/run.ts ARGS…` in a process group of its own; after `timeoutMs` (a bound on a hang) the whole group is
 * killed: the runner's gateway, agent and sandbox children too, which would otherwise outlive it and load the machine.
 */
function bench(args: string[], timeoutMs: number): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OUTPOST_BENCH_POSTGRES: POSTGRES },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
    child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // the group is gone
      }
    };
    const timer = setTimeout(() => {
      stderr += `\nbench: killed after ${timeoutMs} ms\n`;
      killGroup();
    }, timeoutMs);
    child.once('close', (status) => {
      clearTimeout(timer);
      killGroup(); // any child the runner left behind
      resolve({ status, stdout, stderr });
    });
  });
}

describe('benchmark harness', () => {
  // Generous bounds: the run takes about a minute on an idle machine and far longer on a loaded one.
  test('--quick --only runs its scenarios and writes the results file and its report', { timeout: 1_000_000 }, async () => {
    const out = mkdtempSync(join(tmpdir(), 'outpost-bench-test-'));
    try {
      const run = await bench(['--quick', '--only', 'initial-sync,churn,kube-proxy,cli,spinnaker-infra', '--out', out], 960_000);
      assert.equal(run.status, 0, `bench --quick failed:\n${run.stdout.slice(-4000)}\n${run.stderr.slice(-4000)}`);
      const files = readdirSync(out);
      const json = files.find((f) => f.endsWith('.json'));
      assert.ok(json && files.includes(json.replace(/\.json$/, '.md')), `results files: ${files.join(', ')}`);
      const results = JSON.parse(readFileSync(join(out, json), 'utf8')) as BenchResults;
      assert.equal(results.quick, true);
      assert.ok(results.machine.cores > 0 && results.machine.node.startsWith('v'));
      for (const key of ['initialSync', 'churn', 'kubeProxy', 'cliRoundTrip', 'spinnakerInfra'] as const) {
        assert.ok(results[key] && results[key]!.runs.length === 1, `${key} ran once`);
      }
      for (const key of [
        'operations',
        'forwarding',
        'failover',
        'connectionScale',
        'replicaScale',
        'agentFootprint',
        'transports',
      ] as const) {
        assert.equal(results[key], undefined, `${key} not selected, not run`);
      }
      // The kube-proxy scenario measured both sides of each comparison, the watch missing no change.
      const kube = results.kubeProxy!.runs[0]!;
      assert.ok(kube.get.direct.n > 0 && kube.get.gateway.n > 0, 'GETs on both sides');
      assert.deepEqual(kube.watch.missed, { direct: 0, relay: 0, gateway: 0 }, 'every watch change arrived on every side');
      // The infrastructure reads were timed on both sides, against the answer the fixture should give (checked by the scenario).
      const infra = results.spinnakerInfra!.runs[0]!;
      assert.equal(infra.reads.serverGroups, results.spinnakerInfra!.params.fixture.serverGroups);
      assert.ok(infra.reads.sequential.route.n > 0 && infra.reads.sequential.raw.n > 0, 'serverGroups reads on both sides');
      const rows = resultRows(results);
      assert.ok(rows.length >= 20, `${rows.length} rows`);
      const unmeasured = rows.filter((r) => !/^-?\d/.test(r.value));
      assert.deepEqual(unmeasured, [], 'every figure was measured');
      const report = readFileSync(join(out, json.replace(/\.json$/, '.md')), 'utf8');
      for (const scenario of new Set(rows.map((r) => r.scenario))) assert.ok(report.includes(`| ${scenario} |`), scenario);
      // The same file rendered with itself as "before": every row gets its own value in the before column.
      const section = renderBenchmarkSection({ file: 'now.json', results }, { file: 'then.json', results });
      const table = section.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| scenario') && !l.startsWith('| ---'));
      assert.equal(table.length, rows.length);
      for (const [i, line] of table.entries()) assert.equal(line.split(' | ')[2], line.split(' | ')[4], `row ${i}: ${line}`);
      // A run of every scenario (the committed one the README's summary names) has each row the summary picks.
      const committed = /<!-- bench:summary (\S+) -->/.exec(readFileSync(join(ROOT, 'README.md'), 'utf8'))![1]!;
      const full = JSON.parse(readFileSync(join(ROOT, committed), 'utf8')) as BenchResults;
      const summary = renderSummary({ file: committed, results: full }).split('\n');
      assert.equal(
        summary.filter((l) => l.startsWith('| ') && !l.startsWith('| scenario') && !l.startsWith('| ---')).length,
        HEADLINES.length,
      );
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });

  test('bad flags exit 2 with the usage', async () => {
    for (const args of [['--only', 'initial-sync,nope'], ['--runs', '0'], ['--bogus']]) {
      const run = await bench(args, 60_000);
      assert.equal(run.status, 2, `${args.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^bench: .+\nusage: npm run bench/);
    }
  });

  test("docs/benchmarks.md's tables and the README's summary are what their committed results files render to", () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/readme-table.ts', '--check'], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
  });
});
