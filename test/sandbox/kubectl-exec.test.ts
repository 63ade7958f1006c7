/**
 * Real kubectl against the sandbox's exec and attach (WebSocket, v5.channel.k8s.io), the refusal of SPDY that
 * kubectl 1.27 gets, and `logs -f`. The pods are created Running straight in the store.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { createRunningPod, KUBECTL_127, KUBECTL_133 } from './stream-fixtures.js';

const NS = 'streams';
let sandbox: Sandbox;

before(async () => {
  sandbox = await startSandbox({ tls: true, logFollowIntervalMs: 100 });
  createRunningPod(sandbox, NS, 'web');
  createRunningPod(sandbox, NS, 'duo', ['app', 'sidecar']);
  // alice may read pods (kubectl exec reads the pod first) but not exec into them
  sandbox.store.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: 'pod-reader', namespace: NS },
    rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
  });
  sandbox.store.create({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: 'alice-pod-reader', namespace: NS },
    subjects: [{ kind: 'User', name: 'alice' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
  });
});

after(async () => {
  await sandbox?.close();
});

describe('kubectl 1.33 exec and attach', { skip: existsSync(KUBECTL_133) ? false : `${KUBECTL_133} not installed` }, () => {
  let kubectl: Kubectl;
  before(async () => {
    kubectl = await createKubectl(KUBECTL_133, sandbox);
  });
  after(() => kubectl?.cleanup());

  test('exec echo prints its arguments', async () => {
    assert.equal(await kubectl.ok(['exec', '-n', NS, 'web', '--', 'echo', 'hello', 'world']), 'hello world\n');
  });

  test('stdin piped to cat comes back, and the session ends when stdin closes', async () => {
    const input = 'line one\nline two\n'.repeat(200);
    assert.equal(await kubectl.ok(['exec', '-i', '-n', NS, 'web', '--', 'cat'], { input }), input);
  });

  test('a non-zero exit code becomes kubectl exit code', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'web', '--', 'sh', '-c', 'exit 3']);
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /command terminated with exit code 3/);
  });

  test('an unknown command exits 127 with "command not found" on stderr', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'web', '--', 'rm', '-rf', '/']);
    assert.equal(r.code, 127);
    assert.match(r.stderr, /rm: command not found/);
  });

  test('env and hostname are deterministic, and -c picks a container', async () => {
    assert.equal(await kubectl.ok(['exec', '-n', NS, 'duo', '-c', 'sidecar', '--', 'hostname']), 'duo\n');
    const env = await kubectl.ok(['exec', '-n', NS, 'web', '--', 'env']);
    assert.match(env, /^HOSTNAME=web$/m);
    assert.match(env, /^GREETING=hi$/m);
  });

  test('an unknown container is a 400 from the server', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'duo', '-c', 'nope', '--', 'echo']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /container nope is not valid for pod duo/);
  });

  test('a missing pod is a 404', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'ghost', '--', 'echo']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /pods "ghost" not found/);
  });

  test('exec as an impersonated user without pods/exec is forbidden before any upgrade', async () => {
    const r = await kubectl.run(['exec', '--as', 'alice', '-n', NS, 'web', '--', 'echo', 'hi']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /pods "web" is forbidden: User "alice" cannot create resource "pods\/exec" in API group "" in the namespace "streams"/,
    );
  });

  test('attach -i greets, echoes stdin and ends when stdin closes', async () => {
    const out = await kubectl.ok(['attach', '-i', '-n', NS, 'web'], { input: 'ping\n' });
    assert.match(out, /^attached to container main of pod streams\/web$/m);
    assert.match(out, /^ping$/m);
  });

  test('attach without stdin prints the greeting and ends', async () => {
    const out = await kubectl.ok(['attach', '-n', NS, 'duo', '-c', 'app']);
    assert.match(out, /attached to container app of pod streams\/duo/);
  });

  test('logs -f streams heartbeat lines and ends when the pod is deleted', async () => {
    createRunningPod(sandbox, NS, 'chatty');
    const child = kubectl.spawn(['logs', '-f', '-n', NS, 'chatty']);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await eventually('two heartbeat lines', () => (out.match(/heartbeat \d+/g) ?? []).length >= 2, { timeoutMs: 20_000 });
    assert.match(out, /\[main\] ready/);
    sandbox.store.remove('v1', 'Pod', NS, 'chatty');
    assert.equal(await exited, 0);
  });

  test('logs -f stops cleanly when kubectl goes away', async () => {
    createRunningPod(sandbox, NS, 'quiet');
    const child = kubectl.spawn(['logs', '-f', '-n', NS, 'quiet']);
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    await eventually('a heartbeat line', () => /heartbeat 1/.test(out), { timeoutMs: 20_000 });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    child.kill('SIGTERM');
    await exited;
    // the sandbox still answers, and closing it (after() does) does not wait on a leaked follower
    assert.equal(await kubectl.ok(['exec', '-n', NS, 'quiet', '--', 'echo', 'still here']), 'still here\n');
  });
});

describe('kubectl 1.27 exec (SPDY)', { skip: existsSync(KUBECTL_127) ? false : `${KUBECTL_127} not installed` }, () => {
  let kubectl: Kubectl;
  before(async () => {
    kubectl = await createKubectl(KUBECTL_127, sandbox);
  });
  after(() => kubectl?.cleanup());

  test('exec is refused with a clear message', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'web', '--', 'echo', 'hello']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /the sandbox supports exec, attach and port-forward over WebSocket only .*SPDY is not supported/);
  });

  test('port-forward is refused with the same message', async () => {
    const r = await kubectl.run(['port-forward', '-n', NS, 'pod/web', ':8080'], { timeoutMs: 20_000 });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /SPDY is not supported/);
  });
});
