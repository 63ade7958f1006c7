/**
 * `/k8s` in secure mode with two replicas on one Postgres (TLS, tokens, the replica secret), the agent on gw-1 serving
 * `sandbox` directly and `second` — another sandbox — through a Rancher-style path prefix behind a recording reverse
 * proxy (testkit/prefix-proxy.ts):
 * - a path another parser would read differently (a backslash, encoded separators or dots) is refused with a 400 Status
 *   before anything is forwarded or sent: no reaching the Connect API or another account through a forward, no
 *   leaving the cluster's path prefix;
 * - a forwarded request is admitted again on the replica holding the stream, with ITS rules, account rule and identity
 *   mapping, from the caller's principal the forward describes — also when the forwarding replica let it through, and
 *   when a replica token forges the description;
 * - caller headers reach the cluster through the allow-list only, served locally or forwarded, upgrades included, and
 *   kubectl still works against the prefixed cluster.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { createReplicaTokenSigner } from '../../src/gateway/auth/replica-token.js';
import type { RunningGateway } from '../../src/gateway/index.js';
import { renderKubeconfig } from '../../src/sandbox/kubeconfig.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { KUBE_REQUEST_HEADERS } from '../../src/shared/kube-headers.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startPrefixProxy, type PrefixProxy } from '../../testkit/prefix-proxy.js';
import { createKubectl } from '../../testkit/kubectl-runner.js';
import { createRunningPod } from '../sandbox/stream-fixtures.js';
import {
  ALICE_RBAC,
  auditEvents,
  gatewayKubectl,
  httpsRequest,
  KUBECTLS,
  secureGateway,
  startKubeStack,
  TOKENS,
  type KubeStack,
  startKubeReplica,
} from './kubectl-helpers.js';

const pg = testDrivers().includes('postgres');
const newest = KUBECTLS.at(-1);
const REPLICAS = { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 10 };

/** Headers a caller must never get to the cluster. */
const HOSTILE = {
  'x-remote-user': 'system:admin',
  'x-remote-group': 'system:masters',
  'x-remote-extra-scopes': 'everything',
  'impersonate-user': 'sandbox-admin',
  'impersonate-group': 'system:masters',
  cookie: 'session=1',
  'x-forwarded-for': '10.0.0.1',
  'audit-id': 'forged',
  'x-anything-new': '1',
};
/** Headers the agent itself sets (or Node adds) on its way to the cluster. */
const AGENT_HEADERS = new Set(['authorization', 'impersonate-user', 'impersonate-group', 'host', 'connection', 'upgrade']);

describe('/k8s admission across two replicas (postgres)', {
  skip: !pg ? 'needs OUTPOST_TEST_POSTGRES' : !newest?.websocket ? 'needs kubectl 1.33' : false,
  concurrency: false,
}, () => {
  let dir: string;
  let second: Sandbox;
  let prefixed: PrefixProxy;
  let k: KubeStack;
  let gw2: RunningGateway;
  const to = (
    gateway: RunningGateway,
    path: string,
    token: string,
    extra: { method?: string; headers?: Record<string, string>; body?: string } = {},
  ) =>
    httpsRequest(`${gateway.httpUrl}${path}`, {
      ca: k.pki.caPem,
      method: extra.method,
      headers: { authorization: `Bearer ${token}`, ...extra.headers },
      body: extra.body,
    });
  const statusOf = (body: string) => JSON.parse(body) as { kind: string; code: number; message: string };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-prefixed-'));
    second = await startSandbox({ seed: 'demo', tls: true });
    createRunningPod(second, 'demo', 'shell');
    prefixed = await startPrefixProxy({ target: second.url, caPem: second.caPem });
    const kubeconfigFile = join(dir, 'second.kubeconfig');
    writeFileSync(
      kubeconfigFile,
      renderKubeconfig({ server: prefixed.server, users: [{ name: 'admin', token: second.adminToken }], currentUser: 'admin' }),
    );
    k = await startKubeStack({
      driver: 'postgres',
      gateway: { replicas: REPLICAS },
      extraAccounts: [{ name: 'second', kubeconfigFile, kinds: ['Namespace'] }],
    });
    const secondAdmin = await createKubectl(newest!.bin, second);
    try {
      await secondAdmin.ok(['apply', '-f', '-'], { input: ALICE_RBAC });
    } finally {
      secondAdmin.cleanup();
    }
    // gw-2 lets dave reach `second` and prefixes users `gw2:`; gw-1, which holds the stream, does neither.
    const base = secureGateway(k.pki, k.stack.dir);
    const rules = base.authorization!.rules!.map((rule) =>
      'subject' in rule && rule.subject === '^dave$' ? { ...rule, accounts: ['sandbox', 'second'] } : rule,
    );
    gw2 = await startKubeReplica(k, 'gw-2', {
      authorization: { rules },
      kube: { userPrefix: 'gw2:', groupsPrefix: 'gw2:' },
      replicas: REPLICAS,
    });
    await eventually('both accounts ACTIVE and both replicas known', async () => {
      const accounts = await Promise.all(
        ['sandbox', 'second'].map(
          async (name) => JSON.parse((await to(k.stack.gateway, `/armory/accounts/${name}`, TOKENS.alice)).body).state,
        ),
      );
      const replicas = JSON.parse((await to(gw2, '/armory/clouddrivers', TOKENS.alice)).body) as unknown[];
      return (accounts.every((s) => s === 'ACTIVE') && replicas.length === 2) || undefined;
    });
    // The forward works at all: gw-2 passes alice's request to gw-1.
    await eventually(
      'a forwarded request is served',
      async () => (await to(gw2, '/k8s/sandbox/version', TOKENS.alice)).status === 200 || undefined,
    );
  });
  after(async () => {
    await gw2?.close();
    await k?.close();
    await prefixed?.close();
    await second?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('paths another parser reads differently are refused with a 400 Status, forwarded or not, before anything is sent', async () => {
    const escapes = [
      // Through a forward, re-resolved, these reached gw-1's Connect API with the replica's token …
      { path: '/k8s/sandbox/x\\..\\..\\..\\outpost.api.v1.ObjectService\\ListObjects', method: 'POST', body: '{}' },
      { path: '/k8s/sandbox/x%5c..%5c..%5c..%5coutpost.api.v1.ObjectService%5cListObjects', method: 'POST', body: '{}' },
      // … or another account's cluster, audited as `sandbox`.
      { path: '/k8s/sandbox/x\\..\\..\\second\\api\\v1\\namespaces\\demo\\configmaps?marker=escape-1' },
      { path: '/k8s/sandbox/x%2f..%2f..%2fsecond%2fapi%2fv1%2fnamespaces?marker=escape-2' },
      { path: '/k8s/sandbox/x/%2e%2e/%2e%2e/second/api/v1/namespaces?marker=escape-3' },
      // Below the prefixed cluster, re-resolved by the agent, this left /k8s/clusters/c1.
      { path: '/k8s/second/api\\..\\..\\..\\v3\\x?marker=escape-4' },
      { path: '/k8s/second/api/v1/namespaces/demo/configmaps/x%00?marker=escape-5' },
    ];
    for (const gateway of [gw2, k.stack.gateway]) {
      for (const e of escapes) {
        const answer = await to(gateway, e.path, TOKENS.alice, {
          method: e.method,
          body: e.body,
          headers: e.body ? { 'content-type': 'application/json' } : {},
        });
        assert.equal(answer.status, 400, `${gateway.id} ${e.path}: ${answer.body.slice(0, 300)}`);
        const status = statusOf(answer.body);
        assert.equal(status.kind, 'Status');
        assert.equal(status.code, 400);
      }
    }
    assert.ok(!prefixed.requests().some((r) => r.target.includes('marker=escape')), 'no escape reached the prefixed cluster');
  });

  test("a forward is admitted again by the replica holding the stream, with that replica's rules and mapping", async () => {
    // gw-2's rules let dave reach `second`; gw-1's do not, and gw-1 decides.
    const dave = await to(gw2, '/k8s/second/api/v1/namespaces/demo/configmaps?marker=dave', TOKENS.dave);
    assert.equal(dave.status, 403, dave.body);
    assert.match(statusOf(dave.body).message, /dave may not reach account "second"/);
    assert.ok(!prefixed.requests().some((r) => r.target.includes('marker=dave')));
    const audited = await eventually('the forwarding replica audits the refusal', async () => {
      const events = await auditEvents(gw2.httpUrl, k.pki.caPem, 'token:dave');
      return events.find((e) => e.account === 'second') ?? undefined;
    });
    assert.equal(audited.status, 403);
    // gw-1 maps the identity with its own prefixes, not gw-2's `gw2:`.
    const alice = await to(gw2, '/k8s/sandbox/api/v1/namespaces/demo/serviceaccounts', TOKENS.alice);
    assert.equal(alice.status, 403, alice.body);
    assert.match(statusOf(alice.body).message, /User "outpost:alice" cannot list resource "serviceaccounts"/);

    // A replica token may describe a caller, never grant it anything: gw-1 re-derives every right.
    const signer = createReplicaTokenSigner(join(k.stack.dir, 'replica-secret'), 'gw-forger');
    const describe = (caller: unknown) => Buffer.from(JSON.stringify(caller)).toString('base64url');
    const forged: Array<{ caller: unknown; status: number; message: RegExp }> = [
      { caller: { method: 'token', subject: 'carol', groups: [] }, status: 403, message: /carol may not reach account "sandbox"/ },
      { caller: { method: 'token', subject: 'bob', groups: [] }, status: 403, message: /bob lacks the role "kube"/ },
      { caller: { method: 'insecure', subject: 'anonymous', groups: [] }, status: 403, message: /lacks the role "kube"/ },
      {
        caller: { method: 'token', subject: 'alice', groups: [' system:masters'] },
        status: 403,
        message: /starts or ends with whitespace/,
      },
      // The earlier form named the Kubernetes identity itself: not accepted any more.
      { caller: { principal: 'token:alice', user: 'sandbox-admin', groups: ['system:masters'] }, status: 400, message: /malformed/ },
    ];
    for (const f of forged) {
      const answer = await to(k.stack.gateway, '/k8s/sandbox/api/v1/namespaces/kube-system/secrets?marker=forged', await signer.token(), {
        headers: { 'x-outpost-kube-caller': describe(f.caller) },
      });
      assert.equal(answer.status, f.status, `${JSON.stringify(f.caller)}: ${answer.body}`);
      assert.match(statusOf(answer.body).message, f.message);
    }
    const honest = await to(k.stack.gateway, '/k8s/sandbox/api/v1/namespaces/demo/pods', await signer.token(), {
      headers: { 'x-outpost-kube-caller': describe({ method: 'token', subject: 'alice', groups: ['devs'] }) },
    });
    assert.equal(honest.status, 200, `a described caller with the rights is served: ${honest.body.slice(0, 200)}`);
  });

  test('caller headers reach the cluster through the allow-list only, served here or forwarded, upgrades included', async () => {
    for (const [gateway, marker] of [
      [k.stack.gateway, 'local'],
      [gw2, 'forwarded'],
    ] as const) {
      const answer = await to(gateway, `/k8s/second/api/v1/namespaces/demo/configmaps?marker=${marker}`, TOKENS.alice, {
        headers: { accept: 'application/json', 'user-agent': 'kubectl/v1.33.0', 'kubectl-command': 'kubectl get', ...HOSTILE },
      });
      assert.equal(answer.status, 200, answer.body.slice(0, 300));
      const sent = prefixed.requests().filter((r) => r.target.includes(`marker=${marker}`));
      assert.equal(sent.length, 1);
      for (const name of Object.keys(sent[0]!.headers)) {
        assert.ok(KUBE_REQUEST_HEADERS.has(name) || AGENT_HEADERS.has(name), `${marker}: ${name} reached the cluster`);
      }
      assert.deepEqual(sent[0]!.headers['impersonate-user'], ['outpost:alice']);
      assert.deepEqual(sent[0]!.headers['kubectl-command'], ['kubectl get']);
    }
    // An exec WebSocket through the forward: the handshake passes, the rest is dropped.
    const url = `${gw2.httpUrl.replace(/^https/, 'wss')}/k8s/second/api/v1/namespaces/demo/pods/shell/exec?command=echo&command=marker-ws&stdout=true`;
    const output = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(url, ['v5.channel.k8s.io'], {
        ca: k.pki.caPem,
        headers: { authorization: `Bearer ${TOKENS.alice}`, ...HOSTILE },
      });
      let out = '';
      ws.on('message', (data: Buffer) => {
        if (data[0] === 1) out += data.subarray(1).toString();
      });
      ws.on('close', () => resolve(out));
      ws.on('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
      ws.on('error', reject);
    });
    assert.equal(output.trim(), 'marker-ws');
    const upgrade = prefixed.requests().find((r) => r.target.includes('marker-ws'));
    assert.ok(upgrade?.upgrade);
    for (const name of Object.keys(upgrade!.headers)) {
      assert.ok(KUBE_REQUEST_HEADERS.has(name) || AGENT_HEADERS.has(name), `upgrade: ${name} reached the cluster`);
    }
    assert.deepEqual(upgrade!.headers['sec-websocket-protocol'], ['v5.channel.k8s.io']);
  });

  test('kubectl works against the prefixed cluster through the forward, and nothing was ever requested outside its prefix', async () => {
    const kubectl = await gatewayKubectl(newest!.bin, gw2.httpUrl, k.pki.caFile, TOKENS.alice, 'second');
    try {
      assert.match(await kubectl.ok(['get', 'pods', '-n', 'demo']), /shell/);
      assert.equal((await kubectl.ok(['exec', '-n', 'demo', 'shell', '--', 'echo', 'below', 'the', 'prefix'])).trim(), 'below the prefix');
    } finally {
      kubectl.cleanup();
    }
    assert.ok(prefixed.requests().length > 0);
    assert.deepEqual(
      prefixed.outside().map((r) => r.target),
      [],
    );
  });
});
