/**
 * The round-robin TCP balancer the multi-process replica tests put in front of the gateways (as a Kubernetes Service
 * would be): round-robin, refused targets skipped, connections counted and cut. The harness itself is exercised by
 * test/e2e/replicas-failover.test.ts.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { startBalancer } from '../../testkit/balancer.js';

test('balancer: round-robin, skips refused targets, counts and cuts connections', async () => {
  const servers = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer((c) => c.pipe(c)); // echo
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const [a, b] = servers.map((s) => (s.address() as net.AddressInfo).port) as [number, number];
  // Port 1 (tcpmux) has no listener; a port found free and released could be anyone's by the time it is dialled.
  const refused = 1;
  const balancer = await startBalancer([a, refused, b]);
  const clients: net.Socket[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      const c = net.connect(balancer.port, '127.0.0.1');
      clients.push(c);
      const echoed = new Promise<string>((resolve) => c.once('data', (d) => resolve(d.toString())));
      c.write(`hello ${i}`);
      assert.equal(await echoed, `hello ${i}`);
    }
    // a, (refused → b), b, a: the refused target is skipped, never counted.
    assert.deepEqual([balancer.connectionsTo(a), balancer.connectionsTo(b), balancer.connectionsTo(refused)], [2, 2, 0]);
    const closed = Promise.all(clients.map((c) => new Promise((resolve) => c.once('close', resolve))));
    balancer.cutAll();
    await closed;
    assert.equal(balancer.connectionsTo(a) + balancer.connectionsTo(b), 0);
    balancer.setTargets([refused]);
    const lone = net.connect(balancer.port, '127.0.0.1');
    await new Promise((resolve) => lone.once('close', resolve)); // every target refuses: the client is destroyed
  } finally {
    for (const c of clients) c.destroy();
    await balancer.close();
    await balancer.close(); // idempotent
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  }
});
