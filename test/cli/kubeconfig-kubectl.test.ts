/**
 * The kubeconfig `outpost kubeconfig` writes, read by the real kubectl: `kubectl config view` sees the context, and
 * `kubectl version` against a stand-in for the gateway (a local HTTPS server on port 0 that records what arrives)
 * sends the token — stored in the file, or fetched by kubectl running `outpost credential` (--exec).
 *
 * HTTPS because kubectl sends credentials only over TLS (to an http:// server its requests go out anonymous), and
 * `kubectl version` rather than `kubectl get --raw /version` because --raw replaces the server URL's path, dropping
 * /k8s/ACCOUNT: both checked below.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer as createHttpServer, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createCertificateAuthority, type CertificateAuthority } from '../../src/sandbox/certs.js';
import { KUBECTL } from '../deploy/kustomize.js';
import { createScratch, fakeJwt, runKubeCli } from './kubeconfig-helpers.js';

const BIN = fileURLToPath(new URL('../../bin/outpost.js', import.meta.url));
const scratch = createScratch();
const seen: { url: string; headers: IncomingHttpHeaders }[] = [];
let server: ReturnType<typeof createServer>;
let ca: CertificateAuthority;
let caFile = '';
let gateway = '';

before(async () => {
  ca = await createCertificateAuthority();
  caFile = scratch.file('ca.pem', ca.caPem);
  server = createServer({ cert: ca.certPem, key: ca.keyPem }, (req, res) => {
    seen.push({ url: (req.url ?? '').replace(/\?.*/, ''), headers: req.headers });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ major: '1', minor: '32', gitVersion: 'v1.32.0-outpost-test', platform: 'linux/amd64' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  gateway = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  scratch.cleanup();
});

/** Runs kubectl with only this kubeconfig, a scratch HOME and cache, and node on PATH (for the plugin's shebang). */
function kubectl(kubeconfig: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = {
    PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
    HOME: scratch.dir,
    KUBECACHEDIR: join(scratch.dir, 'kube-cache'),
    KUBECONFIG: kubeconfig,
    OUTPOST_RUNTIME: 'tsx',
  };
  return new Promise((resolve) => {
    execFile(KUBECTL, args, { env, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? (err as { code: number }).code : 1) : 0;
      resolve({ code, stdout, stderr: err && !stderr ? err.message : stderr });
    });
  });
}

/** The gitVersion kubectl reports for the server, and what reached the server meanwhile. */
async function serverVersion(kubeconfig: string, args: string[] = []): Promise<{ gitVersion: string; requests: [string, string?][] }> {
  seen.length = 0;
  const run = await kubectl(kubeconfig, [...args, 'version', '-o', 'json']);
  assert.equal(run.code, 0, run.stderr);
  return {
    gitVersion: JSON.parse(run.stdout).serverVersion?.gitVersion,
    requests: seen.map((r) => [r.url, r.headers.authorization]),
  };
}

describe('the written kubeconfig with the real kubectl', () => {
  test('config view --minify shows the server; the stored token reaches the gateway under /k8s/ACCOUNT', async () => {
    const path = join(scratch.dir, 'token-config');
    const written = await runKubeCli(['kubeconfig', '--account', 'prod', '--gateway', gateway, '--kubeconfig', path, '--ca-file', caFile], {
      env: { OUTPOST_TOKEN: 'stored-token' },
    });
    assert.equal(written.code, 0, written.err);
    const view = await kubectl(path, ['config', 'view', '--minify', '--context', 'outpost-prod', '-o', 'json']);
    assert.equal(view.code, 0, view.stderr);
    const config = JSON.parse(view.stdout);
    assert.equal(config.clusters[0].name, 'outpost-prod');
    assert.equal(config.clusters[0].cluster.server, `${gateway}/k8s/prod`);
    assert.equal(config.clusters[0].cluster['certificate-authority'], caFile);
    assert.equal(config.contexts[0].context.user, 'outpost-prod');

    const { gitVersion, requests } = await serverVersion(path, ['--context', 'outpost-prod']);
    assert.equal(gitVersion, 'v1.32.0-outpost-test');
    assert.deepEqual(requests, [['/k8s/prod/version', 'Bearer stored-token']]);
  });

  test('--exec: kubectl runs "outpost credential", and the token from the file (a JWT) arrives', async () => {
    const path = join(scratch.dir, 'exec-config');
    const jwt = fakeJwt({ sub: 'alice', exp: Math.floor(Date.now() / 1000) + 3600 });
    const tokenFile = scratch.file('jwt', `${jwt}\n`);
    const written = await runKubeCli(
      [
        'kubeconfig',
        '--account',
        'prod',
        '--gateway',
        gateway,
        '--kubeconfig',
        path,
        '--ca-file',
        caFile,
        '--exec',
        '--token-file',
        tokenFile,
        '--set-current',
      ],
      { env: {} },
    );
    assert.equal(written.code, 0, written.err);
    const view = await kubectl(path, ['config', 'view', '--minify', '-o', 'json']);
    assert.equal(view.code, 0, view.stderr);
    const exec = JSON.parse(view.stdout).users[0].user.exec;
    assert.equal(exec.apiVersion, 'client.authentication.k8s.io/v1');
    assert.equal(exec.command, BIN);
    assert.deepEqual(exec.args, ['credential', '--token-file', tokenFile]);
    assert.equal(exec.interactiveMode, 'Never');
    assert.ok(!view.stdout.includes(jwt), 'the token is not in the kubeconfig');

    const { gitVersion, requests } = await serverVersion(path);
    assert.equal(gitVersion, 'v1.32.0-outpost-test');
    assert.deepEqual(requests, [['/k8s/prod/version', `Bearer ${jwt}`]]);

    // get --raw sends the token too, but to the path as given: kubectl drops the server URL's /k8s/ACCOUNT for --raw
    seen.length = 0;
    const raw = await kubectl(path, ['get', '--raw', '/version']);
    assert.equal(raw.code, 0, raw.stderr);
    assert.deepEqual(
      seen.map((r) => [r.url, r.headers.authorization]),
      [['/version', `Bearer ${jwt}`]],
    );
    seen.length = 0;
    const full = await kubectl(path, ['get', '--raw', '/k8s/prod/version']);
    assert.equal(full.code, 0, full.stderr);
    assert.deepEqual(
      seen.map((r) => r.url),
      ['/k8s/prod/version'],
      'with the full path it reaches the account',
    );
  });

  test("--exec with an emptied token file: kubectl fails showing the plugin's message; nothing reaches the gateway", async () => {
    const path = join(scratch.dir, 'exec-missing');
    const tokenFile = scratch.file('soon-gone', 'tok\n');
    const args = [
      'kubeconfig',
      '--account',
      'prod',
      '--gateway',
      gateway,
      '--kubeconfig',
      path,
      '--ca-file',
      caFile,
      '--exec',
      '--token-file',
      tokenFile,
    ];
    assert.equal((await runKubeCli(args, { env: {} })).code, 0);
    scratch.file('soon-gone', '');
    seen.length = 0;
    const run = await kubectl(path, ['--context', 'outpost-prod', 'version', '-o', 'json']);
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /soon-gone is empty/);
    assert.deepEqual(seen, []);
  });

  test('kubectl sends no credentials to an http:// gateway, and outpost kubeconfig warns about it', async () => {
    const plain = createHttpServer((req, res) => {
      seen.push({ url: (req.url ?? '').replace(/\?.*/, ''), headers: req.headers });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ major: '1', minor: '32', gitVersion: 'v1.32.0-plain' }));
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
      const path = join(scratch.dir, 'http-config');
      const r = await runKubeCli(['kubeconfig', '--account', 'prod', '--gateway', url, '--kubeconfig', path, '--set-current'], {
        env: { OUTPOST_TOKEN: 't' },
      });
      assert.equal(r.code, 0, r.err);
      assert.match(r.err, /kubectl sends no credentials over plain http/);
      const { gitVersion, requests } = await serverVersion(path);
      assert.equal(gitVersion, 'v1.32.0-plain');
      assert.ok(requests.length > 0);
      for (const request of requests) assert.deepEqual(request, ['/k8s/prod/version', undefined], 'anonymous');
    } finally {
      plain.closeAllConnections();
      await new Promise<void>((resolve) => plain.close(() => resolve()));
    }
  });
});
