/**
 * Shutdown with `/k8s` forwards open (two and then three replicas on one Postgres, TLS and tokens): a watch forwarded
 * through a replica ends when that replica stops — its forward is cut by the shutdown step that closes the forwarder
 * the endpoint really uses, before the servers wait out their grace, and recorded as such — and the replica holding
 * the stream then ends the watch in the cluster. A watch forwarded to a replica that stops (the holder) ends too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RunningGateway } from '../../src/gateway/index.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { auditEvents, httpsRequest, openWatch, startKubeStack, TOKENS, type KubeStack, startKubeReplica } from './kubectl-helpers.js';

const pg = testDrivers().includes('postgres');
const REPLICAS = { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 10 };

describe('shutdown with forwarded kubectl requests open (postgres)', {
  skip: !pg ? 'needs OUTPOST_TEST_POSTGRES' : false,
  concurrency: false,
}, () => {
  let k: KubeStack;
  const extra: RunningGateway[] = [];
  const replica = async (id: string) => {
    const gateway = await startKubeReplica(k, id, { replicas: REPLICAS });
    extra.push(gateway);
    await eventually(`${id} forwards to the replica holding the stream`, async () => {
      const answer = await httpsRequest(`${gateway.httpUrl}/k8s/sandbox/version`, {
        ca: k.pki.caPem,
        headers: { authorization: `Bearer ${TOKENS.alice}` },
      });
      return answer.status === 200 || undefined;
    });
    return gateway;
  };
  const openRequests = async (gateway: RunningGateway) => {
    const metrics = await httpsRequest(`${gateway.httpUrl}/metrics`, {
      ca: k.pki.caPem,
      headers: { authorization: `Bearer ${TOKENS.alice}` },
    });
    return Number(/^outpost_gateway_kube_requests_open (\d+)/m.exec(metrics.body)?.[1]);
  };

  before(async () => {
    k = await startKubeStack({ driver: 'postgres', gateway: { replicas: REPLICAS }, waitForCache: true });
  });
  after(async () => {
    for (const gateway of extra) await gateway.close();
    await k?.close();
  });

  test('the forwarding replica stops: its forwarded watch is cut first, and the holder ends it in the cluster', async () => {
    const gw2 = await replica('gw-2');
    const before = k.stack.sandbox.openWatches();
    const watch = await openWatch(gw2.httpUrl, k.pki.caPem, 'cut-first');
    assert.equal(watch.status, 200);
    await eventually('the watch is open in the sandbox', () => k.stack.sandbox.openWatches() > before || undefined);
    assert.equal(await openRequests(k.stack.gateway), 1, 'the holder serves the forwarded watch');

    await gw2.close();
    await eventually('the caller sees its watch end', () => watch.isEnded() || undefined);
    await watch.ended;
    await eventually('the holder ended the watch in the cluster', () => k.stack.sandbox.openWatches() <= before || undefined);
    await eventually('the holder has no request open', async () => (await openRequests(k.stack.gateway)) === 0 || undefined);
    // Recorded (once, by the forwarding replica, flushed at its shutdown) as cut by the shutdown step itself — not as a
    // caller that went away when the servers' grace ran out.
    const events = await auditEvents(k.stack.gateway.httpUrl, k.pki.caPem, 'token:alice');
    const cut = events.filter((e) => e.verb === 'watch' && e.account === 'sandbox' && e.stage === 'completed');
    assert.equal(cut.length, 1, JSON.stringify(cut));
    assert.match(String(cut[0]!.error), /this replica is shutting down: the forwarded request was cut/);
    const opened = events.filter((e) => e.verb === 'watch' && e.account === 'sandbox' && e.stage === 'started');
    assert.deepEqual(
      opened.map((e) => e.requestId),
      [cut[0]!.requestId],
      'its admission is on record too, with the same request id',
    );
  });

  test('the replica holding the stream stops: a watch forwarded to it ends at its caller', async () => {
    const gw3 = await replica('gw-3');
    const watch = await openWatch(gw3.httpUrl, k.pki.caPem, 'holder-stops');
    assert.equal(watch.status, 200);
    await eventually('the holder serves the forwarded watch', async () => (await openRequests(k.stack.gateway)) === 1 || undefined);
    await k.stack.gateway.close();
    await eventually('the caller sees its watch end', () => watch.isEnded() || undefined);
    await eventually('the forwarding replica has no request open', async () => (await openRequests(gw3)) === 0 || undefined);
    assert.equal((await httpsRequest(`${gw3.httpUrl}/health`, { ca: k.pki.caPem })).status, 200, 'the forwarding replica serves on');
  });
});
