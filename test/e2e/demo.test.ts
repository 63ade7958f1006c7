/**
 * `outpost demo` as a user runs it: one command, then the two printed commands work, then Ctrl-C stops it cleanly.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

test('outpost demo starts everything, its printed commands work, and SIGINT stops it with exit 0', { timeout: 90_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-demo-'));
  const child = spawn(
    process.execPath,
    [bin, 'demo', '--dir', dir, '--sandbox-port', '0', '--http-port', '0', '--grpc-port', '0', '--agent-port', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.stderr.on('data', (b) => (out += b));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 60_000;
    while (!out.includes('Press Ctrl-C to stop.')) {
      assert.equal(child.exitCode, null, `demo exited early:\n${out}`);
      assert.ok(Date.now() < deadline, `demo did not start:\n${out}`);
      await sleep(100);
    }
    const curlLine = out.split('\n').find((l) => l.trim().startsWith('curl '))!;
    const kubectlLine = out.split('\n').find((l) => l.trim().startsWith('kubectl '))!;
    assert.ok(curlLine && kubectlLine, out);

    // The printed curl command, run by a shell exactly as printed, lists the demo Deployment once the agent synced.
    let listed = '';
    while (!listed.includes('"name":"web"')) {
      assert.ok(Date.now() < deadline, `web never appeared in ListObjects: ${listed}`);
      listed = (await run('sh', ['-c', curlLine.trim()], { timeout: 10_000 })).stdout;
      await sleep(200);
    }
    // The printed kubectl command scales the Deployment in the sandbox.
    const scaled = await run('sh', ['-c', kubectlLine.trim()], { timeout: 20_000 });
    assert.match(scaled.stdout, /scaled/);
  } finally {
    child.kill('SIGINT');
    const code = await exited;
    rmSync(dir, { recursive: true, force: true });
    assert.equal(code, 0, `demo exit code after SIGINT:\n${out}`);
  }
});
