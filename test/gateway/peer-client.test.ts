/**
 * The replicas' HTTP client, answers in two parts (one-hop forwards): the first JSON line resolves the call, the second
 * comes later on the same call; a plain JSON answer (a replica of an earlier version) has no second part; a call that
 * breaks after its first part, or whose second part is late, gives no second part (never an error: the result then
 * comes back by the relay), and one that breaks before its first part rejects (the forward counts as sent).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPeerClient } from '../../src/gateway/replicas/peer-client.js';

/** A server whose answer to `POST /<case>` the test writes by hand. */
async function startServer(handler: (path: string, res: http.ServerResponse, release: Promise<void>) => void) {
  let open!: () => void;
  const release = new Promise<void>((r) => (open = r));
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => handler(req.url ?? '', res, release));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    release: open,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

test('postAnswered: the first line resolves the call, the second arrives on the same call; plain JSON has no second part', async () => {
  const server = await startServer((path, res, release) => {
    if (path === '/plain') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"agentId":"a"}');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('{"agentId":"a","sessionId":"s"}\n');
    void release.then(() => res.end('{"id":"op","row":{"state":"SUCCEEDED"}}\n'));
  });
  const peers = createPeerClient({ timeoutMs: 5000 });
  try {
    const answered = await peers.postAnswered(server.baseUrl, '/lines', { x: 1 }, 5000);
    assert.equal(answered.status, 200);
    assert.deepEqual(answered.body, { agentId: 'a', sessionId: 's' });
    let second: unknown = 'pending';
    void answered.rest!.then((v) => (second = v));
    await new Promise((r) => setImmediate(r));
    assert.equal(second, 'pending', 'the call resolved before its second part was written');
    server.release();
    assert.deepEqual(await answered.rest, { id: 'op', row: { state: 'SUCCEEDED' } });

    const plain = await peers.postAnswered(server.baseUrl, '/plain', {}, 5000);
    assert.deepEqual([plain.status, plain.body, plain.rest], [200, { agentId: 'a' }, undefined]);
  } finally {
    peers.close();
    await server.close();
  }
});

test('postAnswered: a call broken after its first part, or whose second part is late, has no second part; one broken before it rejects', async () => {
  const server = await startServer((path, res) => {
    if (path === '/before') {
      res.socket?.destroy();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.write('{"agentId":"a","sessionId":"s"}\n');
    if (path === '/broken') setTimeout(() => res.socket?.destroy(), 20);
    // '/late': never a second line.
  });
  const peers = createPeerClient({ timeoutMs: 5000 });
  try {
    const broken = await peers.postAnswered(server.baseUrl, '/broken', {}, 60_000);
    assert.deepEqual(broken.body, { agentId: 'a', sessionId: 's' });
    assert.equal(await broken.rest, undefined);

    const late = await peers.postAnswered(server.baseUrl, '/late', {}, 50);
    assert.deepEqual(late.body, { agentId: 'a', sessionId: 's' });
    assert.equal(await late.rest, undefined);

    await assert.rejects(peers.postAnswered(server.baseUrl, '/before', {}, 5000));
  } finally {
    peers.close();
    await server.close();
  }
});
