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
import { KubeRequestSchema } from '../../src/gen/outpost/agent/v1/kube_pb.js';
import type { KubeProxy } from '../../src/agent/kube-proxy/kube-proxy.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { eventually } from '../../testkit/eventually.js';
import { answerOf, cancel, type HeadInit, kubeEnd, kubeHead, proxyAccount, proxyFor } from './kube-proxy-driver.js';

let sandbox: Sandbox;
before(async () => {
  sandbox = await startSandbox({ seed: 'demo' });
});
after(async () => {
  await sandbox?.close();
});

const account = (name: string, kubeProxy: unknown = {}) => proxyAccount(name, sandbox.kubeConfig(), kubeProxy);

/** A request without a body: its head, then its end. */
function ask(proxy: KubeProxy, id: bigint, head: HeadInit): void {
  proxy.received(kubeHead(id, head));
  proxy.received(kubeEnd(id));
}

test('the caller is impersonated: the cluster answers as it would to that user', async () => {
  const { proxy, out } = proxyFor([account('sandbox')]);
  ask(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps' });
  const denied = await answerOf(out, 1n);
  assert.equal(denied.status, 403);
  assert.equal(denied.user, 'outpost:alice');
  assert.match(denied.body, /User \\"outpost:alice\\" cannot list resource \\"configmaps\\"/);
  ask(proxy, 2n, { path: '/version' });
  assert.equal((await answerOf(out, 2n)).status, 200, 'what every authenticated user may do');
});

test('a static identity replaces the caller', async () => {
  const { proxy, out } = proxyFor([account('sandbox', { identity: 'static', user: 'ops-bot', groups: ['system:masters'] })]);
  ask(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps' });
  const answer = await answerOf(out, 1n);
  assert.equal(answer.status, 200, 'the static identity is in system:masters');
  assert.equal(answer.user, 'ops-bot');
});

test('refusals answer with an end and reach no cluster', async () => {
  const { proxy, out } = proxyFor([account('sandbox'), account('off', { enabled: false })]);
  ask(proxy, 1n, { account: 'elsewhere', path: '/version' });
  ask(proxy, 2n, { account: 'off', path: '/version' });
  ask(proxy, 3n, { method: 'TRACE', path: '/version' });
  ask(proxy, 4n, { path: '//evil/version' });
  ask(proxy, 8n, { path: '/api/%2e%2E/../version' });
  ask(proxy, 5n, { path: '/version', caller: { user: '' } });
  // An allowed header (src/shared/kube-headers.ts) whose value would split the request.
  proxy.received(kubeHead(6n, { path: '/version', headers: [{ name: 'accept', value: 'a\r\nimpersonate-user: sandbox-admin' }] }));
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
  const { proxy, out } = proxyFor([account('sandbox', { identity: 'static', user: 'w', groups: ['system:masters'] })], 1);
  const before = sandbox.openWatches();
  ask(proxy, 1n, { path: '/api/v1/namespaces/demo/configmaps?watch=1' });
  await eventually('the watch is open', () => (sandbox.openWatches() > before ? true : undefined));
  ask(proxy, 2n, { path: '/version' });
  const refused = await answerOf(out, 2n);
  assert.match(refused.error, /already runs 1 Kubernetes API requests/);
  cancel(proxy, 1n);
  await eventually('the watch ended in the sandbox', () => (sandbox.openWatches() === before ? true : undefined));
  assert.equal(proxy.active(), 0);
});

test('a gateway that sends more body than granted is cut off', async () => {
  const { proxy, out } = proxyFor([account('sandbox')]);
  proxy.received(kubeHead(7n, { method: 'POST', path: '/api/v1/namespaces/demo/configmaps', window: 1024 }));
  proxy.received(create(KubeRequestSchema, { id: 7n, part: { case: 'body', value: new Uint8Array(300 * 1024) } }));
  const answer = await answerOf(out, 7n);
  assert.match(answer.error, /more body bytes than granted/);
  assert.equal(proxy.active(), 0);
});
