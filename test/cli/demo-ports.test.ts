/**
 * A second `outpost demo` (a port already taken) says which port and which flag moves it, and exits 1.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

/** A port held by this process (bound to port 0, so nobody else can take it meanwhile). */
async function holdPort(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as { port: number }).port };
}

function demo(args: string[], dir: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [bin, 'demo', '--dir', dir, '--no-build', ...args], { timeout: 60_000 }, (err, _stdout, stderr) =>
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stderr }),
    );
  });
}

for (const [flag, what] of [
  ['--http-port', "the gateway's HTTP port"],
  ['--sandbox-port', 'the sandbox API server'],
] as const) {
  test(`a taken ${flag} is named with its flag`, async () => {
    const held = await holdPort();
    const dir = mkdtempSync(join(tmpdir(), 'outpost-demo-ports-'));
    try {
      const others = ['--sandbox-port', '--http-port', '--grpc-port', '--agent-port'].filter((f) => f !== flag).flatMap((f) => [f, '0']);
      const { code, stderr } = await demo([...others, flag, String(held.port)], dir);
      assert.equal(code, 1, stderr);
      assert.match(stderr, new RegExp(`port ${held.port} \\(${what.replace(/[()]/g, '\\$&')}\\) is in use`));
      assert.match(stderr, new RegExp(`Move it with ${flag}`));
    } finally {
      held.server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
