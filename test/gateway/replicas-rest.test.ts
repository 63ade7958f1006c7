/**
 * `/armory/clouddrivers` over a real heartbeat directory (PGlite): this replica is listed before its first heartbeat
 * and as it sees itself (draining → not ready at once, whatever its row still says); peers come from the directory.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDatabase } from '../../src/db/database.js';
import { createHeartbeatDirectory } from '../../src/gateway/replicas/heartbeat-directory.js';
import { createRestApp } from '../../src/gateway/rest/rest-app.js';
import { createSilentLogger } from '../../src/shared/logger.js';

interface Instance {
  id: string;
  baseUrl: string;
  lastUpdated: string;
  ready: boolean;
}

describe('REST: /armory/clouddrivers', () => {
  test('lists this replica before its first heartbeat, peers from the directory, and itself as it sees itself', {
    timeout: 120_000,
  }, async () => {
    const database = await openDatabase('memory://');
    const logger = createSilentLogger();
    let draining = false;
    const common = { database, heartbeatIntervalSeconds: 60, deadAfterSeconds: 180, logger };
    const own = createHeartbeatDirectory({ ...common, id: 'gw-1', baseUrl: () => 'http://gw-1:7002', isDraining: () => draining });
    const peer = createHeartbeatDirectory({ ...common, id: 'gw-2', baseUrl: () => 'http://gw-2:7002', isDraining: () => false });
    const app = createRestApp({
      id: 'gw-1',
      baseUrl: () => 'http://gw-1:7002',
      database,
      isDraining: () => draining,
      logger,
      replicas: own,
    });
    const list = async () =>
      ((await (await app.request('/armory/clouddrivers')).json()) as Instance[]).map((r) => `${r.id} ${r.baseUrl} ${r.ready}`);
    try {
      // Not started: no heartbeat, empty directory; this replica is still listed.
      assert.deepEqual(await list(), ['gw-1 http://gw-1:7002 true']);
      assert.equal((await app.request('/armory/clouddrivers/gw-2')).status, 404);

      await peer.start();
      await own.start();
      assert.deepEqual(await list(), ['gw-1 http://gw-1:7002 true', 'gw-2 http://gw-2:7002 true']);
      const res = await app.request('/armory/clouddrivers/gw-2');
      assert.equal(res.status, 200);
      const body = (await res.json()) as Instance;
      assert.deepEqual({ ...body, lastUpdated: '' }, { id: 'gw-2', baseUrl: 'http://gw-2:7002', lastUpdated: '', ready: true });
      assert.ok(Math.abs(Date.parse(body.lastUpdated) - Date.now()) < 120_000, `${body.lastUpdated}: a date, and a recent one`);

      // Draining shows at once on this replica, before the next heartbeat rewrites its row.
      draining = true;
      assert.deepEqual(await list(), ['gw-1 http://gw-1:7002 false', 'gw-2 http://gw-2:7002 true']);
      assert.equal(((await (await app.request('/armory/clouddrivers/gw-1')).json()) as Instance).ready, false);
    } finally {
      await peer.close();
      await own.close();
      await database.close();
    }
  });
});
