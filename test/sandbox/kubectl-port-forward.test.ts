/**
 * Real `kubectl port-forward` (1.33: SPDY/3.1 tunnelled in a WebSocket) against the sandbox's built-in pod
 * services: port 8080 answers HTTP, every other port echoes. Local ports are picked by kubectl (`:PORT`) and read
 * from its "Forwarding from 127.0.0.1:N -> PORT" lines.
 */
import assert from 'node:assert/strict';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually, StopWaiting } from '../../testkit/eventually.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { createRunningPod, KUBECTL_133 } from './stream-fixtures.js';

const NS = 'forward';
let sandbox: Sandbox;

before(async () => {
  sandbox = await startSandbox({ tls: true });
  createRunningPod(sandbox, NS, 'web');
});

after(async () => {
  await sandbox?.close();
});

/** Starts port-forward and waits for kubectl to print the local port of every remote port. */
async function forward(
  kubectl: Kubectl,
  remotePorts: number[],
): Promise<{ child: ChildProcessWithoutNullStreams; local: Map<number, number> }> {
  const child = kubectl.spawn(['port-forward', '-n', NS, 'pod/web', '--address', '127.0.0.1', ...remotePorts.map((p) => `:${p}`)]);
  let out = '';
  let err = '';
  let exited = false;
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.on('exit', () => (exited = true));
  const local = await eventually(
    'kubectl port-forward listening',
    () => {
      const found = new Map<number, number>();
      for (const m of out.matchAll(/Forwarding from 127\.0\.0\.1:(\d+) -> (\d+)/g)) found.set(Number(m[2]), Number(m[1]));
      if (found.size === remotePorts.length) return found;
      if (exited) throw new StopWaiting(`kubectl port-forward exited: ${err}`);
      return undefined;
    },
    { timeoutMs: 20_000 },
  );
  return { child, local };
}

function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = get({ host: '127.0.0.1', port, path, agent: false, timeout: 20_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('HTTP request through port-forward timed out')));
    req.on('error', reject);
  });
}

function echoRoundTrip(port: number, payload: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = connect(port, '127.0.0.1', () => socket.end(payload));
    socket.setTimeout(20_000, () => socket.destroy(new Error('echo through port-forward timed out')));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', () => resolve(Buffer.concat(chunks)));
    socket.on('error', reject);
  });
}

describe('kubectl 1.33 port-forward', { skip: existsSync(KUBECTL_133) ? false : `${KUBECTL_133} not installed` }, () => {
  let kubectl: Kubectl;
  let child: ChildProcessWithoutNullStreams;
  let local: Map<number, number>;

  before(async () => {
    kubectl = await createKubectl(KUBECTL_133, sandbox);
    ({ child, local } = await forward(kubectl, [8080, 9000]));
  });
  after(() => {
    child?.kill('SIGTERM');
    kubectl?.cleanup();
  });

  test('port 8080 answers HTTP through the tunnel, request after request', async () => {
    for (const path of ['/hello', '/again', '/third']) {
      const r = await httpGet(local.get(8080)!, path);
      assert.equal(r.status, 200);
      assert.equal(r.body, `hello from sandbox pod ${NS}/web port 8080: GET ${path} HTTP/1.1\n`);
    }
  });

  test('other ports echo, also more than a SPDY window (64 KiB) of data', async () => {
    assert.equal((await echoRoundTrip(local.get(9000)!, Buffer.from('ping\n'))).toString(), 'ping\n');
    const big = Buffer.alloc(300 * 1024, 'abcdefghij');
    assert.ok((await echoRoundTrip(local.get(9000)!, big)).equals(big));
  });

  test('concurrent connections are kept apart', async () => {
    const payloads = Array.from({ length: 5 }, (_, i) => Buffer.from(`connection ${i}\n`.repeat(100 + i)));
    const back = await Promise.all(payloads.map((p) => echoRoundTrip(local.get(9000)!, p)));
    back.forEach((b, i) => assert.ok(b.equals(payloads[i]!), `connection ${i} got its own bytes back`));
  });

  test('port-forward as a user without pods/portforward is forbidden', async () => {
    const r = await kubectl.run(['port-forward', '--as', 'nobody', '-n', NS, 'pod/web', ':8080'], { timeoutMs: 20_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /forbidden: User "nobody" cannot/);
  });
});
