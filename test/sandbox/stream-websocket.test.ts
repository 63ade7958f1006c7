/**
 * exec, attach and port-forward at the wire level with a plain WebSocket client (`ws`): both channel protocols,
 * stdin close (v5), the status on channel 3, the checks made before an upgrade is accepted (RBAC with `create` for a
 * GET, impersonation, the fault gate, pod and query validation), the refusals, and shutdown of open sessions.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, test } from 'node:test';
import WebSocket from 'ws';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call } from './api-client.js';
import { createRunningPod } from './stream-fixtures.js';

const NS = 'wire';
let sb: Sandbox;

before(async () => {
  sb = await startSandbox();
  createRunningPod(sb, NS, 'web');
  const rbac = 'rbac.authorization.k8s.io/v1';
  sb.store.create({
    apiVersion: rbac,
    kind: 'Role',
    metadata: { name: 'exec-get-only', namespace: NS },
    rules: [{ apiGroups: [''], resources: ['pods/exec'], verbs: ['get'] }],
  });
  sb.store.create({
    apiVersion: rbac,
    kind: 'RoleBinding',
    metadata: { name: 'carol-exec-get-only', namespace: NS },
    subjects: [{ kind: 'User', name: 'carol' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'exec-get-only' },
  });
});

after(() => sb?.close());

interface Session {
  stdout: string;
  stderr: string;
  status?: Record<string, unknown>;
  closeCode: number;
}

function wsUrl(path: string): string {
  return `${sb.url.replace(/^http/, 'ws')}${path}`;
}

/** Opens a channel WebSocket; `script` runs once it is open; resolves at close with what came back. */
function channel(
  path: string,
  protocols: string[],
  script: (ws: WebSocket) => void = () => {},
  headers: Record<string, string> = {},
): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(path), protocols, { headers: { Authorization: `Bearer ${sb.adminToken}`, ...headers } });
    const session: Session = { stdout: '', stderr: '', closeCode: 0 };
    ws.on('open', () => script(ws));
    ws.on('message', (data: Buffer) => {
      if (data[0] === 1) session.stdout += data.subarray(1).toString();
      else if (data[0] === 2) session.stderr += data.subarray(1).toString();
      else if (data[0] === 3) session.status = JSON.parse(data.subarray(1).toString());
    });
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () =>
        reject(Object.assign(new Error(`HTTP ${res.statusCode}: ${body}`), { status: res.statusCode, body: JSON.parse(body) })),
      );
    });
    ws.on('error', reject);
    ws.on('close', (code) => resolve({ ...session, closeCode: code }));
  });
}

const execPath = (command: string[], extra = 'stdout=true&stderr=true') =>
  `/api/v1/namespaces/${NS}/pods/web/exec?${command.map((c) => `command=${encodeURIComponent(c)}`).join('&')}&${extra}`;

test('v5: exec echo, then a Success status on channel 3 and a normal close', async () => {
  const s = await channel(execPath(['echo', 'hi', 'there']), ['v5.channel.k8s.io']);
  assert.equal(s.stdout, 'hi there\n');
  assert.deepEqual(s.status, { metadata: {}, status: 'Success' });
  assert.equal(s.closeCode, 1000);
});

test('v5: stdin reaches cat and [255, 0] closes it', async () => {
  const s = await channel(execPath(['cat'], 'stdin=true&stdout=true'), ['v5.channel.k8s.io'], (ws) => {
    ws.send(Buffer.from([0, ...Buffer.from('abc')]));
    ws.send(Buffer.from([0, ...Buffer.from('def')]));
    ws.send(Buffer.from([255, 0]));
  });
  assert.equal(s.stdout, 'abcdef');
  assert.equal(s.status?.status, 'Success');
});

test('v4: a non-zero exit is a NonZeroExitCode status with the code as its ExitCode cause', async () => {
  const s = await channel(execPath(['sh', '-c', 'exit 42']), ['v4.channel.k8s.io']);
  assert.equal(s.status?.reason, 'NonZeroExitCode');
  assert.deepEqual((s.status?.details as { causes: unknown[] } | undefined)?.causes, [{ reason: 'ExitCode', message: '42' }]);
});

test('with a TTY, stderr goes to stdout', async () => {
  const s = await channel(execPath(['nope'], 'stdout=true&tty=true'), ['v5.channel.k8s.io']);
  assert.equal(s.stdout, 'sh: nope: command not found\n');
  assert.equal(s.stderr, '');
});

test('attach over v5 greets and echoes stdin until it closes', async () => {
  const s = await channel(`/api/v1/namespaces/${NS}/pods/web/attach?container=main&stdin=true&stdout=true`, ['v5.channel.k8s.io'], (ws) => {
    ws.send(Buffer.from([0, ...Buffer.from('hello\n')]));
    ws.send(Buffer.from([255, 0]));
  });
  assert.equal(s.stdout, `attached to container main of pod ${NS}/web\nhello\n`);
});

test('a GET upgrade needs create on pods/exec too (upstream 1.33); the impersonated user is the one checked', async () => {
  const err = await channel(execPath(['echo']), ['v5.channel.k8s.io'], undefined, { 'Impersonate-User': 'carol' }).then(
    () => assert.fail('upgrade accepted'),
    (e: { status: number; body: { message: string } }) => e,
  );
  assert.equal(err.status, 403);
  assert.equal(
    err.body.message,
    `pods "web" is forbidden: User "carol" cannot create resource "pods/exec" in API group "" in the namespace "${NS}"`,
  );
});

test('query and pod checks answer with upstream Status errors before the upgrade', async () => {
  const status = (path: string, protocols = ['v5.channel.k8s.io']) =>
    channel(path, protocols).then(
      () => assert.fail('upgrade accepted'),
      (e: { status: number; body: { message: string } }) => [e.status, e.body.message] as const,
    );
  assert.deepEqual(await status(execPath([])), [400, 'you must specify at least one command for the container']);
  assert.deepEqual(await status(execPath(['echo'], 'tty=true&stdout=true&stderr=true')), [400, 'tty and stderr cannot both be true']);
  assert.deepEqual(await status(execPath(['echo'], 'container=x&stdout=true')), [400, 'container x is not valid for pod web']);
  assert.deepEqual(await status(`/api/v1/namespaces/${NS}/pods/gone/exec?command=echo&stdout=true`), [404, 'pods "gone" not found']);
  const [code, message] = await status(`/api/v1/namespaces/${NS}/pods/web/portforward?ports=80`, ['portforward.k8s.io']);
  assert.equal(code, 400);
  assert.match(message, /port-forward only as SPDY\/3.1 tunnelled over WebSocket/);
});

test('exec without an upgrade is a 400, and the fault gate applies to upgrades', async () => {
  const plain = await call(sb, 'POST', `/api/v1/namespaces/${NS}/pods/web/exec?command=echo&stdout=true`);
  assert.equal(plain.status, 400);
  assert.equal(plain.json.message, 'Upgrade request required');
  sb.faults.setErrorRate(1);
  try {
    const err = await channel(execPath(['echo']), ['v5.channel.k8s.io']).catch((e: { status: number }) => e);
    assert.equal((err as { status: number }).status, 500);
  } finally {
    sb.faults.setErrorRate(0);
  }
});

test('a SPDY upgrade is refused with a 400 Status', async () => {
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${sb.url}${execPath(['echo'])}`, {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${sb.adminToken}`,
        Connection: 'Upgrade',
        Upgrade: 'SPDY/3.1',
        'X-Stream-Protocol-Version': 'v4.channel.k8s.io',
      },
    });
    req.on('response', (r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    req.on('upgrade', () => reject(new Error('upgraded')));
    req.on('error', reject);
    req.end();
  });
  assert.equal(res.status, 400);
  assert.match(JSON.parse(res.body).message, /SPDY is not supported/);
});

test('closing the sandbox ends open sessions', async () => {
  const own = await startSandbox();
  createRunningPod(own, NS, 'web');
  const closed = new Promise<number>((resolve, reject) => {
    const ws = new WebSocket(`${own.url.replace(/^http/, 'ws')}${execPath(['sleep', '3600'])}`, ['v5.channel.k8s.io'], {
      headers: { Authorization: `Bearer ${own.adminToken}` },
    });
    ws.on('open', () => void own.close());
    ws.on('close', (code) => resolve(code));
    ws.on('error', reject);
  });
  assert.equal(typeof (await closed), 'number');
});

test('an upgrade request to any other path is served as a plain request', async () => {
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request(`${sb.url}/api/v1/namespaces/${NS}`, {
      headers: { Authorization: `Bearer ${sb.adminToken}`, Connection: 'Upgrade', Upgrade: 'websocket' },
    });
    req.on('response', (r) => {
      let body = '';
      r.on('data', (c: Buffer) => (body += c.toString()));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    req.on('upgrade', () => reject(new Error('upgraded')));
    req.on('error', reject);
    req.end();
  });
  assert.equal(res.status, 200);
  assert.equal(JSON.parse(res.body).metadata.name, NS);
});
