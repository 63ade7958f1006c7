/**
 * `/k8s/{account}` refusals, limits and isolation over real sockets (TLS gateway, agent, two sandboxes as two
 * accounts): credentials without the kube role, an account the rules do not allow, a bad path or a SPDY upgrade are
 * refused with a Kubernetes Status before anything reaches the agent; a caller's own impersonation headers are
 * dropped; per-identity and per-account concurrency limits answer 429; a request the cluster does not answer in time
 * is answered 504 while another account's requests go on; a caller that stops reading a large answer holds only its
 * own request — other requests and the account's cache traffic keep flowing — and gets every byte once it reads.
 */
import assert from 'node:assert/strict';
import http2 from 'node:http2';
import https from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';
import { createRng, seedFrom } from '../../testkit/rng.js';
import { captureLogs } from '../../testkit/log-capture.js';
import { auditEvents, httpsRequest, startKubeStack, TOKENS, type KubeStack } from './kubectl-helpers.js';

describe('kubectl through the gateway: refusals, limits and isolation', { concurrency: false }, () => {
  let k: KubeStack;
  let second: Sandbox;
  const agentLogs = captureLogs();
  const call = (path: string, token?: string, headers: Record<string, string> = {}) =>
    httpsRequest(`${k.stack.gateway.httpUrl}${path}`, {
      ca: k.pki.caPem,
      headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    });
  /** Paths the agent was asked for. */
  const agentSaw = () =>
    agentLogs
      .lines()
      .filter((l) => l.msg === 'Kubernetes API request')
      .map((l) => String(l.path));

  before(async () => {
    second = await startSandbox({ seed: 'demo', tls: true });
    const dir = (await import('node:fs')).mkdtempSync(join((await import('node:os')).tmpdir(), 'outpost-second-'));
    const kubeconfigFile = join(dir, 'kubeconfig');
    await second.writeKubeconfig(kubeconfigFile);
    k = await startKubeStack({
      gateway: { kube: { maxConcurrentPerIdentity: 2, maxConcurrentPerAccount: 3, requestTimeoutSeconds: 120 } },
      agentLogger: createLogger({ level: 'debug', destination: agentLogs.stream }),
      extraAccounts: [{ name: 'second', kubeconfigFile }],
    });
    await eventually('account second ACTIVE', async () => {
      const account = JSON.parse((await call('/armory/accounts/second')).body) as { state?: string };
      return account.state === 'ACTIVE' || undefined;
    });
  });
  after(async () => {
    await k?.close();
    await second?.close();
  });

  test('refusals come before the agent, as Kubernetes Status objects', async () => {
    const cases: Array<{ path: string; token?: string; status: number; message: RegExp; headers?: Record<string, string> }> = [
      { path: '/k8s/sandbox/api/v1/namespaces/no-token/pods', status: 401, message: /authentication required|credentials/i },
      { path: '/k8s/sandbox/api/v1/namespaces/bob/pods', token: TOKENS.bob, status: 403, message: /lacks the role "kube"/ },
      { path: '/k8s/sandbox/api/v1/namespaces/carol/pods', token: TOKENS.carol, status: 403, message: /may not reach account "sandbox"/ },
      { path: '/k8s/Not_An_Account/api', token: TOKENS.alice, status: 400, message: /not an account name/ },
      { path: '/k8s/sandbox//api/v1/namespaces/double/pods', token: TOKENS.alice, status: 400, message: /single "\/"/ },
      { path: '/k8s/sandbox/api/v1/namespaces/dots/../../../../armory', token: TOKENS.alice, status: 400, message: /"\.\." segment/ },
      { path: '/k8s/sandbox/api/v1/namespaces/dots/%2E%2e/x', token: TOKENS.alice, status: 400, message: /"\.\." segment/ },
      { path: '/k8s/missing/api/v1/namespaces/missing/pods', token: TOKENS.carol, status: 403, message: /may not reach account "missing"/ },
      {
        // Only a replica may name the caller: anyone else sending the header is refused, whatever it names.
        path: '/k8s/sandbox/api/v1/namespaces/forged/pods',
        token: TOKENS.alice,
        status: 403,
        message: /lacks the role "replica"/,
        headers: {
          'x-outpost-kube-caller': Buffer.from(JSON.stringify({ principal: 'x', user: 'sandbox-admin', groups: [] })).toString('base64url'),
        },
      },
    ];
    for (const c of cases) {
      const answer = await call(c.path, c.token, c.headers);
      assert.equal(answer.status, c.status, `${c.path}: ${answer.body}`);
      const status = JSON.parse(answer.body) as { kind: string; code: number; message: string; status: string };
      assert.equal(status.kind, 'Status');
      assert.equal(status.status, 'Failure');
      assert.equal(status.code, c.status);
      assert.match(status.message, c.message);
    }
    // No agent serves it: 503, still a Status.
    const unserved = await call('/k8s/nobody/api', TOKENS.alice.replace('alice', 'alice'));
    assert.equal(unserved.status, 403, 'alice may reach sandbox and second only');
    const seen = agentSaw();
    for (const name of ['no-token', 'bob', 'carol', 'double', 'dots', 'missing', 'forged']) {
      assert.ok(!seen.some((p) => p.includes(`/namespaces/${name}/`)), `the agent never saw the ${name} request: ${seen.join(' ')}`);
    }
    // Refusals after authentication are audited with who asked; unauthenticated ones are not.
    const bob = await eventually('bob is audited', async () => {
      const events = await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, 'token:bob');
      return events.length > 0 ? events : undefined;
    });
    assert.equal(bob[0]!.status, 403);
    assert.match(String(bob[0]!.error), /lacks the role "kube"/);
    const carol = await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, 'token:carol');
    assert.ok(carol.some((e) => e.account === 'sandbox' && e.status === 403 && e.namespace === 'carol'));
    // Counted: refused at admission, and served here (an earlier request of this suite's set-up reached the agent).
    assert.equal((await call('/k8s/sandbox/version', TOKENS.alice)).status, 200);
    // A request is counted when it ends on the gateway's side, which may be a moment after the caller read the answer.
    const metrics = await eventually('the served request is counted', async () => {
      const body = (await call('/metrics', TOKENS.alice)).body;
      return /outpost_gateway_kube_requests_total\{via="local",code="200"\} [1-9]/.test(body) ? body : undefined;
    });
    assert.match(metrics, /outpost_gateway_kube_requests_total\{via="refused",code="403"\} [1-9]/);
    assert.match(metrics, /outpost_gateway_kube_requests_open 0/);
  });

  test('SPDY upgrades are refused before the agent with what to use instead', async () => {
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = https.request(`${k.stack.gateway.httpUrl}/k8s/sandbox/api/v1/namespaces/spdy/pods/x/exec?command=ls`, {
        method: 'POST',
        ca: k.pki.caPem,
        headers: { authorization: `Bearer ${TOKENS.alice}`, connection: 'Upgrade', upgrade: 'SPDY/3.1' },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('upgrade', () => reject(new Error('upgraded')));
      req.on('error', reject);
      req.end();
    });
    assert.equal(answer.status, 400);
    assert.match(JSON.parse(answer.body).message, /over WebSocket only.*kubectl 1\.30 or later/);
    assert.ok(!agentSaw().some((p) => p.includes('/namespaces/spdy/')));
  });

  test("a caller's own impersonation headers are dropped: the cluster sees the mapped identity only", async () => {
    const answer = await call('/k8s/sandbox/api/v1/namespaces/demo/serviceaccounts', TOKENS.alice, {
      'impersonate-user': 'sandbox-admin',
      'impersonate-group': 'system:masters',
    });
    assert.equal(answer.status, 403, answer.body);
    assert.match(JSON.parse(answer.body).message, /User "outpost:alice" cannot list resource "serviceaccounts"/);
  });

  test('per-identity and per-account concurrency limits answer 429 with Retry-After', async () => {
    const client = http2.connect(k.stack.gateway.httpUrl, { ca: k.pki.caPem });
    const open: http2.ClientHttp2Stream[] = [];
    const watch = (token: string) =>
      new Promise<{ status: number; stream: http2.ClientHttp2Stream; headers: http2.IncomingHttpHeaders }>((resolve, reject) => {
        const stream = client.request({
          ':path': '/k8s/sandbox/api/v1/namespaces/demo/configmaps?watch=1',
          authorization: `Bearer ${token}`,
        });
        stream.on('response', (headers) => resolve({ status: Number(headers[':status']), stream, headers }));
        stream.on('error', reject);
        open.push(stream);
      });
    try {
      assert.equal((await watch(TOKENS.alice)).status, 200);
      assert.equal((await watch(TOKENS.alice)).status, 200);
      const third = await watch(TOKENS.alice);
      assert.equal(third.status, 429, 'alice has 2 open (kube.maxConcurrentPerIdentity 2)');
      assert.equal(third.headers['retry-after'], '1');
      assert.equal((await watch(TOKENS.dave)).status, 200, 'another identity still gets a slot');
      assert.equal((await watch(TOKENS.dave)).status, 429, 'the account has 3 open (kube.maxConcurrentPerAccount 3)');
      // A closed watch gives its slot back.
      open[0]!.close(http2.constants.NGHTTP2_CANCEL);
      await eventually('a slot is free again', async () => ((await watch(TOKENS.dave)).status === 200 ? true : undefined));
    } finally {
      for (const s of open) s.close(http2.constants.NGHTTP2_CANCEL);
      client.close();
    }
    await eventually('every slot is given back', async () =>
      (await call('/k8s/sandbox/version', TOKENS.alice)).status === 200 ? true : undefined,
    );
  });

  test('a cluster that does not answer gets a 504 at the deadline, and the other account is served meanwhile', async () => {
    second.faults.pause();
    try {
      const slow = call('/k8s/second/api/v1/namespaces/demo/configmaps?timeout=2s', TOKENS.alice);
      const other = await call('/k8s/sandbox/api/v1/namespaces/demo/configmaps', TOKENS.alice);
      assert.equal(other.status, 200, other.body);
      const answer = await slow;
      assert.equal(answer.status, 504, answer.body);
      assert.match(JSON.parse(answer.body).message, /did not answer within 2 s/);
    } finally {
      second.faults.resume();
    }
  });

  test('a caller that stops reading holds only its own request: other requests and cache traffic flow, and it gets every byte later', async () => {
    const names: string[] = [];
    for (let i = 0; i < 40; i++) names.push(`big-${i}`);
    // Straight into the sandbox's store: no kubectl process, no 40 API calls.
    for (const name of names) {
      k.stack.sandbox.store.create({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'demo' },
        data: { blob: 'x'.repeat(20_000) },
      });
    }
    const client = http2.connect(k.stack.gateway.httpUrl, { ca: k.pki.caPem });
    try {
      const stream = client.request({ ':path': '/k8s/sandbox/api/v1/namespaces/demo/configmaps', authorization: `Bearer ${TOKENS.alice}` });
      const headers = await new Promise<http2.IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
      assert.equal(headers[':status'], 200);
      stream.pause(); // reads nothing more: the answer (about 800 KB) waits in the agent and the cluster
      // Other requests of the same caller, account and stream are answered.
      const other = await call('/k8s/sandbox/api/v1/namespaces/demo/pods', TOKENS.alice);
      assert.equal(other.status, 200);
      // The account's cache traffic goes on: a change made now reaches the gateway's cache.
      k.stack.sandbox.store.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'while-paused', namespace: 'demo' } });
      await eventually('the change reached the cache', async () => {
        const res = await call('/armory/accounts/sandbox', TOKENS.alice);
        const found = await k.stack.gateway.database.db.execute(
          (await import('drizzle-orm')).sql`select 1 from objects where account = 'sandbox' and name = 'while-paused'`,
        );
        const rows = (found as { rows?: unknown[] }).rows ?? (found as unknown as unknown[]);
        return res.status === 200 && rows.length > 0 ? true : undefined;
      });
      // Reading again, every byte arrives.
      const body = await new Promise<string>((resolve, reject) => {
        let text = '';
        stream.setEncoding('utf8');
        stream.on('data', (c: string) => (text += c));
        stream.on('end', () => resolve(text));
        stream.on('error', reject);
        stream.resume();
      });
      const list = JSON.parse(body) as { items: { metadata: { name: string } }[] };
      for (const n of names)
        assert.ok(
          list.items.some((i) => i.metadata.name === n),
          `${n} in the list`,
        );
    } finally {
      client.close();
      for (const name of [...names, 'while-paused']) k.stack.sandbox.store.remove('v1', 'ConfigMap', 'demo', name);
    }
  });

  test('hostile paths, methods and headers: always a well-formed answer, nothing crashes, the agent still serves', async () => {
    const rng = createRng(seedFrom('kubectl hostile'));
    const pieces = [
      'api',
      'v1',
      'apis',
      'namespaces',
      'demo',
      'pods',
      '..',
      '.',
      '%2e',
      '%00',
      '%ff',
      '%',
      '//',
      '?',
      '&',
      '=',
      'watch=1',
      '\u00e9',
      'x'.repeat(300),
    ];
    // (CONNECT is no Kubernetes method: Node's server closes such a connection before any handler.)
    const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE'];
    let hungUp = 0;
    for (let i = 0; i < 150; i++) {
      const parts = Array.from({ length: rng.int(0, 6) }, () => pieces[rng.int(0, pieces.length - 1)]!);
      const path = `/k8s/${rng.chance(0.8) ? 'sandbox' : pieces[rng.int(0, pieces.length - 1)]}/${parts.join(rng.chance(0.5) ? '/' : '')}`;
      const method = methods[rng.int(0, methods.length - 1)]!;
      const headers: Record<string, string> = { authorization: `Bearer ${rng.chance(0.8) ? TOKENS.alice : 'garbage'}` };
      if (rng.chance(0.3)) headers['content-type'] = 'application/json';
      if (rng.chance(0.2)) headers.upgrade = 'websocket';
      // A body always with its length: Node's client sends one unframed for DELETE, OPTIONS and TRACE otherwise.
      const body = method === 'GET' || method === 'HEAD' || rng.chance(0.5) ? undefined : '{"kind":';
      if (body !== undefined) headers['content-length'] = String(body.length);
      let answer: Awaited<ReturnType<typeof httpsRequest>>;
      try {
        answer = await httpsRequest(`${k.stack.gateway.httpUrl}${encodeURI(path).replaceAll('%25', '%')}`, {
          ca: k.pki.caPem,
          method,
          headers,
          body,
        });
      } catch (err) {
        // Node itself refuses some of these before sending (an invalid path or method); and the gateway closes a
        // connection that keeps being refused (limits.maxRefusedRequestsPerConnection): a kept-alive one then hangs up.
        assert.match(
          String((err as Error).message),
          /invalid|Request path|unescaped|method|socket hang up|ECONNRESET/i,
          `${method} ${path}`,
        );
        hungUp += /hang up|ECONNRESET/.test(String((err as Error).message)) ? 1 : 0;
        continue;
      }
      assert.ok(answer.status >= 200 && answer.status < 600, `${method} ${path}: ${answer.status}`);
      if (answer.status >= 400 && method !== 'HEAD' && answer.body !== '') {
        const parsed = JSON.parse(answer.body) as { kind?: string };
        assert.equal(parsed.kind, 'Status', `${method} ${path}: ${answer.body.slice(0, 200)}`);
      }
    }
    assert.ok(hungUp < 30, `${hungUp} of 150 hung up`);
    // Answered before its body was read (the agent refuses TRACE): the connection closes, or the unread body would be
    // parsed as the next request on it.
    const early = await httpsRequest(`${k.stack.gateway.httpUrl}/k8s/sandbox/api`, {
      ca: k.pki.caPem,
      method: 'TRACE',
      headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-length': '8', connection: 'keep-alive' },
      body: '{"kind":',
    });
    assert.equal(early.status, 403);
    assert.equal(early.headers.connection, 'close');
    assert.equal((await call('/k8s/sandbox/api/v1/namespaces/demo/configmaps', TOKENS.alice)).status, 200);
    assert.equal((await call('/health')).status, 200);
  });
});
