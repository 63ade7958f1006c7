/**
 * What the agent's Kubernetes API proxy sends to its cluster, recorded by a real reverse proxy in front of the sandbox
 * (testkit/prefix-proxy.ts), whatever the gateway hands it: only the caller's headers the shared allow-list admits
 * (src/shared/kube-headers.ts) — never `X-Remote-*`, `Impersonate-*`, credentials or anything unlisted — plus the
 * agent's own credentials and impersonation; the WebSocket handshake of an exec still passes. A caller whose user or
 * group is a `system:` name, or one the cluster's HTTP parser would trim into one, is refused before anything is sent;
 * a static identity from the agent's own configuration may be anything.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { KubeHeader } from '../../src/gen/outpost/agent/v1/kube_pb.js';
import type { KubeClient } from '../../src/agent/kube/kube-client.js';
import type { Sandbox } from '../../src/sandbox/index.js';
import { KUBE_REQUEST_HEADERS } from '../../src/shared/kube-headers.js';
import { startPrefixedCluster, type PrefixedCluster, type PrefixProxy } from '../../testkit/prefix-proxy.js';
import { createRunningPod } from '../sandbox/stream-fixtures.js';
import { answerOf, kubeHead, proxyAccount, proxyFor } from './kube-proxy-driver.js';

/** What a hostile caller (or a gateway that forgot to filter) may put on a request. */
const HOSTILE_HEADERS: KubeHeader[] = [
  { name: 'x-remote-user', value: 'system:admin' },
  { name: 'X-Remote-Group', value: 'system:masters' },
  { name: 'x-remote-extra-scopes', value: 'everything' },
  { name: 'impersonate-user', value: 'sandbox-admin' },
  { name: 'impersonate-group', value: 'system:masters' },
  { name: 'authorization', value: 'Bearer stolen' },
  { name: 'cookie', value: 'session=1' },
  { name: 'x-forwarded-for', value: '10.0.0.1' },
  { name: 'forwarded', value: 'for=10.0.0.1' },
  { name: 'audit-id', value: 'forged' },
  { name: 'x-outpost-kube-caller', value: 'forged' },
  { name: 'x-anything-new', value: '1' },
] as KubeHeader[];

/** Headers the agent itself sets (or Node adds). */
const AGENT_HEADERS = new Set(['authorization', 'impersonate-user', 'impersonate-group', 'host', 'connection', 'upgrade']);

describe("the agent's request headers and impersonated names", () => {
  let cluster: PrefixedCluster;
  let sandbox: Sandbox;
  let proxy: PrefixProxy;
  let client: KubeClient;

  before(async () => {
    cluster = await startPrefixedCluster();
    ({ sandbox, proxy, client } = cluster);
    createRunningPod(sandbox, 'demo', 'shell');
  });
  after(() => cluster?.close());

  /** A proxy for account `c1`: the cluster behind the recording proxy, with `kubeProxy` settings. */
  const proxyForC1 = (kubeProxy: unknown = {}) => proxyFor([proxyAccount('c1', client, kubeProxy)]);

  const recorded = (marker: string) => {
    const found = proxy.requests().filter((r) => r.target.includes(marker));
    assert.equal(found.length, 1, `one request carrying ${marker}`);
    return found[0]!;
  };

  test('only allow-listed caller headers reach the cluster, beside the agent credentials and impersonation', async () => {
    const { proxy: kubeProxy, out } = proxyForC1();
    const headers = [
      { name: 'accept', value: 'application/json' },
      { name: 'user-agent', value: 'kubectl/v1.33.0' },
      { name: 'kubectl-command', value: 'kubectl get' },
      ...HOSTILE_HEADERS,
    ] as KubeHeader[];
    kubeProxy.received(
      kubeHead(1n, {
        account: 'c1',
        path: '/api/v1/namespaces/demo/configmaps?labelSelector=marker%3Dplain',
        headers,
        caller: { principal: 'token:alice', user: 'outpost:alice', groups: ['outpost:devs'] },
        noBody: true,
      }),
    );
    assert.equal((await answerOf(out, 1n)).status, 403, "the cluster's RBAC answered for outpost:alice");
    const sent = recorded('marker%3Dplain');
    for (const name of Object.keys(sent.headers)) {
      assert.ok(KUBE_REQUEST_HEADERS.has(name) || AGENT_HEADERS.has(name), `${name} reached the cluster`);
    }
    assert.deepEqual(sent.headers['impersonate-user'], ['outpost:alice']);
    assert.deepEqual(sent.headers['impersonate-group'], ['outpost:devs']);
    assert.deepEqual(sent.headers.authorization, [`Bearer ${sandbox.adminToken}`]);
    assert.deepEqual(sent.headers['user-agent'], ['kubectl/v1.33.0']);
    assert.deepEqual(sent.headers['kubectl-command'], ['kubectl get']);
  });

  test('an exec upgrade keeps the WebSocket handshake and drops the rest', async () => {
    const { proxy: kubeProxy, out } = proxyForC1({ identity: 'static', user: 'ops', groups: ['system:masters'] });
    const headers = [
      { name: 'upgrade', value: 'websocket' },
      { name: 'sec-websocket-key', value: Buffer.from('0123456789abcdef').toString('base64') },
      { name: 'sec-websocket-version', value: '13' },
      { name: 'sec-websocket-protocol', value: 'v5.channel.k8s.io' },
      ...HOSTILE_HEADERS,
    ] as KubeHeader[];
    kubeProxy.received(
      kubeHead(2n, {
        account: 'c1',
        path: '/api/v1/namespaces/demo/pods/shell/exec?command=echo&command=marker-upgrade&stdout=true',
        headers,
        upgrade: true,
      }),
    );
    assert.equal((await answerOf(out, 2n)).status, 101, 'the handshake passed');
    kubeProxy.close('done');
    const sent = recorded('marker-upgrade');
    assert.equal(sent.upgrade, true);
    for (const name of Object.keys(sent.headers)) {
      assert.ok(KUBE_REQUEST_HEADERS.has(name) || AGENT_HEADERS.has(name), `${name} reached the cluster`);
    }
    assert.deepEqual(sent.headers['sec-websocket-protocol'], ['v5.channel.k8s.io']);
    assert.deepEqual(sent.headers['impersonate-group'], ['system:masters'], "the static identity is the agent's own to choose");
  });

  test('a caller named into system:, directly or behind whitespace, is refused before anything is sent', async () => {
    const { proxy: kubeProxy, out } = proxyForC1();
    const callers = [
      { user: 'system:admin', groups: [] },
      { user: ' system:admin', groups: [] },
      { user: 'outpost:alice', groups: ['system:masters'] },
      { user: 'outpost:alice', groups: [' system:masters'] },
      { user: 'outpost:alice', groups: ['\tsystem:masters'] },
      { user: 'outpost:alice', groups: ['system:masters '] },
      { user: 'outpost:alice\t', groups: [] },
      { user: 'outpost:alice', groups: ['outpost:d\u00e9vs'] },
      { user: 'outpost:alice', groups: ['outpost:devs\u0000'] },
    ];
    let id = 10n;
    for (const caller of callers) {
      kubeProxy.received(
        kubeHead(++id, {
          account: 'c1',
          path: `/api/v1/namespaces/kube-system/secrets?labelSelector=marker%3Dcaller-${id}`,
          caller: { principal: 'token:eve', ...caller },
          noBody: true,
        }),
      );
      const refused = await answerOf(out, id);
      assert.equal(refused.status, 0, JSON.stringify(caller));
      assert.equal(refused.code, 'refused', JSON.stringify(caller));
      assert.match(refused.error, /not impersonated/);
    }
    assert.ok(!proxy.requests().some((r) => r.target.includes('marker%3Dcaller-')), 'none reached the cluster');
  });
});
