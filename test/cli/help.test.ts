/**
 * `outpost --help` is the map a new user reads first: every command must be there with its flags.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const bin = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));

test('outpost --help lists every command with its flags', async () => {
  const { stdout } = await run(process.execPath, [bin, '--help']);
  for (const [command, flag] of [
    ['gateway', '--grpc-port'],
    ['agent', '--config'],
    ['sandbox', '--kubeconfig'],
    ['demo', '--sandbox-port'],
    ['apply', '--server-side'],
    ['delete', '--cascade'],
    ['scale', '--replicas'],
    ['rollout', '--to-revision'],
    ['get', '--output'],
    ['logs', '--tail'],
    ['kubeconfig', '--exec'],
    ['credential', '--token-file'],
    ['credential', '--gateway'],
    ['login', '--flow'],
    ['logout', '--all'],
    ['kubeconfig', '--oidc'],
    ['patch', '--patch-file'],
    ['accounts', '--output'],
    ['operations', '--watch'],
  ]) {
    assert.match(stdout, new RegExp(`outpost ${command} `), `--help misses ${command}`);
    const section = stdout.slice(stdout.indexOf(`outpost ${command} `));
    assert.ok(section.includes(flag), `--help misses ${command} ${flag}`);
  }
  // Every choice flag and argument lists its allowed values.
  assert.match(stdout, /-o, --output <format>\s+output format \(one of: json, yaml, name, wide\)/);
  assert.match(stdout, /--cascade <policy>\s+what happens to dependents \(one of: background, foreground, orphan, true, false\)/);
  assert.match(stdout, /<action>\s+what to do \(one of: undo, pause, resume, restart, history, status\)/);
  assert.match(stdout, /--type <type>\s+patch format \(one of: strategic, merge, json\)/);
  assert.match(stdout, /--state <state>\s+only operations in this state \(one of: pending, sent, succeeded, failed, timed_out\)/);
  assert.match(
    stdout,
    /outpost accounts [^\n]*\n[^\n]*\n\s+--gateway <url>[^\n]*\n\s+-o, --output <format>\s+output format \(default: a table\) \(one of: wide, json, yaml, name\)/,
  );
});

test('every client command has the credential and TLS flags, and its --help the precedence order', async () => {
  const { stdout } = await run(process.execPath, [bin, '--help']);
  for (const command of ['get', 'apply', 'scale', 'rollout', 'patch', 'delete', 'logs', 'accounts', 'operations']) {
    const start = stdout.indexOf(`  outpost ${command} `);
    const section = stdout.slice(start, stdout.indexOf('\n\n', start + 1));
    for (const flag of [
      '--token-file <file>',
      '--credential-exec <command>',
      '--ca-file <file>',
      '--insecure-skip-tls-verify',
      '--provider <name>',
    ]) {
      assert.ok(section.includes(flag), `outpost ${command} lacks ${flag}`);
    }
  }
  const help = (await run(process.execPath, [bin, 'scale', '--help'])).stdout;
  assert.match(
    help,
    /Credentials \(the first that is set is used; without any, no Authorization header is sent\):\n\s+1\. --token-file FILE/,
  );
  assert.match(help, /4\. OUTPOST_CREDENTIAL_EXEC\s+like --credential-exec\n\s+5\. OUTPOST_TOKEN\s/);
});

test('an unknown command exits non-zero with a message', async () => {
  await assert.rejects(run(process.execPath, [bin, 'no-such-command']), (err: { code: number; stderr: string }) => {
    assert.notEqual(err.code, 0);
    assert.match(err.stderr, /unknown command/);
    return true;
  });
});
