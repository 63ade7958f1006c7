/**
 * `http/file` artifacts against a static HTTP server on 127.0.0.1 (port 0) with Basic authentication: the right
 * credentials fetch the file, wrong ones are the upstream's 401 as a 502; the size limit (declared and streamed),
 * the redirect limit, a redirect to a refused address (cloud metadata) and a loopback target for an account that
 * does not allow it are refused; the Authorization header never follows a redirect to another origin; the total
 * timeout ends a server that never finishes. The password never appears in an answer, the listing or a log line,
 * also when the upstream echoes it (and a URL with credentials) in its status line.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type ArtifactGateway, springError, startArtifactGateway, startTestServer, type TestServer } from './artifact-gateway.js';

const PASSWORD = 'http-s3cret-Pa55word-value';
const BASIC = `Basic ${Buffer.from(`deployer:${PASSWORD}`).toString('base64')}`;
const FILE = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-http\n';

describe('artifacts: http/file', () => {
  let gw: ArtifactGateway;
  let server: TestServer;
  let other: TestServer;
  before(async () => {
    other = await startTestServer((_req, res) => res.end('elsewhere'));
    server = await startTestServer((req, res) => {
      const path = req.url ?? '/';
      if (path === '/public.yaml') return void res.end(FILE);
      if (req.headers.authorization !== BASIC) {
        res.writeHead(401, { 'www-authenticate': 'Basic realm="x"' });
        return void res.end('no');
      }
      if (path === '/manifest.yaml') return void res.end(FILE);
      if (path === '/big-declared') {
        res.writeHead(200, { 'content-length': String(64 * 1024) });
        return void res.end(Buffer.alloc(64 * 1024, 'a'));
      }
      if (path === '/big-streamed') {
        res.writeHead(200); // chunked: no length to check before reading
        for (let i = 0; i < 64; i++) res.write(Buffer.alloc(1024, 'b'));
        return void res.end();
      }
      const loop = /^\/loop\/(\d+)$/.exec(path);
      if (loop) {
        res.writeHead(302, { location: `/loop/${Number(loop[1]) + 1}` });
        return void res.end();
      }
      if (path === '/redirect-once') {
        res.writeHead(301, { location: '/manifest.yaml' });
        return void res.end();
      }
      if (path === '/to-metadata') {
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/iam/security-credentials/' });
        return void res.end();
      }
      if (path === '/to-other-origin') {
        res.writeHead(307, { location: `${other.url}/file` });
        return void res.end();
      }
      if (path === '/echo-secrets') {
        res.writeHead(500, `failed for http://deployer:${PASSWORD}@internal.example/x with ${PASSWORD}`);
        return void res.end();
      }
      if (path === '/never-ends') {
        res.writeHead(200);
        res.write('partial');
        return; // the body never ends
      }
      res.writeHead(404);
      res.end();
    });
    const dir = mkdtempSync(join(tmpdir(), 'outpost-artifacts-http-'));
    writeFileSync(join(dir, 'password'), `${PASSWORD}\n`);
    writeFileSync(join(dir, 'wrong'), 'not-the-password');
    gw = await startArtifactGateway({
      maxBytes: 16 * 1024,
      maxRedirects: 3,
      timeoutSeconds: 3,
      http: {
        accounts: [
          { name: 'intranet', username: 'deployer', passwordFile: join(dir, 'password'), allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'intranet-wrong', username: 'deployer', passwordFile: join(dir, 'wrong'), allowedPrivateNetworks: ['127.0.0.1/32'] },
          { name: 'public-only' },
        ],
      },
    });
  });
  after(async () => {
    await gw?.close();
    await server?.close();
    await other?.close();
  });

  const fetchFrom = (account: string, reference: string) =>
    gw.fetchArtifact({ type: 'http/file', reference, artifactAccount: account, name: 'm' });

  test('with the right credentials the file comes back as is; wrong ones are a 502 naming the 401', async () => {
    const ok = await fetchFrom('intranet', `${server.url}/manifest.yaml`);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.toString(), FILE);
    assert.equal(server.requests.at(-1)?.headers.authorization, BASIC);
    const wrong = await fetchFrom('intranet-wrong', `${server.url}/manifest.yaml`);
    assert.equal(wrong.status, 502);
    assert.match(springError(wrong.body).message, /answered 401/);
  });

  test('an artifact over maxBytes fails with a clear 502, declared or streamed', async () => {
    for (const path of ['/big-declared', '/big-streamed']) {
      const res = await fetchFrom('intranet', `${server.url}${path}`);
      assert.equal(res.status, 502, path);
      assert.match(springError(res.body).message, /larger than 16384/, path);
    }
  });

  test('redirects: one is followed; more than maxRedirects fail; each hop is checked again', async () => {
    const once = await fetchFrom('intranet', `${server.url}/redirect-once`);
    assert.equal(once.status, 200);
    assert.equal(once.body.toString(), FILE);
    const loop = await fetchFrom('intranet', `${server.url}/loop/0`);
    assert.equal(loop.status, 502);
    assert.match(springError(loop.body).message, /redirected more than 3 times/);
    assert.ok(server.requests.some((r) => r.url === '/loop/3'));
    assert.ok(!server.requests.some((r) => r.url === '/loop/4'), 'the fourth redirect is not followed');
    const metadata = await fetchFrom('intranet', `${server.url}/to-metadata`);
    assert.equal(metadata.status, 400);
    assert.match(springError(metadata.body).message, /refused to fetch http:\/\/169\.254\.169\.254\/.*link-local/);
  });

  test('the Authorization header does not follow a redirect to another origin', async () => {
    const res = await fetchFrom('intranet', `${server.url}/to-other-origin`);
    assert.equal(res.status, 200);
    assert.equal(res.body.toString(), 'elsewhere');
    assert.equal(other.requests.at(-1)?.headers.authorization, undefined);
  });

  test('loopback is refused to an account that does not allow it, by address and by name', async () => {
    const before = server.requests.length;
    for (const reference of [`${server.url}/public.yaml`, `http://localhost:${server.port}/public.yaml`, `http://[::1]:${server.port}/x`]) {
      const res = await fetchFrom('public-only', reference);
      assert.equal(res.status, 400, reference);
      assert.match(springError(res.body).message, /loopback, link-local, private or reserved/);
    }
    assert.equal(server.requests.length, before, 'nothing reached the server');
    const scheme = await fetchFrom('public-only', 'file:///etc/passwd');
    assert.equal(scheme.status, 400);
    const userinfo = await fetchFrom('intranet', `http://someone:pw@127.0.0.1:${server.port}/manifest.yaml`);
    assert.equal(userinfo.status, 400);
    assert.ok(!userinfo.body.toString().includes('pw@'));
  });

  test('a fetch that does not complete within timeoutSeconds fails', async () => {
    const res = await fetchFrom('intranet', `${server.url}/never-ends`);
    assert.equal(res.status, 502);
    assert.match(springError(res.body).message, /did not complete within 3 s/);
  });

  test('the password appears in no answer, listing or log line, also when the upstream echoes it', async () => {
    const echoed = await fetchFrom('intranet', `${server.url}/echo-secrets`);
    assert.equal(echoed.status, 502);
    const message = springError(echoed.body).message;
    assert.match(message, /answered 500/);
    assert.ok(!message.includes(PASSWORD), message);
    assert.match(message, /http:\/\/\*\*\*@internal\.example/);
    const listing = await gw.get('/artifacts/credentials');
    assert.deepEqual(
      listing.body.filter((a: { type: string }) => a.type === 'artifacts-http'),
      [
        { name: 'intranet', types: ['http/file'], type: 'artifacts-http' },
        { name: 'intranet-wrong', types: ['http/file'], type: 'artifacts-http' },
        { name: 'public-only', types: ['http/file'], type: 'artifacts-http' },
      ],
    );
    const logs = gw.logs();
    assert.match(logs, /artifact fetched/);
    assert.match(logs, /artifact fetch failed/);
    for (const secret of [PASSWORD, BASIC, BASIC.slice(6)]) assert.ok(!logs.includes(secret), 'no credential in the logs');
  });
});
