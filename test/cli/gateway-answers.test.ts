/**
 * How the client commands read what answered at `--gateway`: a peer that is not an Outpost gateway (a TCP server that
 * closes, one that answers bytes that are not HTTP, HTTP 404 HTML, HTTP 200 HTML) exits 3 saying so; a refusal sent
 * before the request body was read (what the gateway does to bad credentials) is reported as the server's own status
 * every time, never as the client's `write EPIPE` (HTTP 500); and `--account` may be left out when the gateway has
 * exactly one account. Every server binds port 0 of 127.0.0.1.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { ExitCode } from '../../src/client/errors.js';
import { runCli, succeededRecord } from './operations-helpers.js';

async function listen<T extends Server | HttpServer>(server: T): Promise<{ server: T; url: string }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('a peer that is not an Outpost gateway: exit 3, saying so', () => {
  const peers: { name: string; make: () => Server | HttpServer; says: RegExp }[] = [
    {
      name: 'a TCP server that closes at once',
      make: () => createServer((socket) => socket.destroy()),
      says: /closed the connection without an HTTP answer/,
    },
    {
      name: 'a server that answers bytes that are not HTTP (Redis, say)',
      make: () => createServer((socket) => socket.end('-ERR unknown command\r\n')),
      says: /answered bytes that are not HTTP/,
    },
    {
      name: 'an HTTP server answering 404 with HTML',
      make: () => createHttpServer((_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>')),
      says: /answered HTTP 404 with content-type text\/html/,
    },
    {
      name: 'an HTTP server answering 200 with HTML',
      make: () => createHttpServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>')),
      says: /answered HTTP 200 with content-type text\/html/,
    },
  ];
  for (const peer of peers) {
    test(peer.name, async () => {
      const { server, url } = await listen(peer.make());
      try {
        for (const args of [['accounts'], ['operations'], ['scale', 'deploy/web', '--replicas', '1', '--account', 'a'], ['get', 'pods']]) {
          const r = await runCli([...args, '--gateway', url]);
          assert.equal(r.code, ExitCode.UNREACHABLE, `${args[0]}: ${r.err}`);
          assert.match(r.err, new RegExp(`^error: ${url} did not answer as an Outpost gateway does: `), args[0]);
          assert.match(r.err, peer.says, args[0]);
          assert.match(r.err, /is --gateway \(or OUTPOST_GATEWAY\) the gateway's HTTP URL\?\n$/, args[0]);
        }
      } finally {
        server.close();
      }
    });
  }

  test('https:// to a plain HTTP port', async () => {
    const { server, url } = await listen(createHttpServer((_req, res) => res.end()));
    try {
      const r = await runCli(['accounts', '--gateway', url.replace('http:', 'https:')]);
      assert.equal(r.code, ExitCode.UNREACHABLE, r.err);
      assert.match(r.err, /does not speak TLS on this port/);
    } finally {
      server.close();
    }
  });
});

/**
 * A server in another process (so its answer races the client's writes as a real gateway's does) that answers every
 * request 401 as soon as it has the headers, before reading the body — then, as the gateway does, drops the rest of the
 * body and closes (a reset instead would make the answer unreadable to any client).
 */
const REFUSER = `
const server = require('node:net').createServer((socket) => {
  let head = '';
  socket.on('error', () => {});
  socket.on('data', (d) => {
    if (head.includes('\\r\\n\\r\\n')) return;
    head += d.toString('latin1');
    if (!head.includes('\\r\\n\\r\\n')) return;
    const body = JSON.stringify({ code: 'unauthenticated', message: 'authentication required' });
    socket.write('HTTP/1.1 401 Unauthorized\\r\\ncontent-type: application/json\\r\\ncontent-length: ' + body.length +
      '\\r\\nconnection: close\\r\\n\\r\\n' + body);
    setTimeout(() => socket.end(), 2000).unref();
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

describe('a refusal before the body was read', () => {
  let child: ChildProcess;
  let url: string;
  before(async () => {
    child = spawn(process.execPath, ['-e', REFUSER], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [port] = (await once(child.stdout!, 'data')) as [Buffer];
    url = `http://127.0.0.1:${port.toString().trim()}`;
  });
  after(() => child.kill());

  test('is the server status every time: small and large bodies, never "write EPIPE" (HTTP 500)', async () => {
    const big = `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big}\ndata:\n  k: "${'x'.repeat(1000 * 1000)}"\n`;
    const outcomes = new Map<string, number>();
    for (let i = 0; i < 15; i++) {
      for (const [args, stdin] of [
        [['apply', '-f', '-'], big],
        [['scale', 'deploy/web', '--replicas', '1'], ''],
      ] as const) {
        const r = await runCli([...args, '--gateway', url, '--account', 'a'], { stdin });
        const key = `${r.code} ${r.err}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    assert.deepEqual(
      [...outcomes.keys()],
      [
        `1 error: Unauthenticated: authentication required (HTTP 401); no credentials were sent: run outpost login --gateway ${url} to sign in, or give a token (--help lists the ways)\n`,
      ],
    );
  });
});

describe('--account left out', () => {
  let server: HttpServer;
  let url: string;
  let names: string[] = [];
  const submitted: string[] = [];
  before(async () => {
    const handler = connectNodeAdapter({
      routes: (router) => {
        router.service(AccountService, {
          async listAccounts() {
            return { accounts: names.map((name) => ({ name })), total: names.length };
          },
        });
        router.service(OperationService, {
          async submitOperation(req) {
            submitted.push(req.account);
            return { operation: succeededRecord(req, { objects: [] }) };
          },
        });
      },
    });
    ({ server, url } = await listen(createHttpServer(handler)));
  });
  after(() => server.close());

  test('one account: it is used', async () => {
    names = ['only'];
    submitted.length = 0;
    const r = await runCli(['get', 'pods', '--gateway', url]);
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(submitted, ['only']);
    const del = await runCli(['delete', 'cm', 'a', 'b', '--gateway', url]);
    assert.equal(del.code, 0, del.err);
    assert.deepEqual(submitted, ['only', 'only', 'only']);
  });

  test('none or several: exit 2 naming the choices, nothing submitted', async () => {
    submitted.length = 0;
    names = [];
    const none = await runCli(['scale', 'deploy/web', '--replicas', '1', '--gateway', url]);
    assert.equal(none.code, ExitCode.USAGE);
    assert.match(none.err, /--account is required and the gateway has no accounts yet/);
    names = ['prod-eu', 'prod-us'];
    for (const args of [
      ['get', 'pods'],
      ['get', 'pods', '--cached'],
      ['rollout', 'status', 'deploy/web'],
      ['apply', '-f', '-'],
    ]) {
      const several = await runCli([...args, '--gateway', url], { stdin: 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n' });
      assert.equal(several.code, ExitCode.USAGE, args.join(' '));
      assert.equal(
        several.err,
        'error: --account is required: the gateway has 2 accounts (prod-eu, prod-us); pass --account NAME or set OUTPOST_ACCOUNT\n',
      );
    }
    // OUTPOST_ACCOUNT stands for --account.
    const fromEnv = await runCli(['scale', 'deploy/web', '--replicas', '1', '--gateway', url], { env: { OUTPOST_ACCOUNT: 'prod-us' } });
    assert.equal(fromEnv.code, 0, fromEnv.err);
    assert.deepEqual(submitted, ['prod-us']);
  });
});
