/**
 * The client commands' credentials (src/client/client-credentials.ts): the one precedence order (--token-file,
 * --credential-exec, OUTPOST_TOKEN_FILE, OUTPOST_CREDENTIAL_EXEC, OUTPOST_TOKEN), the exec plugin's failures each
 * named with its command (non-zero exit, not JSON, no token, expired), the TLS flags' refusals — all exit 2 with
 * nothing sent — and the token sent as `Authorization: Bearer` on every call of a command, never printed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { resolveGatewayConnection } from '../../src/client/client-credentials.js';
import { splitCommand, tokenOfCredential } from '../../src/client/credential-exec.js';
import { ExitCode } from '../../src/client/errors.js';
import { runCli } from './operations-helpers.js';
import { refusal } from './cli-refusal.js';

const dir = mkdtempSync(join(tmpdir(), 'outpost-credentials-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

/** A plugin run as a JSON argv: node printing `stdout` and exiting with `code` (stderr `err`). */
function plugin(stdout: string, code = 0, err = ''): string {
  const script = `process.stdout.write(${JSON.stringify(stdout)}); process.stderr.write(${JSON.stringify(err)}); process.exit(${code});`;
  return JSON.stringify([process.execPath, '-e', script]);
}
const credential = (token: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token, ...extra } });

const URL_ = 'http://127.0.0.1:1';
const tokenOf = async (opts: Parameters<typeof resolveGatewayConnection>[1], env: NodeJS.ProcessEnv = {}) =>
  (await resolveGatewayConnection(URL_, opts, env)).token;

describe('the precedence order', () => {
  const fileA = file('a', 'from-flag-file\n');
  const fileB = file('b', 'from-env-file\n');
  const all = { OUTPOST_TOKEN_FILE: fileB, OUTPOST_CREDENTIAL_EXEC: plugin(credential('from-env-exec')), OUTPOST_TOKEN: 'from-env' };

  test('--token-file, then --credential-exec, then OUTPOST_TOKEN_FILE, OUTPOST_CREDENTIAL_EXEC, OUTPOST_TOKEN; none: no token', async () => {
    assert.equal(await tokenOf({ tokenFile: fileA }, all), 'from-flag-file');
    assert.equal(await tokenOf({ credentialExec: plugin(credential('from-flag-exec')) }, all), 'from-flag-exec');
    assert.equal(await tokenOf({}, all), 'from-env-file');
    assert.equal(await tokenOf({}, { ...all, OUTPOST_TOKEN_FILE: undefined }), 'from-env-exec');
    assert.equal(await tokenOf({}, { OUTPOST_TOKEN: ' from-env\n' }), 'from-env');
    assert.equal(await tokenOf({}, {}), undefined);
  });

  test('--token-file and --credential-exec together are refused', async () => {
    const err = await refusal(tokenOf({ tokenFile: fileA, credentialExec: 'true' }));
    assert.equal(err.exitCode, ExitCode.USAGE);
    assert.match(err.message, /--token-file and --credential-exec exclude each other/);
  });
});

describe('the exec credential plugin', () => {
  test('split at whitespace without a shell, or a JSON array', () => {
    assert.deepEqual(splitCommand('  outpost credential   --token-file /t ', 'x'), ['outpost', 'credential', '--token-file', '/t']);
    assert.deepEqual(splitCommand('["/my tool", "a b"]', 'x'), ['/my tool', 'a b']);
    assert.throws(() => splitCommand('[1]', '--credential-exec'), /must be a non-empty JSON array of strings/);
    assert.throws(() => splitCommand('[oops', '--credential-exec'), /starts with "\[" but is not a JSON array/);
    assert.throws(() => splitCommand('  ', '--credential-exec'), /--credential-exec is empty/);
  });

  test('its failures name the command and never the token; exit 2', async () => {
    const cases: [string, string, RegExp][] = [
      ['non-zero exit', plugin('', 3, 'first line\nno token for you\n'), /credential command ".*" exited 3: no token for you$/],
      ['not JSON', plugin('hello'), /did not print an ExecCredential \(its output is not JSON\)/],
      ['another kind', plugin('{"kind":"Secret"}'), /did not print an ExecCredential of apiVersion client\.authentication\.k8s\.io\/v1/],
      ['no token', plugin(credential('')), /printed an ExecCredential without status\.token/],
      [
        'expired',
        // The token comes from the environment, so that the command named in the message does not hold it.
        JSON.stringify([
          process.execPath,
          '-e',
          "console.log(JSON.stringify({ apiVersion: 'client.authentication.k8s.io/v1', kind: 'ExecCredential', status: { token: process.env.T, expirationTimestamp: '2001-01-01T00:00:00Z' } }))",
        ]),
        /printed a credential that expired at 2001-01-01T00:00:00Z/,
      ],
      ['a token with spaces', plugin(credential('two words')), /does not hold a single token/],
      ['a command that does not exist', '/nonexistent/plugin --flag', /"\/nonexistent\/plugin --flag" could not run \(ENOENT\)/],
    ];
    for (const [what, command, message] of cases) {
      const err = await refusal(tokenOf({ credentialExec: command }, { T: 'secret-expired-token' }));
      assert.equal(err.exitCode, ExitCode.USAGE, what);
      assert.match(err.message, message, what);
      assert.doesNotMatch(err.message, /secret-expired-token/, what);
    }
  });

  test('it gets KUBERNETES_EXEC_INFO as kubectl sets it; a future expiry is fine', async () => {
    const echo = JSON.stringify([
      process.execPath,
      '-e',
      `const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO); console.log(JSON.stringify({ apiVersion: info.apiVersion, kind: 'ExecCredential', status: { token: 'echo-' + info.spec.interactive, expirationTimestamp: '2999-01-01T00:00:00Z' } }))`,
    ]);
    assert.equal(await tokenOf({ credentialExec: echo }), 'echo-false');
    assert.equal(tokenOfCredential(credential('t', { expirationTimestamp: '2999-01-01T00:00:00Z' }), 'x', new Date()), 't');
  });
});

describe('TLS settings', () => {
  test('an unreadable or non-PEM CA file, TLS flags on http, both TLS flags: exit 2', async () => {
    const notPem = file('not-pem', 'hello');
    const cases: [string, Parameters<typeof resolveGatewayConnection>[1], RegExp][] = [
      ['https://gw', { caFile: '/nonexistent/ca.pem' }, /cannot read the --ca-file \/nonexistent\/ca\.pem \(ENOENT\)/],
      ['https://gw', { caFile: notPem }, /holds no PEM certificate/],
      ['http://gw', { caFile: notPem }, /need an https:\/\/ gateway/],
      ['http://gw', { insecureSkipTlsVerify: true }, /need an https:\/\/ gateway/],
      ['https://gw', { caFile: notPem, insecureSkipTlsVerify: true }, /exclude each other/],
    ];
    for (const [url, opts, message] of cases) {
      const err = await refusal(resolveGatewayConnection(url, opts, {}));
      assert.equal(err.exitCode, ExitCode.USAGE);
      assert.match(err.message, message);
    }
    const fromEnv = await refusal(resolveGatewayConnection('https://gw', {}, { OUTPOST_CA_FILE: '/nonexistent/env-ca.pem' }));
    assert.match(fromEnv.message, /cannot read the OUTPOST_CA_FILE \/nonexistent\/env-ca\.pem/);
    // On http the environment's CA file does not apply (a shell may set it for other gateways).
    assert.deepEqual((await resolveGatewayConnection('http://gw/', {}, { OUTPOST_CA_FILE: '/nonexistent' })).tls, {});
  });
});

describe('every call of a command carries the token', () => {
  let server: Server;
  let url: string;
  const seen: string[] = [];
  before(async () => {
    // Answers every Connect call 401 (what a gateway says to a wrong token), recording its Authorization header.
    server = createServer((req, res) => {
      seen.push(`${req.url} ${req.headers.authorization ?? '-'}`);
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"code":"unauthenticated","message":"bearer token not recognized"}');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  test('read and operation commands, account lookup included; the token is not printed', async () => {
    const token = file('token', 'the-secret-token-0123\n');
    for (const args of [['accounts'], ['operations'], ['get', 'pods'], ['scale', 'deploy/web', '--replicas', '1', '--account', 'a']]) {
      seen.length = 0;
      const r = await runCli([...args, '--gateway', url, '--token-file', token]);
      assert.equal(r.code, ExitCode.FAILED, r.err);
      assert.equal(r.err, 'error: Unauthenticated: bearer token not recognized (HTTP 401)\n');
      assert.ok(seen.length > 0 && seen.every((s) => s.endsWith(' Bearer the-secret-token-0123')), seen.join('\n'));
    }
  });
});
