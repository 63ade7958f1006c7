#!/usr/bin/env node
// Runs the test suite with node's test runner (TypeScript through tsx) and fails when no test ran.
// Usage: npm test [-- PATH...]  (files or directories; default: test/, where every test lives — src/ holds none)
//
// The files are split into OUTPOST_TEST_CONCURRENCY shards (default 3), each run in one process that imports its
// files one after another (scripts/test-shard.mjs): loading tsx and the project's modules once per shard instead of
// once per file saves about two CPU-seconds per file, a third of the suite on two cores. Shards are balanced by the
// expected durations below (longest first). OUTPOST_TEST_ISOLATION=process runs every file in its own process
// instead (node --test), which is slower but isolates a misbehaving file.
// Node 20's runner silently runs nothing for a quoted glob, so the files are listed here explicitly.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Seconds each slow file took in a full run (PGlite and Postgres); every other file counts as DEFAULT_SECONDS. */
const EXPECTED_SECONDS = {
  'test/bench/harness.test.ts': 70,
  'test/e2e/operations.test.ts': 70,
  'test/chaos/chaos.test.ts': 33,
  'test/e2e/demo.test.ts': 37,
  'test/e2e/audit-view.test.ts': 9,
  'test/gateway/object-health-api.test.ts': 8,
  'test/e2e/dashboard-health.test.ts': 25,
  'test/e2e/dashboard-graph.test.ts': 35,
  'test/e2e/dashboard-layout.test.ts': 30,
  'test/e2e/dashboard-charts.test.ts': 55,
  'test/gateway/metrics-service.test.ts': 10,
  'test/gateway/history-writer.test.ts': 5,
  'test/e2e/dashboard-timeline.test.ts': 25,
  'test/e2e/dashboard-object-ops.test.ts': 30,
  'test/e2e/dashboard-tiles.test.ts': 90,
  'test/e2e/kubectl-gateway-limits.test.ts': 15,
  'test/e2e/kubectl-through-gateway.test.ts': 22,
  'test/e2e/oidc-cli.test.ts': 27,
  'test/e2e/oidc-cli-loopback.test.ts': 20,
  'test/cli/login-refusals.test.ts': 8,
  'test/e2e/dashboard-sign-in.test.ts': 21,
  'test/e2e/dashboard-sign-in-logs.test.ts': 13,
  'test/gateway/dashboard-sessions.test.ts': 28,
  'test/gateway/oidc-bearer.test.ts': 7,
  'test/gateway/dashboard-sign-in.test.ts': 5,
  'test/e2e/kubectl-forwarded.test.ts': 12,
  'test/cli/kubeconfig-kubectl.test.ts': 7,
  'test/sandbox/kubectl-exec.test.ts': 8,
  'test/sandbox/kubectl-port-forward.test.ts': 5,
  'test/sandbox/deployment-rollout.test.ts': 14,
  'test/sandbox/deployment-stall.test.ts': 11,
  'test/sandbox/cli-pace.test.ts': 8,
  'test/agent/kube-proxy.test.ts': 5,
  'test/e2e/replicas-failover.test.ts': 31,
  'test/e2e/caching.test.ts': 25,
  'test/e2e/agent-through-nginx.test.ts': 14,
  'test/e2e/websocket-transport.test.ts': 13,
  'test/e2e/agent-through-forward-proxy.test.ts': 6,
  'test/e2e/two-connections.test.ts': 6,
  'test/e2e/two-connections-one-replica.test.ts': 5,
  'test/gateway/grpc-through-http1-proxies.test.ts': 6,
  'test/hostile/hostile-input.test.ts': 15,
  'test/gateway/account-cleanup.test.ts': 15,
  'test/gateway/object-filter-check.test.ts': 12,
  'test/cli/object-commands.test.ts': 25,
  'test/cli/read-commands.test.ts': 15,
  'test/gateway/agent-stream-hostile.test.ts': 15,
  'test/agent/connection.test.ts': 12,
  'test/agent/token-expiry.test.ts': 11,
  'test/agent/stream-max-age.test.ts': 11,
  'test/gateway/replicas-database.test.ts': 10,
  'test/spinnaker/orca-deploy.test.ts': 15,
  'test/spinnaker/orca-operations.test.ts': 13,
  'test/spinnaker/orca-jobs.test.ts': 10,
  'test/spinnaker/pipeline-doc.test.ts': 7,
  'test/gateway/start-failure.test.ts': 28,
  'test/conformance/lifetime.test.ts': 11,
  'test/conformance/agents.test.ts': 8,
  'test/conformance/operations.test.ts': 8,
  'test/conformance/resume-freshness.test.ts': 7,
  'test/conformance/connection.test.ts': 6,
  'test/conformance/data.test.ts': 6,
  'test/conformance/session.test.ts': 5,
  'test/gateway/object-events-filter.test.ts': 6,
  'test/e2e/secret-marker-scan.test.ts': 16,
  'test/e2e/kubectl-secrets.test.ts': 15,
  'test/e2e/kubectl-audit.test.ts': 13,
  'test/e2e/kubectl-forwarded-shutdown.test.ts': 12,
  'test/e2e/kubectl-forwarded-admission.test.ts': 11,
  'test/spinnaker/account-rules.test.ts': 10,
  'test/docs/production.test.ts': 30,
  'test/gateway/config-paths.test.ts': 8,
  'test/docs/spinnaker-stages.test.ts': 6,
};
const DEFAULT_SECONDS = 4;

function collect(path, out) {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new Error(`no such test path: ${path}`);
  if (st.isFile()) {
    out.push(path);
    return out;
  }
  for (const entry of readdirSync(path).sort()) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    const child = join(path, entry);
    if (statSync(child).isDirectory()) collect(child, out);
    else if (entry.endsWith('.test.ts')) out.push(child);
  }
  return out;
}

/** Longest-processing-time-first: each file, slowest first, goes to the shard with the least expected time. */
function shardsOf(files, count) {
  const shards = Array.from({ length: Math.min(count, files.length) }, () => ({ files: [], seconds: 0 }));
  const weight = (f) => EXPECTED_SECONDS[f.replaceAll('\\', '/')] ?? DEFAULT_SECONDS;
  for (const file of [...files].sort((a, b) => weight(b) - weight(a))) {
    const lightest = shards.reduce((a, b) => (b.seconds < a.seconds ? b : a));
    lightest.files.push(file);
    lightest.seconds += weight(file);
  }
  return shards.map((s) => s.files.sort());
}

/**
 * How long a child may stay alive after printing its final summary. Past it, something the tests left running (an
 * open handle, a busy loop) keeps the process from exiting: the child is killed, said so loudly, and its exit code
 * follows its own summary — every test has already reported.
 */
const EXIT_GRACE_MS = 30_000;
/**
 * When a shard is still alive this long after its summary, it is sent SIGUSR2: scripts/test-shard.mjs then prints its
 * live handles and the hottest functions of a short CPU profile to stderr, to find what keeps it running.
 */
const LINGER_REPORT_MS = 12_000;

/** The peak resident memory of a live process in MiB (Linux `VmHWM`), or undefined where it cannot be read. */
function peakRss(pid) {
  try {
    const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb === undefined ? undefined : Math.round(Number(kb) / 1024);
  } catch {
    return undefined;
  }
}

/**
 * Runs one child; resolves with its exit code and the last value of each summary line it printed. `reports`: the child
 * is a test shard that answers SIGUSR2 with a report of what keeps it alive (other children would die of it).
 */
function runChild(args, { buffer, label, reports = false }) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const summary = {};
    const chunks = [];
    let partial = '';
    let lingering;
    let askReport;
    let summaryAt;
    let peakRssMiB;
    child.stdout.on('data', (chunk) => {
      if (buffer) chunks.push(chunk);
      else process.stdout.write(chunk);
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^\u2139 (tests|pass|fail|cancelled|duration_ms) (\d+)/.exec(line);
        if (m) summary[m[1]] = Number(m[2]);
        if (m?.[1] === 'duration_ms' && summary.tests !== undefined && !lingering) {
          summaryAt = Date.now();
          peakRssMiB = peakRss(child.pid);
          if (reports) askReport = setTimeout(() => child.kill('SIGUSR2'), LINGER_REPORT_MS);
          lingering = setTimeout(() => {
            console.error(
              `run-tests: ${label} printed its summary but did not exit within ${EXIT_GRACE_MS / 1000} s: killed ` +
                '(a test left a handle open or a loop running; its results stand)',
            );
            child.kill('SIGKILL');
          }, EXIT_GRACE_MS);
        }
      }
    });
    child.on('exit', (code, signal) => {
      clearTimeout(lingering);
      clearTimeout(askReport);
      // Killed by us after its summary: SIGKILL at the grace's end, or the SIGUSR2 asking for a report when the process
      // had no listener left for it (it was already exiting: the JS 'exit' event had run and something held the exit).
      const killedAfterSummary = (signal === 'SIGKILL' || signal === 'SIGUSR2') && lingering !== undefined;
      if (signal === 'SIGUSR2' && lingering !== undefined) {
        console.error(
          `run-tests: ${label} was still exiting ${LINGER_REPORT_MS / 1000} s after its summary and died of the report ` +
            'signal (it had no listener any more: past its exit event, held by a worker or native handle); its results stand',
        );
      }
      const ownCode = (summary.fail ?? 0) + (summary.cancelled ?? 0) > 0 ? 1 : 0;
      const exitAfterMs = summaryAt === undefined ? undefined : Date.now() - summaryAt;
      resolve({ code: killedAfterSummary ? ownCode : (code ?? signal), summary, output: Buffer.concat(chunks), peakRssMiB, exitAfterMs });
    });
  });
}

const args = process.argv.slice(2);
const roots = args.length > 0 ? args : ['test'];
const files = roots.flatMap((root) => collect(root, []));
if (files.length === 0) {
  console.error('run-tests: no test files found');
  process.exit(1);
}
const concurrency = Math.max(1, Number(process.env.OUTPOST_TEST_CONCURRENCY ?? '3') || 3);
const isolated = process.env.OUTPOST_TEST_ISOLATION === 'process';
const started = Date.now();

let results;
if (isolated) {
  const test = ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${concurrency}`, ...files];
  results = [await runChild(test, { buffer: false, label: 'the test run' })];
} else {
  const shardRunner = fileURLToPath(new URL('./test-shard.mjs', import.meta.url));
  const shards = shardsOf(files, concurrency);
  console.log(`run-tests: ${files.length} files in ${shards.length} shard(s); each shard's report is printed when it ends`);
  results = await Promise.all(
    shards.map(async (shard, i) => {
      const result = await runChild(['--import', 'tsx', '--test-reporter=spec', shardRunner, ...shard], {
        buffer: true,
        label: `shard ${i + 1}`,
        reports: true,
      });
      // Its peak memory and how soon it exited after its summary: what to look at when a shard lingers or spins.
      const facts = [
        `${shard.length} files`,
        `exit ${result.code}`,
        ...(result.peakRssMiB === undefined ? [] : [`peak RSS ${result.peakRssMiB} MiB`]),
        ...(result.exitAfterMs === undefined ? [] : [`exited ${(result.exitAfterMs / 1000).toFixed(1)} s after its summary`]),
      ];
      process.stdout.write(`\n── shard ${i + 1}/${shards.length} (${facts.join(', ')}) ──\n`);
      process.stdout.write(result.output);
      if (result.summary.tests === undefined)
        console.error(`run-tests: shard ${i + 1} ended (${result.code}) without a summary: ${shard.join(' ')}`);
      return result;
    }),
  );
}

/**
 * The spec reporter's "failing tests" section of `output` (each failure with its error and stack), or '' when none:
 * repeated after all shard reports so the end of a CI log, often all a reader gets, says why a test failed.
 */
function failingSection({ output }) {
  if (!output) return '';
  const text = output.toString('utf8');
  const start = text.lastIndexOf('\u2716 failing tests:');
  if (start < 0) return '';
  // The reporter prints it after its own summary, at the end of the shard's output.
  const lines = text.slice(start).trimEnd().split('\n');
  return lines.length > 300
    ? [...lines.slice(0, 300), `… ${lines.length - 300} more lines in the shard's report above`].join('\n')
    : lines.join('\n');
}

const failures = results.map(failingSection).filter(Boolean);
if (failures.length > 0) process.stdout.write(`\n── failures, repeated from the reports above ──\n${failures.join('\n')}\n`);

const total = (name) => results.reduce((n, r) => n + (r.summary[name] ?? 0), 0);
const tests = total('tests');
const fail = total('fail') + total('cancelled');
const complete = results.every((r) => r.summary.tests !== undefined);
// The totals, in the runner's own format, last: .ci/run reads the last "ℹ tests N" line.
console.log(`\n\u2139 tests ${tests}\n\u2139 pass ${total('pass')}\n\u2139 fail ${total('fail')}\n\u2139 cancelled ${total('cancelled')}`);
console.log(`\u2139 duration_ms ${Date.now() - started}`);
if (tests === 0) {
  console.error('run-tests: the runner executed no tests');
  process.exit(1);
}
console.log(`${total('pass')} passed, ${fail} failed`);
process.exit(complete && fail === 0 && results.every((r) => r.code === 0) ? 0 : 1);
