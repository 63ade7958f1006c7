/**
 * testkit/nginx.ts and testkit/haproxy.ts against a small upstream (./proxy-peers.ts): a plain GET and a WebSocket
 * upgrade pass (101, data both ways), HTTP/2 does not — and how Node's HTTP/2 client fails, which is what an agent
 * sees when HTTP/2 cannot pass — `block-upgrade` refuses upgrades, and a restart keeps the port. No assertion depends
 * on how long anything took.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCertificateAuthority } from '../../src/sandbox/certs.js';
import { eventually } from '../../testkit/eventually.js';
import { startHaproxy } from '../../testkit/haproxy.js';
import { startNginx } from '../../testkit/nginx.js';
import { closed, get, http2Get, SUBPROTOCOL, startUpstream, type Upstream, upgrade } from './proxy-peers.js';

/** Node's HTTP/2 client meeting an HTTP/1.1 answer (cleartext, or TLS without h2): both the stream and the session. */
const HTTP1_ANSWER = 'ERR_HTTP2_ERROR: Protocol error';

/** nginx with `ssl` but no `http2` refuses a client that offers only h2 with a TLS alert (`http2.connect` offers only h2). */
const NO_H2_ALERT = /^ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL: .*tlsv1 alert no application protocol/;

let upstream: Upstream;
let certDir: string;
let ca: string;
let tls: { certFile: string; keyFile: string };

before(async () => {
  upstream = await startUpstream();
  const pki = await createCertificateAuthority({ hosts: ['127.0.0.1', 'localhost'] });
  certDir = mkdtempSync(join(tmpdir(), 'outpost-proxy-certs-'));
  tls = { certFile: join(certDir, 'proxy.pem'), keyFile: join(certDir, 'proxy-key.pem') };
  writeFileSync(tls.certFile, pki.certPem);
  writeFileSync(tls.keyFile, pki.keyPem);
  ca = pki.caPem;
});

after(async () => {
  await upstream.close();
  rmSync(certDir, { recursive: true, force: true });
});

/** A GET through `url` reaches the upstream as HTTP/1.1 with its path. */
async function assertGetPasses(url: string, path: string, trust?: string): Promise<void> {
  assert.deepEqual(await get(`${url}${path}`, trust), { status: 200, body: `${path} HTTP/1.1` });
}

/** An upgrade through `url` gets 101 with the upstream's accept key and subprotocol, and bytes flow both ways. */
async function assertUpgradePasses(url: string, trust?: string): Promise<void> {
  const { status, body, upgraded: result } = await upgrade(`${url}/outpost.agent.v1.AgentService/Connect`, trust);
  assert.equal(status, 101, `upgrade answered ${status}: ${body}`);
  assert.ok(result);
  try {
    assert.equal(result.headers['sec-websocket-accept'], result.expectedAccept);
    assert.equal(result.headers['sec-websocket-protocol'], SUBPROTOCOL);
    await eventually('the upstream greeting arrives', () => result.received() === 'hello');
    result.socket.write('ping');
    await eventually('the echo arrives', () => result.received() === 'helloecho:ping');
    const seen = upstream.seen.at(-1)!;
    assert.equal(seen.headers.upgrade, 'websocket');
    assert.match(String(seen.headers.connection), /upgrade/i);
  } finally {
    result.socket.destroy();
  }
}

describe('nginx', () => {
  test('a GET and a WebSocket upgrade pass; HTTP/2 prior knowledge (h2c) meets an HTTP/1.1 answer', async () => {
    const nginx = await startNginx({ upstreamPort: upstream.port, mode: 'http1-reverse' });
    try {
      await assertGetPasses(nginx.url, '/health');
      await assertUpgradePasses(nginx.url);
      assert.deepEqual(await http2Get(nginx.url, '/health'), { streamError: HTTP1_ANSWER, sessionError: HTTP1_ANSWER });
    } finally {
      await nginx.stop();
    }
  });

  test('restart keeps the port: open connections are cut, new ones pass', async () => {
    const nginx = await startNginx({ upstreamPort: upstream.port, mode: 'http1-reverse' });
    try {
      const before = await upgrade(`${nginx.url}/ws`);
      assert.equal(before.status, 101);
      const { port, url } = nginx;
      await nginx.restart();
      assert.equal(nginx.port, port);
      assert.equal(nginx.url, url);
      await closed(before.upgraded!.socket);
      await assertGetPasses(nginx.url, '/after-restart');
      await assertUpgradePasses(nginx.url);
    } finally {
      await nginx.stop();
    }
  });

  test('with TLS: GET and upgrade pass over https; an HTTP/2 client is refused in the handshake (no h2 in ALPN)', async () => {
    const nginx = await startNginx({ upstreamPort: upstream.port, mode: 'http1-reverse', tls });
    try {
      assert.match(nginx.url, /^https:/);
      await assertGetPasses(nginx.url, '/tls', ca);
      await assertUpgradePasses(nginx.url, ca);
      const outcome = await http2Get(nginx.url, '/tls', ca);
      assert.equal(outcome.response, undefined);
      assert.match(outcome.sessionError ?? '', NO_H2_ALERT, JSON.stringify(outcome));
      assert.match(
        outcome.streamError ?? '',
        /^ERR_HTTP2_STREAM_CANCEL: The pending stream has been canceled \(caused by: .*no application protocol/,
      );
    } finally {
      await nginx.stop();
    }
  });

  test('block-upgrade answers 403 to an upgrade and still passes a GET', async () => {
    const nginx = await startNginx({ upstreamPort: upstream.port, mode: 'block-upgrade' });
    try {
      const count = upstream.seen.length;
      const result = await upgrade(`${nginx.url}/outpost.agent.v1.AgentService/Connect`);
      assert.equal(result.status, 403);
      assert.equal(upstream.seen.length, count, 'the upgrade never reached the upstream');
      await assertGetPasses(nginx.url, '/plain');
    } finally {
      await nginx.stop();
    }
  });
});

describe('HAProxy', () => {
  test('http1-reverse: a GET and a WebSocket upgrade pass; h2c meets an HTTP/1.1 answer', async () => {
    const haproxy = await startHaproxy({ upstreamPort: upstream.port });
    try {
      await assertGetPasses(haproxy.url, '/health');
      await assertUpgradePasses(haproxy.url);
      assert.deepEqual(await http2Get(haproxy.url, '/health'), { streamError: HTTP1_ANSWER, sessionError: HTTP1_ANSWER });
    } finally {
      await haproxy.stop();
    }
  });

  test('http1-reverse with TLS: GET and upgrade pass; an HTTP/2 client gets no ALPN, goes on, and meets HTTP/1.1', async () => {
    const haproxy = await startHaproxy({ upstreamPort: upstream.port, tls });
    try {
      await assertGetPasses(haproxy.url, '/tls', ca);
      await assertUpgradePasses(haproxy.url, ca);
      assert.deepEqual(await http2Get(haproxy.url, '/tls', ca), { alpn: false, streamError: HTTP1_ANSWER, sessionError: HTTP1_ANSWER });
    } finally {
      await haproxy.stop();
    }
  });

  test('h2-to-http1 (HAProxy without proto h1): HTTP/2 gets in and reaches the upstream as HTTP/1.1', async () => {
    const haproxy = await startHaproxy({ upstreamPort: upstream.port, mode: 'h2-to-http1' });
    try {
      assert.deepEqual(await http2Get(haproxy.url, '/grpc-path'), { response: { status: 200, body: '/grpc-path HTTP/1.1' } });
      await assertUpgradePasses(haproxy.url);
    } finally {
      await haproxy.stop();
    }
  });

  test('restart keeps the port: open connections are cut, new ones pass', async () => {
    const haproxy = await startHaproxy({ upstreamPort: upstream.port });
    try {
      const before = await upgrade(`${haproxy.url}/ws`);
      assert.equal(before.status, 101);
      const { port } = haproxy;
      await haproxy.restart();
      assert.equal(haproxy.port, port);
      await closed(before.upgraded!.socket);
      await assertGetPasses(haproxy.url, '/after-restart');
      await assertUpgradePasses(haproxy.url);
    } finally {
      await haproxy.stop();
    }
  });
});
