/**
 * An agent with `clouddriver.connections: 2` (2 gateway processes on one Postgres behind a round-robin balancer, the
 * sandbox cluster): it keeps one stream on each replica, one caching the account and one standing by. Killing the
 * caching replica with SIGKILL costs the standby connection no reconnect (its session lives on); the account moves to
 * the survivor with a new lease epoch — the standby promoted, or the other connection resuming its session there,
 * whichever comes first — and operations succeed on the survivor.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startGatewayCluster, type GatewayCluster } from '../../testkit/gateway-cluster.js';

const ACCOUNT = 'sandbox';
const noPostgres = testDrivers().includes('postgres') ? false : 'needs Postgres: set OUTPOST_TEST_POSTGRES';

interface SessionRow {
  id: string;
  gateway_id: string;
  caching: string[];
  standby: string[];
}

describe('an agent with two connections (2 gateway processes)', { skip: noPostgres, concurrency: false }, () => {
  let cluster: GatewayCluster;
  let db: Database;
  const live = () =>
    cluster.sql<SessionRow>(
      `select id, gateway_id, caching, standby from agent_sessions where agent_id = 'agent-1' and ended_at is null order by connected_at`,
    );
  const holder = async () =>
    (
      await cluster.sql<{ gateway_id: string; session_id: string; lease_epoch: string }>(
        `select gateway_id, session_id, lease_epoch::text from accounts where name = $1 and state = 'ACTIVE' and lease_expires_at > now()`,
        [ACCOUNT],
      )
    )[0];

  before(async () => {
    cluster = await startGatewayCluster({
      gateways: 2,
      startTimeoutMs: 60_000,
      gatewayConfig: { replicas: { leaseSeconds: 3, standbyCheckIntervalSeconds: 0.2 }, operations: { agentWaitSeconds: 10 } },
    });
    db = await openDatabase(cluster.databaseUrl);
    await cluster.startAgent('agent-1', {
      account: { name: ACCOUNT, namespaces: ['demo'] },
      agentConfig: { clouddriver: { connections: 2 } },
    });
  });
  after(async () => {
    await db?.close().catch(() => {});
    await cluster?.close();
  });

  test('one stream on each replica: one caches the account, the other stands by', async () => {
    const rows = await eventually('two live sessions on two replicas, one caching and one standing by', async () => {
      const sessions = await live();
      if (sessions.length !== 2 || sessions[0]!.gateway_id === sessions[1]!.gateway_id) return undefined;
      const caching = sessions.filter((s) => s.caching.includes(ACCOUNT));
      const standby = sessions.filter((s) => s.standby.includes(ACCOUNT));
      return caching.length === 1 && standby.length === 1 ? sessions : undefined;
    });
    assert.deepEqual(rows.map((r) => r.gateway_id).sort(), ['gw-1', 'gw-2']);
    await waitForCacheToMatch(db, cluster.sandbox, ACCOUNT, { namespaces: ['demo'], timeoutMs: 30_000 });
  });

  test('kill -9 of the caching replica: the standby connection keeps its session, the account moves with a new epoch, operations succeed', async () => {
    const before_ = (await holder())!;
    const standby = (await live()).find((s) => s.standby.includes(ACCOUNT))!;
    assert.notEqual(standby.gateway_id, before_.gateway_id);
    await cluster.kill(before_.gateway_id, 'SIGKILL');
    const after_ = await eventually('the account held by the standby session', async () => {
      const h = await holder();
      return h && h.gateway_id === standby.gateway_id ? h : undefined;
    });
    // Whichever of the agent's streams caches now — the standby promoted, or the other connection that resumed its
    // session on the survivor first — the standby connection never had to reconnect: its session is still live.
    // The lease is claimed a moment before the new stream's session row is written: wait for the row.
    const sessions = await eventually('the caching session row written', async () => {
      const rows = await live();
      return rows.some((s) => s.id === after_.session_id) ? rows : undefined;
    });
    assert.ok(
      sessions.some((s) => s.id === standby.id),
      'the standby connection kept its session (no reconnect)',
    );
    assert.ok(Number(after_.lease_epoch) > Number(before_.lease_epoch), 'a new lease epoch');
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-failover', namespace: 'demo' },
      data: {},
    });
    const res = await fetch(`${cluster.gateway(standby.gateway_id).httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        account: ACCOUNT,
        wait: true,
        timeout: '20s',
        get: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: 'after-failover' },
      }),
    });
    const body = (await res.json()) as { operation?: { state: string } };
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.operation?.state, 'OPERATION_STATE_SUCCEEDED', JSON.stringify(body));
    await waitForCacheToMatch(db, cluster.sandbox, ACCOUNT, { namespaces: ['demo'], timeoutMs: 30_000 });
  });
});
