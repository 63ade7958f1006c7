/**
 * The token source after the gateway refused its token: the token command runs again before the next attempt even
 * though its interval has not passed, also when the refusal came while a run was in progress (that run may still
 * print the refused token).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokenSource } from '../../src/agent/stream/token-source.js';
import { createSilentLogger } from '../../src/shared/logger.js';

test('tokenCommand: rejected() makes the next current() run the command again, after a run in progress', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-token-source-'));
  const counter = join(dir, 'runs');
  const script = join(dir, 'token.sh');
  writeFileSync(counter, '0');
  // Each run prints token-<n>; it sleeps a little so a refusal can arrive while it runs.
  writeFileSync(script, `n=$(( $(cat "${counter}") + 1 )); echo $n > "${counter}"; sleep 0.3; echo token-$n\n`);
  const source = createTokenSource(
    { tokenCommand: { command: 'sh', args: [script] }, tokenCommandIntervalSeconds: 3600, tokenCommandTimeoutSeconds: 10 },
    createSilentLogger(),
  );
  try {
    assert.equal(await source.current(), 'token-1');
    assert.equal(await source.current(), 'token-1', 'within its interval the command is not run again');

    source.rejected();
    assert.equal(await source.current(), 'token-2');
    assert.equal(await source.current(), 'token-2', 'one run per refusal');

    // Refused while a run (started earlier) is in progress: that run's token is not trusted; another run follows.
    source.rejected();
    const first = source.current(); // starts run 3
    await new Promise((r) => setTimeout(r, 100));
    source.rejected();
    const second = source.current(); // while run 3 still runs
    assert.equal(await first, 'token-3');
    assert.equal(await second, 'token-4');
    assert.equal(await source.current(), 'token-4');
  } finally {
    source.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
