/**
 * A non-Node gRPC client reads the status of every call the gateway ends before a message (grpc-status-cases.ts):
 * grpcio, the C-core client that Python, C++, Ruby and PHP share, run as Debian's python3-grpcio at /usr/bin/python3
 * (grpc-status-probe.py). A bidi call keeps its request side open: the status must reach the client while it has
 * not half-closed — C-core reads no status from a HEADERS frame without END_STREAM followed by an empty DATA frame,
 * and would only give up, with UNKNOWN "Stream removed", once it half-closed on its own.
 *
 * Nothing is skipped: without python3-grpcio the test fails and says how to install it (.ci/run does).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { Code } from '@connectrpc/connect';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { authorizationOf, STATUS_CASES, statusCaseConfig, type StatusCase } from './grpc-status-cases.js';

/** Debian's interpreter, which python3-grpcio installs into (the `python3` on PATH may be another one). */
const PYTHON = '/usr/bin/python3';
const PROBE = fileURLToPath(new URL('./grpc-status-probe.py', import.meta.url));
/** Seconds the probe keeps a bidi request side open waiting for the status: a bound on a hang, not a timing check. */
const WAIT_SECONDS = 10;

/** What the probe prints. */
interface ProbeResult {
  kind: string;
  code: string;
  details: string;
  halfClosed: boolean;
  responses: number;
}

function run(args: string[], timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(PYTHON, args, { timeout: timeoutMs, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : null) : 0;
      resolve({ code, stdout, stderr: stderr || (err && !stdout ? String(err.message) : '') });
    });
  });
}

/** grpcio's name of a status code (`grpc.StatusCode.X.name`). */
function grpcName(code: Code): string {
  if (code === Code.Canceled) return 'CANCELLED';
  return Code[code].replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase();
}

async function probe(target: string, c: StatusCase): Promise<ProbeResult> {
  const args = [PROBE, '--target', target, '--method', c.path, '--kind', c.kind, '--wait', String(WAIT_SECONDS)];
  for (const m of c.messages) args.push('--message', Buffer.from(m).toString('hex'));
  const authorization = authorizationOf(c);
  if (authorization) args.push('--metadata', `authorization=${authorization}`);
  const out = await run(args, (WAIT_SECONDS * 2 + 30) * 1000);
  assert.equal(out.code, 0, `${c.name}: the probe exited ${out.code}: ${out.stderr}${out.stdout}`);
  return JSON.parse(out.stdout) as ProbeResult;
}

describe('grpcio (C-core) reads every early gRPC error without half-closing', () => {
  let t: TestGateway;
  let target: string;
  before(async () => {
    const check = await run(['-c', 'import grpc; print(grpc.__version__)'], 60_000);
    assert.equal(
      check.code,
      0,
      `${PYTHON} cannot import grpc: install Debian's python3-grpcio (apt-get install -y --no-install-recommends python3-grpcio; .ci/run does it). ${check.stderr}`,
    );
    t = await startTestGateway('pglite', statusCaseConfig);
    target = new URL(t.gateway.grpcUrl).host;
  });
  after(() => t?.close());

  test('each call ends with its status and message, bidi calls before the client half-closed', async () => {
    // All at once: a broken gateway costs one WAIT_SECONDS, not one per case.
    const results = await Promise.all(STATUS_CASES.map(async (c) => ({ c, r: await probe(target, c) })));
    const problems: string[] = [];
    for (const { c, r } of results) {
      if (r.code !== grpcName(c.code)) problems.push(`${c.name}: ${r.code} "${r.details}", expected ${grpcName(c.code)}`);
      else if (!c.message.test(r.details ?? '')) problems.push(`${c.name}: details "${r.details}" do not match ${c.message}`);
      else if (c.kind === 'bidi' && r.halfClosed) problems.push(`${c.name}: the status arrived only after the client half-closed`);
      else if (r.responses !== 0) problems.push(`${c.name}: ${r.responses} response message(s)`);
    }
    assert.deepEqual(problems, []);
  });
});
