/**
 * testkit/tinyproxy.ts: a restart waits for its port while something else holds it, then serves on the same port;
 * stop is idempotent; credentials tinyproxy cannot parse are refused up front.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import net from 'node:net';
import { test } from 'node:test';
import { openProxyTunnel } from '../../src/agent/stream/proxy-tunnel.js';
import { eventually } from '../../testkit/eventually.js';
import { startTinyproxy } from '../../testkit/tinyproxy.js';

test('restart retries while its port is taken, then listens on the same port again', async () => {
  const target = net.createServer((socket) => socket.end('hi'));
  target.listen(0, '127.0.0.1');
  await once(target, 'listening');
  const targetPort = (target.address() as net.AddressInfo).port;
  const proxy = await startTinyproxy();
  const squatter = net.createServer();
  try {
    await proxy.stop();
    await proxy.stop(); // idempotent
    squatter.listen(proxy.port, '127.0.0.1');
    await once(squatter, 'listening');
    const restarted = proxy.restart();
    await eventually('a restart attempt failed on the taken port', () => /Could not create listening sockets/.test(proxy.log()));
    squatter.close();
    await restarted;
    const socket = await openProxyTunnel({ proxy: proxy.url, host: '127.0.0.1', port: targetPort });
    const [data] = (await once(socket, 'data')) as [Buffer];
    assert.equal(data.toString(), 'hi');
    socket.destroy();
  } finally {
    squatter.close();
    await proxy.stop();
    target.close();
  }
});

test('credentials tinyproxy cannot parse are refused with the reason', async () => {
  await assert.rejects(startTinyproxy({ auth: { user: 'agent', password: 'p@ss' } }), /only \[A-Za-z0-9._-\] credentials/);
});
