/**
 * The sandbox's pace on the command line: `outpost sandbox` and `outpost demo` take `--pod-start-delay-ms` and
 * `--pod-ready-delay-ms`, name them in `--help`, refuse values that are not a whole number of milliseconds (naming the
 * flag), and a sandbox started with a ready delay keeps a new pod Running but not Ready before it becomes Ready (seen
 * through a watch; the waits only bound a hang).
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { CoreV1Api, KubeConfig, Watch } from '@kubernetes/client-node';

const BIN = join(import.meta.dirname, '../../bin/outpost.js');

function outpost(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: { ...process.env, OUTPOST_LOG_LEVEL: 'warn' } }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
    });
  });
}

describe('pace flags', () => {
  for (const command of ['sandbox', 'demo']) {
    test(`outpost ${command} --help names both flags`, async () => {
      const help = await outpost([command, '--help']);
      assert.equal(help.code, 0, help.stderr);
      const text = help.stdout.replace(/\s+/g, ' ');
      assert.match(text, /--pod-start-delay-ms <ms> how long a new pod stays Pending before it runs, in milliseconds \(default 30\)/);
      assert.match(text, /--pod-ready-delay-ms <ms> how long a started pod stays Running but not Ready/);
      assert.match(text, /sets the pace of rollouts/);
    });

    // the same parser serves both commands: every case for sandbox, two for demo
    const cases = [
      ['--pod-ready-delay-ms', 'soon', 'must be a whole number of milliseconds'],
      ['--pod-start-delay-ms', '1.5', 'must be a whole number of milliseconds'],
      ['--pod-ready-delay-ms', '-5', 'must not be negative'],
      ['--pod-start-delay-ms', '3000000000', 'must be at most 2147483647'],
    ] as const;
    for (const [flag, value, reason] of command === 'sandbox' ? cases : cases.slice(0, 2)) {
      test(`outpost ${command} ${flag} ${value} is refused before anything starts`, async () => {
        const r = await outpost([command, flag, value]);
        assert.notEqual(r.code, 0);
        assert.ok(
          r.stderr.includes(`option '${flag} <ms>' argument '${value}' is invalid. not a delay in milliseconds: ${value} (${reason}`),
          r.stderr,
        );
        assert.doesNotMatch(r.stdout, /sandbox API server|demo is running/);
      });
    }
  }

  test('outpost sandbox --pod-ready-delay-ms: a new pod runs unready first, then becomes Ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'outpost-sandbox-pace-'));
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', '--no-tls', '--port', '0', '--kubeconfig', kubeconfig, '--pod-start-delay-ms', '10', '--pod-ready-delay-ms', '400'],
      { env: { ...process.env, OUTPOST_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no kubeconfig line: ${out}`)), 30_000);
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('kubeconfig:')) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
      });
      const kc = new KubeConfig();
      kc.loadFromFile(kubeconfig);
      const core = kc.makeApiClient(CoreV1Api);
      await core.createNamespace({ body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'pace' } } });
      const seen: { phase?: string; ready: boolean }[] = [];
      let becameReady!: () => void;
      let failed!: (err: unknown) => void;
      const ready = new Promise<void>((resolve, reject) => ((becameReady = resolve), (failed = reject)));
      // the watch is open before the pod exists, so it sees every state the pod goes through
      const request = await new Watch(kc).watch(
        '/api/v1/namespaces/pace/pods',
        {},
        (_type, pod: { status?: { phase?: string; conditions?: { type: string; status: string }[] } }) => {
          const isReady = !!pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
          seen.push({ phase: pod.status?.phase, ready: isReady });
          if (isReady) becameReady();
        },
        (err) => err && failed(err),
      );
      const timer = setTimeout(() => failed(new Error(`never Ready: ${JSON.stringify(seen)}`)), 30_000);
      try {
        await core.createNamespacedPod({
          namespace: 'pace',
          body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
        });
        await ready;
      } finally {
        clearTimeout(timer);
        request.abort();
      }
      assert.ok(
        seen.some((s) => s.phase === 'Running' && !s.ready),
        `Running and not Ready before Ready: ${JSON.stringify(seen)}`,
      );
    } finally {
      child.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
