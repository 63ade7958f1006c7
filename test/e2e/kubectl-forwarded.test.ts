/**
 * kubectl through a gateway replica that does not hold the account's agent stream (two in-process gateways sharing
 * one Postgres): the request is forwarded to the replica holding it, streamed both ways — get, apply, a watch that
 * receives a change, `logs -f`, exec and port-forward upgrades — and the caller's identity (not the forwarding
 * replica's) is what the cluster's RBAC sees.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway/index.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import type { Kubectl } from '../../testkit/kubectl-runner.js';
import {
  echoThrough,
  gatewayKubectl,
  httpsRequest,
  KUBECTLS,
  startKubeStack,
  TOKENS,
  webPod,
  type KubeStack,
  startKubeReplica,
} from './kubectl-helpers.js';

const pg = testDrivers().includes('postgres');
const newest = KUBECTLS.at(-1);

describe('kubectl through a replica without the stream (postgres)', {
  skip: !pg ? 'needs OUTPOST_TEST_POSTGRES' : !newest?.websocket ? 'needs kubectl 1.33' : false,
  concurrency: false,
}, () => {
  let k: KubeStack;
  let other: RunningGateway;
  let kubectl: Kubectl;
  let pod: string;

  before(async () => {
    k = await startKubeStack({ driver: 'postgres', gateway: { replicas: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 10 } } });
    other = await startKubeReplica(k, 'gw-2', { replicas: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 10 } });
    await eventually('both replicas know each other', async () => {
      const list = JSON.parse((await httpsRequest(`${other.httpUrl}/armory/clouddrivers`, { ca: k.pki.caPem })).body) as unknown[];
      return list.length === 2 || undefined;
    });
    kubectl = await gatewayKubectl(newest!.bin, other.httpUrl, k.pki.caFile, TOKENS.alice);
    pod = await webPod(k.admin);
  });
  after(async () => {
    kubectl?.cleanup();
    await other?.close();
    await k?.close();
  });

  test('get, apply and the caller identity pass through the forward', async () => {
    assert.match(await kubectl.ok(['get', 'pods', '-n', 'demo']), new RegExp(pod));
    const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: forwarded, namespace: demo}\ndata: {via: gw-2}\n';
    assert.match(await kubectl.ok(['apply', '-f', '-'], { input: manifest }), /configmap\/forwarded created/);
    const denied = await kubectl.run(['get', 'secrets', '-n', 'demo']);
    assert.match(denied.stderr, /User "outpost:alice" cannot list resource "secrets"/);
  });

  test('a watch and logs -f stream through the forward', async () => {
    const watch = kubectl.watch(['get', 'configmaps', '-n', 'demo']);
    try {
      await watch.waitFor((events) => events.some((e) => e.object.metadata.name === 'forwarded'));
      await k.admin.ok(['apply', '-f', '-'], {
        input: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seen-forwarded, namespace: demo}\n',
      });
      await watch.waitFor((events) => events.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'seen-forwarded'));
    } finally {
      watch.stop();
    }
    const logs = kubectl.stream(['logs', '-f', '-n', 'demo', pod]);
    try {
      await logs.waitFor(/heartbeat 2/);
    } finally {
      logs.stop();
    }
  });

  test('exec and port-forward upgrades pass through the forward', async () => {
    assert.equal((await kubectl.ok(['exec', '-n', 'demo', pod, '--', 'echo', 'via', 'gw-2'])).trim(), 'via gw-2');
    const forward = kubectl.stream(['port-forward', '-n', 'demo', `pod/${pod}`, ':7777']);
    try {
      const [, port] = await forward.waitFor(/Forwarding from 127\.0\.0\.1:(\d+) -> 7777/);
      const echoed = await echoThrough(Number(port), 'forwarded ping\n');
      assert.equal(echoed, 'forwarded ping\n');
    } finally {
      forward.stop();
    }
  });
});
