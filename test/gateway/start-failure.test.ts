/**
 * A gateway start that fails half-way closes what it had opened (one stack of closers, src/shared/closers.ts): the
 * gRPC port is taken after the database was migrated and the HTTP port bound, or the database cannot be opened after
 * the credential files were read. Each runs in a child process, where only the gateway's handles exist: they are all
 * released, and the child exits by itself (it never calls process.exit) once it closed its own server.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./fixtures/start-failure-child.ts', import.meta.url));

/** Runs the child for `scenario`; resolves with its exit status and output, or rejects if it does not exit in time. */
function runChild(scenario: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, scenario], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the child (${scenario}) did not exit within 90 s: something kept it alive\n${stdout}\n${stderr}`));
    }, 90_000);
    child.on('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

describe('gateway start', () => {
  test('a start whose gRPC port is taken closes the HTTP server, the database and the rest again', async () => {
    const run = await runChild('grpc-port');
    assert.equal(run.status, 0, run.stderr);
    const { error, before, after } = JSON.parse(run.stdout) as { error: string; before: string; after: string };
    assert.match(error, /EADDRINUSE|address already in use/);
    assert.equal(after, before, 'no handle of the gateway is left behind');
  });

  test('a start whose database cannot be opened closes the credential sources it had opened', async () => {
    const run = await runChild('database');
    assert.equal(run.status, 0, run.stderr);
    const { error, before, after } = JSON.parse(run.stdout) as { error: string; before: string; after: string };
    assert.match(error, /cannot open embedded database/);
    assert.equal(after, before, 'no handle of the gateway is left behind');
  });
});
