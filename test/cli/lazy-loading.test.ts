/**
 * Commands load only what they use: `outpost --help` and the help of the long-running commands never load the sandbox
 * API server or the Kubernetes client (the agent, the sandbox and the gateway load their own parts when they run), and
 * client commands load the OpenID Connect client only to sign in or renew a sign-in.
 * Checked by recording every module URL the real command resolves.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RECORDER = fileURLToPath(new URL('./fixtures/record-loads.mjs', import.meta.url));

/** The module URLs `outpost ARGS` loads (run from the sources). */
function loadsOf(args: string[]): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-loads-'));
  const log = join(dir, 'loads.txt');
  try {
    const run = spawnSync(process.execPath, ['--import', RECORDER, join(ROOT, 'bin', 'outpost.js'), ...args], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, OUTPOST_RUNTIME: 'tsx', OUTPOST_LOAD_LOG: log },
      timeout: 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** pino and the logger are for the long-running programs: client commands start without them. */
const loadsLogger = (url: string): boolean => url.includes('/node_modules/pino') || url.includes('/src/shared/logger.ts');

describe('CLI module loading', () => {
  for (const args of [['--help'], ['agent', '--help'], ['sandbox', '--help'], ['gateway', '--help']]) {
    test(`outpost ${args.join(' ')} loads neither the sandbox nor the Kubernetes client`, () => {
      const loads = loadsOf(args);
      assert.ok(
        loads.some((u) => u.includes('/src/cli/main.ts')),
        'the recorder saw the CLI load',
      );
      assert.deepEqual(
        loads.filter((u) => u.includes('/src/sandbox/') || u.includes('@kubernetes/client-node')),
        [],
      );
      if (args[0] === '--help') assert.deepEqual(loads.filter(loadsLogger), [], 'no logger for --help');
    });
  }

  for (const args of [['get', '--help']]) {
    test(`outpost ${args.join(' ')} loads no logger (pino is for the long-running programs; start-up time of client commands)`, () => {
      const loads = loadsOf(args);
      assert.deepEqual(loads.filter(loadsLogger), []);
    });
  }

  for (const args of [
    ['get', '--help'],
    ['login', '--help'],
  ]) {
    test(`outpost ${args.join(' ')} loads no OpenID Connect client (openid-client is for signing in and renewing)`, () => {
      assert.deepEqual(
        loadsOf(args).filter((u) => u.includes('/node_modules/openid-client') || u.includes('/node_modules/oauth4webapi')),
        [],
      );
    });
  }
});
