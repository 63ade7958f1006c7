/**
 * `spinnaker.enabled: false` leaves the Spinnaker module out without a code change: no Clouddriver route is served —
 * `/credentials` answers 404 in Spring's shape (its path rule and error shape still apply, once admitted) — while the
 * other modules still serve (REST `/armory`, health, the client API). With the default the same request is served.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

describe('spinnaker.enabled: false', () => {
  let off: TestGateway;
  let on: TestGateway;
  before(async () => {
    off = await startTestGateway('pglite', { spinnaker: { enabled: false } });
    on = await startTestGateway('pglite');
  });
  after(async () => {
    await off?.close();
    await on?.close();
  });

  test('no Clouddriver route: /credentials is a 404 in Spring’s shape', async () => {
    for (const path of ['/credentials', '/applications', '/task/some-id']) {
      const res = await fetch(`${off.gateway.httpUrl}${path}`);
      assert.equal(res.status, 404, path);
      const body = (await res.json()) as { status?: number; error?: string; message?: string; path?: string };
      assert.equal(body.status, 404, path);
      assert.equal(body.error, 'Not Found', path);
      assert.equal(body.path, path);
    }
  });

  test('the other modules still serve', async () => {
    assert.equal((await fetch(`${off.gateway.httpUrl}/health`)).status, 200);
    const clouddrivers = await fetch(`${off.gateway.httpUrl}/armory/clouddrivers`);
    assert.equal(clouddrivers.status, 200);
    assert.equal(((await clouddrivers.json()) as unknown[]).length, 1);
    const accounts = await fetch(`${off.gateway.httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(accounts.status, 200);
  });

  test('with the default setting /credentials is served', async () => {
    const res = await fetch(`${on.gateway.httpUrl}/credentials`);
    assert.equal(res.status, 200);
    assert.ok(Array.isArray(await res.json()));
  });
});
