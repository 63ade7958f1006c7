/**
 * The gateway serving the dashboard build at `/`: without credentials on a gateway that requires them (the files hold
 * no data; the API stays closed), with cache headers fit for hashed assets, gzip, ETags, a CSP, a rebuild picked up
 * without restart, and a clear page when nothing was built.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'node:http';
import { createRestApp } from '../../src/gateway/rest/rest-app.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const INDEX = `<!doctype html><html lang="en"><head><title>Outpost</title><script type="module" src="/assets/app-abc123.js"></script></head><body><div id="app"></div>${'<!-- padding -->'.repeat(100)}</body></html>`;

/** A GET with raw headers (fetch would hide Content-Encoding by decompressing). */
function get(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('dashboard files', () => {
  let dir: string;
  let t: TestGateway;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-web-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'app-abc123.js'), 'console.log("outpost");\n');
    t = await startTestGateway('pglite', {
      id: 'gw-web',
      insecure: false,
      auth: { tokens: [{ subject: 'reader', token: 'web-reader-token-0123456789' }] },
      authorization: { rules: [{ kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] }] },
      web: { dir },
    });
  });
  after(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the page and its assets need no credentials; the API still does', async () => {
    const page = await get(`${t.gateway.httpUrl}/`);
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-type']), /^text\/html/);
    assert.equal(page.body.toString(), INDEX);
    assert.equal(page.headers['cache-control'], 'no-cache');
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'.*frame-ancestors 'none'/);
    assert.equal(page.headers['x-content-type-options'], 'nosniff');

    const script = await get(`${t.gateway.httpUrl}/assets/app-abc123.js`);
    assert.equal(script.status, 200);
    assert.match(String(script.headers['content-type']), /^text\/javascript/);
    assert.equal(script.headers['cache-control'], 'public, max-age=31536000, immutable');

    assert.equal((await get(`${t.gateway.httpUrl}/index.html`)).status, 200);
    const missing = await get(`${t.gateway.httpUrl}/assets/nope.js`);
    assert.equal(missing.status, 404);
    assert.equal(JSON.parse(missing.body.toString()).error, 'not_found');
    assert.equal(
      (await get(`${t.gateway.httpUrl}/assets/../index.html`)).status,
      200,
      'dot segments are resolved by URL parsing, never outside the build',
    );

    assert.equal((await get(`${t.gateway.httpUrl}/armory/accounts`)).status, 401);
    assert.equal((await get(`${t.gateway.httpUrl}/other`)).status, 401, 'paths outside the dashboard keep their rule');
    const api = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.FleetService/GetFleet`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(api.status, 401);
  });

  test('gzip when accepted, 304 for a known ETag, and a rebuild is served without restart', async () => {
    const zipped = await get(`${t.gateway.httpUrl}/`, { 'accept-encoding': 'gzip, br' });
    assert.equal(zipped.headers['content-encoding'], 'gzip');
    assert.ok(zipped.body.length < INDEX.length / 2, 'compressed');
    const etag = String(zipped.headers.etag);
    assert.equal((await get(`${t.gateway.httpUrl}/`, { 'if-none-match': etag })).status, 304);

    writeFileSync(join(dir, 'index.html'), INDEX.replace('Outpost', 'Outpost v2'));
    const later = new Date(Date.now() + 5000);
    utimesSync(join(dir, 'index.html'), later, later);
    const rebuilt = await get(`${t.gateway.httpUrl}/`, { 'if-none-match': etag });
    assert.equal(rebuilt.status, 200);
    assert.match(rebuilt.body.toString(), /Outpost v2/);
  });
});

describe('dashboard not built or disabled', () => {
  const options = (webDir?: string) => ({
    id: 'r',
    baseUrl: () => 'http://x',
    database: {} as never,
    isDraining: () => false,
    logger: createSilentLogger(),
    webDir,
  });

  test('no build: `/` says how to build it (503), the rest of the gateway is unaffected', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'outpost-web-empty-'));
    try {
      const res = await createRestApp(options(empty)).request('/');
      assert.equal(res.status, 503);
      assert.match(await res.text(), /npm run build/);
      assert.equal((await createRestApp(options(empty)).request('/armory/clouddrivers')).status, 200);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  test('web.enabled false: no dashboard route', async () => {
    const res = await createRestApp(options(undefined)).request('/');
    assert.equal(res.status, 404);
  });
});
