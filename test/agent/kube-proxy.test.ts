/**
 * The agent's side of kubectl through the gateway, against a real sandbox (no gateway: KubeRequest parts in,
 * KubeResponse parts out): the caller is impersonated — or the account's static identity — so the cluster's RBAC
 * decides; refusals (unknown account, proxy disabled, bad method or path, no caller, too many requests) are answered
 * with an `end` and reach no cluster; a cancel ends the watch in the cluster; a gateway sending more than it was
 * granted is cut off.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { KubeRequestSchema, type KubeRequest, type KubeResponse } from '../../src/gen/outpost/agent/v1/kube_pb.js';
import { createAccountRuntime, unpreparedAccount } from '../../src/agent/accounts/account-runtime.js';
import { accountSchema } from '../../src/agent/config/schema.js';
import { createKubeClient } from '../../src/agent/kube/kube-client.js';
import { createKubeProxy, type KubeProxy } from '../../src/agent/kube-proxy/kube-proxy.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { eventually } from '../../testkit/eventually.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ seed: 'demo' });
});
after(async () => {
  await sandbox?.close();
});

function account(name: string, kubeProxy: unknown = {}) {
  const config = accountSchema.parse({ name, kubeconfigFile: '/unused', kubeProxy });
  const runtime = createAccountRuntime({ ...unpreparedAccount(config), client: createKubeClient(sandbox.kubeConfig()) }, 'file');
  return runtime;
}

function proxyWith(accounts: ReturnType<typeof account>[], maxRequests?: number) {
  const out: KubeResponse[] = [];
  const proxy = createKubeProxy({
    account: (name) => accounts.find((a) => a.prepared.config.name === name),
    send: (r) => out.push(r),
    logger: createSilentLogger(),
    maxRequests,
  });
  return { proxy, out };
}

function head(proxy: KubeProxy, id: bigint, fields: { account?: string; method?: string; path: string; user?: string; groups?: string[] }) {
  const request: KubeRequest = create(KubeRequestSchema, {
    id,
    part: {
      case: 'head',
      value: {
        account: fields.account ?? 'sandbox',
        method: fields.method ?? 'GET',
        path: fields.path,
        headers: [{ name: 'accept', value: 'application/json' }],
        caller: { principal: 'token:alice', user: fields.user ?? 'outpost:alice', groups: fields.groups ?? [] },
        window: 1 << 20,
      },
    },
  });
  proxy.received(request);
  proxy.received(create(KubeRequestSchema, { id, part: { case: 'end', value: {} } }));
}

/** The answer of one id once it ended: status, body text, end error and code. */
async function answerOf(out: KubeResponse[], id: bigint) {
  const parts = await eventually(`the answer of ${id}`, () => {
    const mine = out.filter((r) => r.id === id);
    return mine.some((r) => r.part.case === 'end') ? mine : undefined;
  });
  const headPart = parts.find((r) => r.part.case === 'head')?.part;
  const end = parts.find((r) => r.part.case === 'end')?.part;
  const body = Buffer.concat(parts.flatMap((r) => (r.part.case === 'body' ? [Buffer.from(r.part.value)] : []))).toString('utf8');
  return {
    status: headPart?.case === 'head' ? headPart.value.status : 0,
    user: headPart?.case === 'head' ? headPart.value.impersonatedUser : '',
    body,
    error: end?.case === 'end' ? end.value.error : '',
    code: end?.case === 'end' ? end.value.code : '',
  };
}

test('the caller is impersonated: the cluster answers as it would to that user', async () => {
  const { proxy, out } = proxyWith([account('sandbox')]);
  head(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps' });
  const denied = await answerOf(out, 1n);
  assert.equal(denied.status, 403);
  assert.equal(denied.user, 'outpost:alice');
  assert.match(denied.body, /User \\"outpost:alice\\" cannot list resource \\"configmaps\\"/);
  head(proxy, 2n, { path: '/version' });
  assert.equal((await answerOf(out, 2n)).status, 200, 'what every authenticated user may do');
});

test('a static identity replaces the caller', async () => {
  const { proxy, out } = proxyWith([account('sandbox', { identity: 'static', user: 'ops-bot', groups: ['system:masters'] })]);
  head(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps' });
  const answer = await answerOf(out, 1n);
  assert.equal(answer.status, 200, 'the static identity is in system:masters');
  assert.equal(answer.user, 'ops-bot');
});

test('refusals answer with an end and reach no cluster', async () => {
  const { proxy, out } = proxyWith([account('sandbox'), account('off', { enabled: false })]);
  head(proxy, 1n, { account: 'elsewhere', path: '/version' });
  head(proxy, 2n, { account: 'off', path: '/version' });
  head(proxy, 3n, { method: 'TRACE', path: '/version' });
  head(proxy, 4n, { path: '//evil/version' });
  head(proxy, 8n, { path: '/api/%2e%2E/../version' });
  head(proxy, 5n, { path: '/version', user: '' });
  proxy.received(
    create(KubeRequestSchema, {
      id: 6n,
      part: {
        case: 'head',
        value: {
          account: 'sandbox',
          method: 'GET',
          path: '/version',
          // An allowed header (src/shared/kube-headers.ts) whose value would split the request.
          headers: [{ name: 'accept', value: 'a\r\nimpersonate-user: sandbox-admin' }],
          caller: { user: 'outpost:alice' },
        },
      },
    }),
  );
  const expected: Array<[bigint, RegExp]> = [
    [1n, /not served by this agent/],
    [2n, /disabled for account "off"/],
    [3n, /method "TRACE" is not proxied/],
    [4n, /single "\/"/],
    [5n, /names no caller/],
    [6n, /cannot be sent/],
    [8n, /"\.\." segment/],
  ];
  for (const [id, message] of expected) {
    const answer = await answerOf(out, id);
    assert.equal(answer.status, 0, 'no head: nothing reached the cluster');
    assert.equal(answer.code, 'refused');
    assert.match(answer.error, message);
  }
});

test('a cancel ends the watch in the cluster; too many requests are refused', async () => {
  const { proxy, out } = proxyWith([account('sandbox', { identity: 'static', user: 'w', groups: ['system:masters'] })], 1);
  const before = sandbox.openWatches();
  head(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps?watch=1' });
  await eventually('the watch is open', () => (sandbox.openWatches() > before ? true : undefined));
  head(proxy, 2n, { path: '/version' });
  const refused = await answerOf(out, 2n);
  assert.match(refused.error, /already runs 1 Kubernetes API requests/);
  proxy.received(create(KubeRequestSchema, { id: 1n, part: { case: 'cancel', value: { reason: 'test' } } }));
  await eventually('the watch ended in the sandbox', () => (sandbox.openWatches() === before ? true : undefined));
  assert.equal(proxy.active(), 0);
});

test('a gateway that sends more body than granted is cut off', async () => {
  const { proxy, out } = proxyWith([account('sandbox')]);
  proxy.received(
    create(KubeRequestSchema, {
      id: 7n,
      part: {
        case: 'head',
        value: {
          account: 'sandbox',
          method: 'POST',
          path: '/api/v1/namespaces/demo/configmaps',
          caller: { user: 'outpost:alice' },
          window: 1024,
        },
      },
    }),
  );
  proxy.received(create(KubeRequestSchema, { id: 7n, part: { case: 'body', value: new Uint8Array(300 * 1024) } }));
  const answer = await answerOf(out, 7n);
  assert.match(answer.error, /more body bytes than granted/);
  assert.equal(proxy.active(), 0);
});
