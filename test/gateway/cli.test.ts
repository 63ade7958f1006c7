/**
 * `outpost gateway` as a child process: prints its URLs, serves both ports (REST over HTTP/1.1 and over h2c), exits 0
 * on SIGTERM within a few seconds, and exits non-zero naming the key on an invalid configuration.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http2 from 'node:http2';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';

const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

function h2cGet(baseUrl: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on('error', reject);
    const req = session.request({ ':path': path });
    let body = '';
    let status = 0;
    req.on('response', (h) => (status = Number(h[':status'])));
    req.setEncoding('utf8');
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      session.close();
      resolve({ status, body });
    });
    req.on('error', reject);
  });
}

describe('outpost gateway (process)', () => {
  test('serves both ports and exits 0 on SIGTERM', { timeout: 90_000 }, async () => {
    const child = spawn(
      process.execPath,
      [
        bin,
        'gateway',
        '--http-port',
        '0',
        '--grpc-port',
        '0',
        '--host',
        '127.0.0.1',
        '--database',
        'memory://',
        '--id',
        'cli-gw',
        '--log-level',
        'warn',
        '--insecure',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, OUTPOST_GATEWAY_DATABASE: '' } },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 80_000;
      while (!/gRPC.*http:\/\/\S+/.test(out)) {
        if (Date.now() > deadline || child.exitCode !== null) assert.fail(`gateway did not start: ${out}${err}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const httpUrl = /HTTP[^:]*:\s+(http:\/\/\S+)/.exec(out)![1]!;
      const grpcUrl = /gRPC[^:]*:\s+(http:\/\/\S+)/.exec(out)![1]!;
      const health = await fetch(`${httpUrl}/health`);
      assert.deepEqual(await health.json(), { status: 'ok', id: 'cli-gw', database: 'ok' });
      const overH2 = await h2cGet(grpcUrl, '/armory/clouddrivers/cli-gw');
      assert.equal(overH2.status, 200);
      assert.equal(JSON.parse(overH2.body).id, 'cli-gw');
      child.kill('SIGTERM');
      // A hang bound only: a clean exit can take seconds on a loaded machine.
      const timer = new Promise<'hang'>((resolve) => setTimeout(() => resolve('hang'), 30_000).unref());
      assert.equal(await Promise.race([exited, timer]), 0, err);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });

  test('an invalid configuration exits non-zero naming the key', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, [bin, 'gateway', '--database', 'memory://'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OUTPOST_GATEWAY_AGENTS_MAX_UNACKED: 'lots' },
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    // 'close', not 'exit': stderr can still be on its way through the pipe when the process has exited.
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    assert.notEqual(code, 0);
    assert.match(err, /agents\.maxUnacked/);
  });
});
