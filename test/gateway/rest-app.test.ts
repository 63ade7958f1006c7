/**
 * REST routes without a socket (Hono's app.request): health states that need a broken database or a draining gateway.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Database } from '../../src/db/database.js';
import { createRestApp } from '../../src/gateway/rest/rest-app.js';
import { createSilentLogger } from '../../src/shared/logger.js';

function fakeDatabase(execute: () => Promise<unknown>): Database {
  return {
    db: { execute } as unknown as Database['db'],
    driver: 'pglite',
    client: undefined as unknown as Database['client'],
    displayUrl: 'memory://',
    close: async () => {},
  };
}

describe('REST app', () => {
  const base = { id: 'gw-x', baseUrl: () => 'http://gw-x:7002', logger: createSilentLogger() };

  test('health is 503 while the database is unreachable, and says nothing about why', async () => {
    const app = createRestApp({
      ...base,
      database: fakeDatabase(async () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.1:5432'))),
      isDraining: () => false,
    });
    const res = await app.request('/health');
    assert.equal(res.status, 503);
    const body = (await res.json()) as Record<string, string>;
    assert.equal(body.status, 'unavailable');
    assert.equal(body.database, 'unreachable');
    assert.ok(!JSON.stringify(body).includes('ECONNREFUSED'));
  });

  test('health times out on a hanging database', async () => {
    const app = createRestApp({
      ...base,
      database: fakeDatabase(() => new Promise(() => {})),
      isDraining: () => false,
      healthTimeoutMs: 50,
    });
    assert.equal((await app.request('/health')).status, 503);
  });

  test('health is 503 draining during shutdown, and the instance is listed as not ready', async () => {
    const app = createRestApp({ ...base, database: fakeDatabase(async () => []), isDraining: () => true });
    const res = await app.request('/health');
    assert.equal(res.status, 503);
    assert.equal(((await res.json()) as { status: string }).status, 'draining');
    const list = (await (await app.request('/armory/clouddrivers')).json()) as { ready: boolean; baseUrl: string }[];
    assert.deepEqual(
      list.map((i) => [i.ready, i.baseUrl]),
      [[false, 'http://gw-x:7002']],
    );
  });

  test('405 carries an Allow header; HEAD works on GET routes', async () => {
    const app = createRestApp({ ...base, database: fakeDatabase(async () => []), isDraining: () => false });
    const res = await app.request('/armory/clouddrivers', { method: 'POST' });
    assert.equal(res.status, 405);
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
    assert.equal((await app.request('/health', { method: 'HEAD' })).status, 200);
  });
});
