/**
 * A start that fails half-way stops what it had started: the metrics port is taken, so startAgent rejects after its
 * admin server was listening — and that server is closed again. Run in a child process, where only the agent's
 * sockets exist.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./fixtures/start-failure-child.ts', import.meta.url));

describe('agent start', () => {
  test('a start that fails after the admin server listened closes it again', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', CHILD], { encoding: 'utf8', timeout: 60_000 });
    assert.equal(run.status, 0, run.stderr);
    const { error, before, after } = JSON.parse(run.stdout) as { error: string; before: number; after: number };
    assert.match(error, /EADDRINUSE|address already in use/);
    assert.equal(after, before, 'no listening socket is left behind');
  });
});
