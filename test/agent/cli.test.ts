import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const bin = new URL('../../bin/outpost.js', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'outpost-agent-cli-'));

function run(
  args: string[],
  onStdout?: (text: string, kill: () => void) => void,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, OUTPOST_AGENT_GRPC: '', POD_NAME: 'cli-agent' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => {
      stdout += c;
      onStdout?.(stdout, () => child.kill('SIGTERM'));
    });
    child.stderr.on('data', (c) => (stderr += c));
    // 'close', not 'exit': output can still be on its way through the pipes when the process has exited.
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('outpost agent (CLI)', { concurrency: true }, () => {
  test('an invalid configuration: clear message naming each key on stderr, exit 1, no stack trace', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(
      file,
      'clouddriver:\n  grpc: nowhere\nkubernetes:\n  accounts:\n    - name: Bad_Name\n      serviceAccount: true\n      colour: red\n',
    );
    const { code, stderr } = await run(['agent', '--config', file]);
    assert.equal(code, 1);
    assert.match(stderr, /invalid agent configuration/);
    assert.match(stderr, /clouddriver\.grpc: expected "host:port"/);
    assert.match(stderr, /kubernetes\.accounts\[0\]\.name/);
    assert.match(stderr, /kubernetes\.accounts\[0\]: unknown key "colour"/);
    assert.doesNotMatch(stderr, /\n\s+at /);
  });

  test('a missing file is an error too', async () => {
    const missing = await run(['agent', '--config', join(dir, 'nope.yaml')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read file/);
  });

  test('runs, keeps retrying an unreachable gateway, and exits 0 on SIGTERM', async () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(
      file,
      'clouddriver:\n  grpc: 127.0.0.1:1\n  reconnect: {baseSeconds: 0.05, factor: 1, maxSeconds: 0.05}\nserver:\n  port: 0\n',
    );
    let killed = false;
    const { code, stdout } = await run(['agent', '--config', file, '--log-level', 'info'], (text, kill) => {
      if (!killed && text.includes('cannot connect to the gateway')) {
        killed = true;
        kill();
      }
    });
    assert.equal(code, 0);
    assert.match(stdout, /"agentId":"cli-agent"/);
    assert.match(stdout, /agent stopped/);
  });
});
