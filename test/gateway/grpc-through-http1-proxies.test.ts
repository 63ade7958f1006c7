/**
 * What a gRPC client (connect-node, as the agent uses) gets when it opens the agent stream through an HTTP/1.1-only
 * reverse proxy in front of the gateway's HTTP port — real nginx and HAProxy (testkit/nginx.ts, testkit/haproxy.ts)
 * running docs/networks.md's configurations. These are the errors that mean "HTTP/2 cannot pass this way":
 * - cleartext HTTP/2 (h2c) meeting an HTTP/1.1 answer: INTERNAL `Protocol error`;
 * - TLS to nginx with `ssl` but no `http2`: INTERNAL, OpenSSL's `tlsv1 alert no application protocol`;
 * - a proxy that accepts HTTP/2 itself and forwards HTTP/1.1 (HAProxy without `proto h1`): the gateway's HTTP port
 *   refuses gRPC over HTTP/1.1 with 426, which the client reports as UNKNOWN `HTTP 426`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createCertificateAuthority } from '../../src/sandbox/certs.js';
import { startHaproxy } from '../../testkit/haproxy.js';
import { startNginx } from '../../testkit/nginx.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { Code, grpcAgentStream } from '../../testkit/auth-helpers.js';

let gw: TestGateway;
let httpPort: number;
let certDir: string;
let ca: string;
let tls: { certFile: string; keyFile: string };

before(async () => {
  gw = await startTestGateway('pglite');
  httpPort = Number(new URL(gw.gateway.httpUrl).port);
  const pki = await createCertificateAuthority({ hosts: ['127.0.0.1'] });
  certDir = mkdtempSync(join(tmpdir(), 'outpost-http1-proxies-'));
  tls = { certFile: join(certDir, 'proxy.pem'), keyFile: join(certDir, 'proxy-key.pem') };
  writeFileSync(tls.certFile, pki.certPem);
  writeFileSync(tls.keyFile, pki.keyPem);
  ca = pki.caPem;
});

after(async () => {
  await gw?.close();
  rmSync(certDir, { recursive: true, force: true });
});

test('through nginx, cleartext: INTERNAL "Protocol error"', async () => {
  const nginx = await startNginx({ upstreamPort: httpPort, mode: 'http1-reverse' });
  try {
    assert.deepEqual(await grpcAgentStream(nginx.url, {}), { code: Code.Internal, message: 'Protocol error' });
  } finally {
    await nginx.stop();
  }
});

test('through nginx with TLS: INTERNAL, the TLS alert "no application protocol"', async () => {
  const nginx = await startNginx({ upstreamPort: httpPort, mode: 'http1-reverse', tls });
  try {
    const outcome = await grpcAgentStream(nginx.url, { ca });
    assert.equal(outcome.code, Code.Internal);
    assert.match(outcome.message, /ssl3_read_bytes:tlsv1 alert no application protocol/);
  } finally {
    await nginx.stop();
  }
});

test('through HAProxy with proto h1 (cleartext and TLS): INTERNAL "Protocol error"', async () => {
  for (const withTls of [false, true]) {
    const haproxy = await startHaproxy({ upstreamPort: httpPort, ...(withTls ? { tls } : {}) });
    try {
      assert.deepEqual(await grpcAgentStream(haproxy.url, { ca }), { code: Code.Internal, message: 'Protocol error' }, haproxy.url);
    } finally {
      await haproxy.stop();
    }
  }
});

test('through HAProxy that accepts HTTP/2 and forwards HTTP/1.1: the gateway answers 426, UNKNOWN "HTTP 426"', async () => {
  for (const withTls of [false, true]) {
    const haproxy = await startHaproxy({ upstreamPort: httpPort, mode: 'h2-to-http1', ...(withTls ? { tls } : {}) });
    try {
      assert.deepEqual(await grpcAgentStream(haproxy.url, { ca }), { code: Code.Unknown, message: 'HTTP 426' }, haproxy.url);
    } finally {
      await haproxy.stop();
    }
  }
});
