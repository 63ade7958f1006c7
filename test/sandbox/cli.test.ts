/**
 * `outpost sandbox` as a user runs it: it prints the URL, writes a kubeconfig client-node accepts (with both
 * contexts; its directory created when missing), takes faults through `outpost sandbox fault`, and stops cleanly on SIGTERM.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import https from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse } from 'yaml';

const BIN = join(import.meta.dirname, '../../bin/outpost.js');

/**
 * Runs `outpost …` as a child process; resolves to its exit code and what it printed. (In-process, swapping
 * process.stdout.write swallowed the test runner's own report lines written meanwhile.)
 */
function outpost(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, OUTPOST_LOG_LEVEL: 'warn' } }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

test('outpost sandbox serves over TLS, writes a kubeconfig (in a new directory), takes faults and stops on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-sandbox-cli-'));
  const kubeconfig = join(dir, 'cluster', 'kubeconfig');
  const child = spawn(process.execPath, [BIN, 'sandbox', '--port', '0', '--seed', 'demo', '--kubeconfig', kubeconfig], {
    env: { ...process.env, OUTPOST_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no URL printed: ${out}`)), 20000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /sandbox API server: (https:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (m && out.includes('kubeconfig:')) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
    });

    const doc = parse(readFileSync(kubeconfig, 'utf8'));
    assert.deepEqual(
      doc.contexts.map((c: { name: string }) => c.name),
      ['sandbox', 'sandbox-restricted'],
    );
    assert.equal(doc['current-context'], 'sandbox');
    assert.equal(doc.clusters[0].cluster.server, url);
    // TLS by default: kubectl sends its bearer token over TLS only, so the written kubeconfig works with kubectl as is.
    assert.match(doc.clusters[0].cluster['certificate-authority-data'], /^[A-Za-z0-9+/=]+$/);
    assert.equal(doc.clusters[0].cluster['insecure-skip-tls-verify'], undefined);
    assert.doesNotMatch(out, /note: kubectl sends bearer tokens only over TLS/);

    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const pods = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: 'demo' });
    assert.equal(pods.items.length, 3);
    kc.setCurrentContext('sandbox-restricted');
    await assert.rejects(
      kc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: 'demo' }),
      (err: unknown) => (err as { code?: number }).code === 403,
    );

    const fault = await outpost(['sandbox', 'fault', 'fail-next-watches', '1', '--status', '410', '--kubeconfig', kubeconfig]);
    assert.equal(fault.code, 0, fault.stderr);
    assert.equal(JSON.parse(fault.stdout).failNextWatches.count, 1);
    const token = doc.users[0].user.token as string;
    // The watch through the kubeconfig's own CA (fetch takes none).
    const ca = Buffer.from(doc.clusters[0].cluster['certificate-authority-data'] as string, 'base64').toString('utf8');
    const watchStatus = await new Promise<number>((resolve, reject) => {
      const req = https.get(`${url}/api/v1/pods?watch=true`, { ca, headers: { Authorization: `Bearer ${token}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
    });
    assert.equal(watchStatus, 410);
    const bad = await outpost(['sandbox', 'fault', 'error-rate', 'lots', '--kubeconfig', kubeconfig]);
    assert.notEqual(bad.code, 0);

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('outpost sandbox rejects a bad seed', async () => {
  const r = await outpost(['sandbox', '--port', '0', '--seed', 'lots']);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /invalid seed "lots"/);
});

test('outpost sandbox --no-tls serves plain HTTP and says kubectl cannot use that kubeconfig', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-sandbox-cli-'));
  const kubeconfig = join(dir, 'kubeconfig');
  const child = spawn(process.execPath, [BIN, 'sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig], {
    env: { ...process.env, OUTPOST_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no note printed: ${out}`)), 20000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('note:')) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
    });
    assert.match(out, /sandbox API server: http:\/\/127\.0\.0\.1:\d+/);
    assert.match(out, /note: kubectl sends bearer tokens only over TLS; start without --no-tls/);
    assert.equal(parse(readFileSync(kubeconfig, 'utf8')).clusters[0].cluster['insecure-skip-tls-verify'], true);
  } finally {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
});
