// openProxyTunnel against small in-process proxies that misbehave in ways tinyproxy does not: bytes right after the
// 200, a proxy that hangs up, never answers or does not speak HTTP, a long refusal body, aborts. The request it sends
// (target, Host, Proxy-Authorization) is checked here too. See proxy-tunnel.test.ts for the real proxy.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { eventually } from '../../testkit/eventually.js';
import { openProxyTunnel, ProxyTunnelError, type ProxyTunnelFailure } from '../../src/agent/stream/proxy-tunnel.js';

const servers: net.Server[] = [];

/** Starts `server` on 127.0.0.1:0 and returns `http://127.0.0.1:PORT` with the given user info. */
async function serve(server: net.Server, userinfo = ''): Promise<URL> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return new URL(`http://${userinfo}127.0.0.1:${(server.address() as net.AddressInfo).port}`);
}

/** A raw TCP "proxy" that runs `onData` on the first bytes of each connection. */
const rawProxy = (onData: (socket: net.Socket) => void, userinfo = '') =>
  serve(
    net.createServer((socket) => {
      socket.on('error', () => {});
      socket.once('data', () => onData(socket));
    }),
    userinfo,
  );

async function failure(promise: Promise<unknown>): Promise<ProxyTunnelError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof ProxyTunnelError, `expected a ProxyTunnelError, got ${String(err)}`);
    return err;
  }
  assert.fail('expected the tunnel to fail');
}

function expectFailure(err: ProxyTunnelError, kind: ProxyTunnelFailure, message: RegExp): void {
  assert.equal(err.failure, kind, err.message);
  assert.match(err.message, message);
}

describe('openProxyTunnel edge cases', () => {
  after(async () => {
    await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  });

  test('sends CONNECT host:port with Host and percent-decoded basic credentials; bytes after the 200 are read first', async () => {
    const seen: { url?: string; host?: string; auth?: string }[] = [];
    const server = http.createServer().on('connect', (req: http.IncomingMessage, socket: net.Socket) => {
      seen.push({ url: req.url, host: req.headers.host, auth: req.headers['proxy-authorization'] });
      socket.on('error', () => {});
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\nBANNER');
      socket.pipe(socket);
    });
    const proxy = await serve(server, 'us%40er:p%3Ass%2Fw%C3%B6rd@');
    const socket = await openProxyTunnel({ proxy, host: 'gateway.example.com', port: 9091 });
    try {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      socket.write('echo');
      assert.equal(await eventually('the banner, then the echo', () => text.length >= 'BANNERecho'.length && text), 'BANNERecho');
    } finally {
      socket.destroy();
    }
    (await openProxyTunnel({ proxy: new URL(`http://127.0.0.1:${proxy.port}`), host: '::1', port: 443 })).destroy();
    const expectedAuth = `Basic ${Buffer.from('us@er:p:ss/wörd').toString('base64')}`;
    assert.deepEqual(seen, [
      { url: 'gateway.example.com:9091', host: 'gateway.example.com:9091', auth: expectedAuth },
      { url: '[::1]:443', host: '[::1]:443', auth: undefined },
    ]);
  });

  test('a proxy that hangs up, never answers, or does not speak HTTP', async () => {
    const hangsUp = await rawProxy((socket) => socket.end());
    expectFailure(
      await failure(openProxyTunnel({ proxy: hangsUp, host: 'gw', port: 1 })),
      /* kind */ 'closed',
      new RegExp(`^the proxy at http://127\\.0\\.0\\.1:${hangsUp.port} closed the connection without answering CONNECT to gw:1$`),
    );
    const silent = await rawProxy(() => {});
    // The short timeout only bounds the wait: this proxy never answers.
    expectFailure(
      await failure(openProxyTunnel({ proxy: silent, host: 'gw', port: 1, timeoutMs: 200 })),
      'timeout',
      /did not answer CONNECT to gw:1 within 200 ms/,
    );
    const ssh = await rawProxy((socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n'));
    expectFailure(
      await failure(openProxyTunnel({ proxy: ssh, host: 'gw', port: 1 })),
      'protocol',
      /did not answer CONNECT to gw:1 in HTTP/,
    );
  });

  test('a refusal body is cut to about 200 characters; a 407 to credentials names the user, never the password', async () => {
    const long = 'x'.repeat(1000);
    const bad = await rawProxy((socket) =>
      socket.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: ${long.length + 5}\r\n\r\nstart${long}`),
    );
    const err = await failure(openProxyTunnel({ proxy: bad, host: 'gw', port: 443 }));
    expectFailure(err, 'refused', /refused CONNECT to gw:443: 502 Bad Gateway — startx+…$/);
    assert.ok(err.message.length < 400, err.message);
    const auth = await rawProxy(
      (socket) => socket.write('HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 0\r\n\r\n'),
      'bob:hunter2@',
    );
    const refused = await failure(openProxyTunnel({ proxy: auth, host: 'gw', port: 443 }));
    expectFailure(
      refused,
      'auth-refused',
      /^the proxy at http:\/\/bob@127\.0\.0\.1:\d+ refused the credentials of user "bob" \(CONNECT to gw:443: 407/,
    );
    assert.ok(!refused.message.includes('hunter2'));
  });

  test('aborting destroys the request; an aborted signal or an https:// proxy never connects', async () => {
    let connected!: () => void;
    const reached = new Promise<void>((resolve) => (connected = resolve));
    const closedOnProxy: Promise<unknown>[] = [];
    const silent = await serve(
      net.createServer((socket) => {
        socket.on('error', () => {});
        closedOnProxy.push(once(socket, 'close'));
        connected();
      }),
    );
    const controller = new AbortController();
    const pending = openProxyTunnel({ proxy: silent, host: 'gw', port: 1, signal: controller.signal });
    await reached;
    controller.abort();
    await assert.rejects(pending, { name: 'AbortError' });
    await Promise.all(closedOnProxy);
    await assert.rejects(openProxyTunnel({ proxy: silent, host: 'gw', port: 1, signal: AbortSignal.abort() }), { name: 'AbortError' });
    expectFailure(
      await failure(openProxyTunnel({ proxy: new URL('https://u:pw@proxy.example:443'), host: 'gw', port: 1 })),
      'protocol',
      /^the proxy at https:\/\/u@proxy\.example: only http:\/\/ proxies are supported$/,
    );
  });
});
