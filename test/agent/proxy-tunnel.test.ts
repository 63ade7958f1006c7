// openProxyTunnel through a real tinyproxy (testkit/tinyproxy.ts): plain TCP, h2c and TLS + HTTP/2 inside the tunnel,
// basic auth, refusals, a proxy that is not running, a proxy restarted on its port.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http2 from 'node:http2';
import net from 'node:net';
import tls from 'node:tls';
import { openProxyTunnel, ProxyTunnelError, type ProxyTunnelFailure } from '../../src/agent/stream/proxy-tunnel.js';
import { createCertificateAuthority, type CertificateAuthority } from '../../src/sandbox/certs.js';
import { startTinyproxy, type Tinyproxy } from '../../testkit/tinyproxy.js';

/** Listens on 127.0.0.1:0 and returns the port. */
async function listen(server: net.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

/** Writes `text` and resolves with the first `text.length` bytes read back. */
async function echoRoundTrip(socket: net.Socket, text: string): Promise<string> {
  let received = '';
  const done = new Promise<string>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.length >= text.length) resolve(received);
    });
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`closed after "${received}"`)));
  });
  socket.write(text);
  return done;
}

/** One GET over an HTTP/2 session; resolves with the status and the body. */
async function h2Get(session: http2.ClientHttp2Session, path: string): Promise<{ status: number; body: string }> {
  const stream = session.request({ ':path': path });
  const [headers] = (await once(stream, 'response')) as [http2.IncomingHttpHeaders];
  let body = '';
  for await (const chunk of stream) body += chunk;
  return { status: Number(headers[':status']), body };
}

async function rejectsWith(promise: Promise<unknown>, failure: ProxyTunnelFailure, message: RegExp): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof ProxyTunnelError, `expected a ProxyTunnelError, got ${String(err)}`);
    assert.equal(err.failure, failure, err.message);
    assert.match(err.message, message);
    return true;
  });
}

const withAuth = (proxy: Tinyproxy, user: string, password: string) => {
  const url = new URL(proxy.url);
  url.username = user;
  url.password = password;
  return url;
};

describe('openProxyTunnel through tinyproxy', () => {
  let ca: CertificateAuthority;
  const servers: net.Server[] = [];
  const proxies: Tinyproxy[] = [];
  let echoPort: number;
  let h2cPort: number;
  let h2tlsPort: number;

  before(async () => {
    ca = await createCertificateAuthority({ hosts: ['gateway.test'] });
    const echo = net.createServer((socket) => socket.on('error', () => {}).pipe(socket));
    const respond = (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      stream.respond({ ':status': 200 });
      stream.end(`hello ${headers[':path']}`);
    };
    const h2c = http2.createServer().on('stream', respond);
    const h2tls = http2.createSecureServer({ cert: ca.certPem, key: ca.keyPem }).on('stream', respond);
    servers.push(echo, h2c, h2tls);
    [echoPort, h2cPort, h2tlsPort] = await Promise.all([listen(echo), listen(h2c), listen(h2tls)]);
  });

  after(async () => {
    await Promise.all(proxies.map((p) => p.stop()));
    for (const server of servers) (server as net.Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  const proxy = async (options: Parameters<typeof startTinyproxy>[0] = {}) => {
    const started = await startTinyproxy(options);
    proxies.push(started);
    return started;
  };

  test('plain TCP, h2c and TLS + HTTP/2 (ALPN h2) run inside the tunnel', async () => {
    const open = await proxy();
    const raw = await openProxyTunnel({ proxy: open.url, host: '127.0.0.1', port: echoPort });
    try {
      assert.equal(await echoRoundTrip(raw, 'ping through the proxy'), 'ping through the proxy');
    } finally {
      raw.destroy();
    }

    const h2cSocket = await openProxyTunnel({ proxy: open.url, host: '127.0.0.1', port: h2cPort });
    const h2cSession = http2.connect(`http://127.0.0.1:${h2cPort}`, { createConnection: () => h2cSocket });
    try {
      assert.deepEqual(await h2Get(h2cSession, '/h2c'), { status: 200, body: 'hello /h2c' });
    } finally {
      h2cSession.destroy();
    }

    const tunnel = await openProxyTunnel({ proxy: open.url, host: '127.0.0.1', port: h2tlsPort });
    const secure = tls.connect({ socket: tunnel, servername: 'gateway.test', ca: ca.caPem, ALPNProtocols: ['h2'] });
    await once(secure, 'secureConnect');
    assert.equal(secure.authorized, true);
    assert.equal(secure.alpnProtocol, 'h2');
    const session = http2.connect('https://gateway.test', { createConnection: () => secure });
    try {
      assert.deepEqual(await h2Get(session, '/tls'), { status: 200, body: 'hello /tls' });
    } finally {
      session.destroy();
    }
  });

  test('basic auth: the right credentials pass (percent-decoded); missing or wrong ones give a clear error', async () => {
    const guarded = await proxy({ auth: { user: 'agent', password: 's3cret-pw' } });
    const socket = await openProxyTunnel({ proxy: withAuth(guarded, 'ag%65nt', 's3cret%2Dpw'), host: '127.0.0.1', port: echoPort });
    try {
      assert.equal(await echoRoundTrip(socket, 'authenticated'), 'authenticated');
    } finally {
      socket.destroy();
    }
    const where = `the proxy at http://127\\.0\\.0\\.1:${guarded.port}`;
    await rejectsWith(
      openProxyTunnel({ proxy: guarded.url, host: '127.0.0.1', port: echoPort }),
      'auth-required',
      new RegExp(`^${where} requires authentication: put user:password in the proxy URL \\(CONNECT to 127\\.0\\.0\\.1:${echoPort}: 407 `),
    );
    // tinyproxy answers wrong credentials with 401, not 407; both mean the same here.
    const wrong = openProxyTunnel({ proxy: withAuth(guarded, 'agent', 'wrong-pw'), host: '127.0.0.1', port: echoPort });
    await rejectsWith(wrong, 'auth-refused', /^the proxy at http:\/\/agent@127\.0\.0\.1:\d+ refused the credentials of user "agent"/);
    await wrong.catch((err: Error) => assert.ok(!err.message.includes('wrong-pw'), err.message));
  });

  test('a refusing proxy: CONNECT to a port it does not allow, or a client it does not allow, gives 403 and its reason', async () => {
    const limited = await proxy({ connectPorts: [echoPort === 1 ? 2 : 1] });
    await rejectsWith(
      openProxyTunnel({ proxy: limited.url, host: '127.0.0.1', port: echoPort }),
      'refused',
      new RegExp(
        `^the proxy at http://127\\.0\\.0\\.1:${limited.port} refused CONNECT to 127\\.0\\.0\\.1:${echoPort}: 403 Access violation — .*CONNECT method not allowed`,
      ),
    );
    const denying = await proxy({ denyAll: true });
    await rejectsWith(
      openProxyTunnel({ proxy: denying.url, host: '127.0.0.1', port: echoPort }),
      'refused',
      /refused CONNECT to 127\.0\.0\.1:\d+: 403 Access denied — .*not configured it to service requests from your host/,
    );
  });

  test('a proxy that is not running: a clear error; restarted on its port, tunnels work again; stopping cuts them', async () => {
    const flaky = await proxy();
    const socket = await openProxyTunnel({ proxy: flaky.url, host: '127.0.0.1', port: echoPort });
    socket.on('error', () => {});
    const closed = once(socket, 'close');
    await flaky.stop();
    await closed;
    await rejectsWith(
      openProxyTunnel({ proxy: flaky.url, host: '127.0.0.1', port: echoPort }),
      'unreachable',
      new RegExp(`^cannot reach the proxy at http://127\\.0\\.0\\.1:${flaky.port}: connect ECONNREFUSED`),
    );
    await flaky.restart();
    const again = await openProxyTunnel({ proxy: flaky.url, host: '127.0.0.1', port: echoPort });
    try {
      assert.equal(await echoRoundTrip(again, 'back'), 'back');
    } finally {
      again.destroy();
    }
    await flaky.restart(); // while running: stop, then start on the same port
    const third = await openProxyTunnel({ proxy: flaky.url, host: '127.0.0.1', port: echoPort });
    third.destroy();
  });
});
