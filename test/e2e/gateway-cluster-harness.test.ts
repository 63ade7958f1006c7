/**
 * Smoke test of the multi-process harness (test/helpers/gateway-cluster.ts): 3 gateway processes on one Postgres
 * database, an agent process behind the round-robin balancer; kill -9 the replica holding the agent's stream and the
 * agent reconnects through the balancer to another one; stop/continue and restart a replica; `close()` leaves no
 * child behind. Postgres only (the replicas must share a database).
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startBalancer } from '../helpers/balancer.js';
import { testDrivers } from '../helpers/databases.js';
import { startGatewayCluster, type GatewayCluster } from '../helpers/gateway-cluster.js';
import { processState } from '../helpers/outpost-process.js';

/** Polls `fn` until it returns a truthy value; the last error or value is in the timeout message. */
async function eventually<T>(what: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function getJson<T>(url: string, init?: RequestInit): Promise<T> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(3000) });
  if (res.status !== 200) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

interface Account {
  name: string;
  state: string;
  agentId?: string;
  gatewayId?: string;
}

const listAccounts = (httpUrl: string) =>
  getJson<{ accounts?: Account[] }>(`${httpUrl}/outpost.api.v1.AccountService/ListAccounts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  }).then((r) => r.accounts ?? []);

const liveSessions = (cluster: GatewayCluster, agentId: string) =>
  cluster.sql<{ id: string; gateway_id: string }>('select id, gateway_id from agent_sessions where agent_id = $1 and ended_at is null order by connected_at', [agentId]);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test('balancer: round-robin, skips refused targets, counts and cuts connections', async () => {
  const servers = await Promise.all(
    [0, 1].map(
      () =>
        new Promise<net.Server>((resolve) => {
          const s = net.createServer((c) => c.pipe(c)); // echo
          s.listen(0, '127.0.0.1', () => resolve(s));
        }),
    ),
  );
  const [a, b] = servers.map((s) => (s.address() as net.AddressInfo).port) as [number, number];
  const refused = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
  const balancer = await startBalancer([a, refused, b]);
  const clients: net.Socket[] = [];
  try {
    for (let i = 0; i < 4; i++) {
      const c = net.connect(balancer.port, '127.0.0.1');
      clients.push(c);
      const echoed = new Promise<string>((resolve) => c.once('data', (d) => resolve(d.toString())));
      c.write(`hello ${i}`);
      assert.equal(await echoed, `hello ${i}`);
    }
    // a, (refused → b), b, a: the refused target is skipped, never counted.
    assert.deepEqual([balancer.connectionsTo(a), balancer.connectionsTo(b), balancer.connectionsTo(refused)], [2, 2, 0]);
    const closed = Promise.all(clients.map((c) => new Promise((resolve) => c.once('close', resolve))));
    balancer.cutAll();
    await closed;
    assert.equal(balancer.connectionsTo(a) + balancer.connectionsTo(b), 0);
    balancer.setTargets([refused]);
    const lone = net.connect(balancer.port, '127.0.0.1');
    await new Promise((resolve) => lone.once('close', resolve)); // every target refuses: the client is destroyed
  } finally {
    for (const c of clients) c.destroy();
    await balancer.close();
    await balancer.close(); // idempotent
    for (const s of servers) await new Promise((resolve) => s.close(resolve));
  }
});

const noPostgres = testDrivers().includes('postgres') ? false : 'needs Postgres: set OUTPOST_TEST_POSTGRES=postgres://postgres@127.0.0.1:5432/postgres';

describe('gateway cluster harness: 3 gateway processes, 1 agent process behind the balancer', { skip: noPostgres }, () => {
  let cluster: GatewayCluster;
  let holder = '';
  const pids: number[] = [];

  before(async () => {
    cluster = await startGatewayCluster({ startTimeoutMs: 30_000 });
  });
  after(async () => {
    await cluster?.close();
  });

  test('every replica lists the 3 replicas as ready', async () => {
    const gw1 = cluster.gateway('gw-1');
    assert.match(gw1.httpUrl, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.notEqual(gw1.grpcUrl, gw1.httpUrl);
    for (const name of cluster.gatewayNames) {
      await eventually(`${name} to list 3 ready replicas`, async () => {
        const list = await getJson<{ id: string; ready: boolean }[]>(`${cluster.gateway(name).httpUrl}/armory/clouddrivers`);
        return list.length === 3 && list.every((r) => r.ready) && list.map((r) => r.id).join() === 'gw-1,gw-2,gw-3';
      });
    }
  });

  test('the agent is welcomed through the balancer: one live stream on one replica', async () => {
    await cluster.startAgent('agent-1', { account: { name: 'sandbox', namespaces: ['demo'] } });
    assert.ok(cluster.isRunning('agent-1'));
    assert.match(cluster.logs('agent-1'), /welcomed by the gateway/);
    const [session, ...more] = await eventually('a live agent session row', async () => {
      const rows = await liveSessions(cluster, 'agent-1');
      return rows.length > 0 ? rows : undefined;
    });
    assert.equal(more.length, 0, 'one live session');
    holder = session!.gateway_id;
    assert.ok(cluster.gatewayNames.includes(holder), `holder ${holder}`);
    assert.equal(cluster.balancer.connectionsTo(cluster.gateway(holder).grpcPort), 1);
    // Any replica reports the stream (REST reads the shared table).
    const other = cluster.gatewayNames.find((n) => n !== holder)!;
    const agents = await getJson<{ agentId: string; gatewayId: string }[]>(`${cluster.gateway(other).httpUrl}/armory/agents`);
    assert.deepEqual(agents.map((a) => [a.agentId, a.gatewayId]), [['agent-1', holder]]);
  });

  test('the agent account is listed ACTIVE by ListAccounts', async () => {
    const account = await eventually('account sandbox ACTIVE', async () => {
      const found = (await listAccounts(cluster.gateway('gw-1').httpUrl)).find((a) => a.name === 'sandbox');
      return found?.state === 'ACTIVE' ? found : undefined;
    });
    assert.equal(account.agentId, 'agent-1');
  });

  test('kill -9 of the replica holding the stream: the agent reconnects to another replica within 10 s', async (t) => {
    assert.ok(holder, 'a previous test found the holder');
    const port = cluster.gateway(holder).grpcPort;
    const killedAt = Date.now();
    await cluster.kill(holder, 'SIGKILL');
    assert.equal(cluster.isRunning(holder), false);
    const [moved] = await eventually(
      'a live session on another replica',
      async () => {
        const rows = (await liveSessions(cluster, 'agent-1')).filter((r) => r.gateway_id !== holder);
        return rows.length > 0 ? rows : undefined;
      },
      10_000,
    );
    const seconds = (Date.now() - killedAt) / 1000;
    assert.notEqual(moved!.gateway_id, holder);
    assert.equal(cluster.balancer.connectionsTo(port), 0);
    assert.equal(cluster.balancer.connectionsTo(cluster.gateway(moved!.gateway_id).grpcPort), 1);
    // The gateway records the session before the agent logs its Welcome: the second line can come a moment later.
    await eventually('the agent to log a second Welcome', async () => (cluster.logs('agent-1').match(/welcomed by the gateway/g)?.length ?? 0) >= 2, 5000);
    t.diagnostic(`reconnected to ${moved!.gateway_id} ${seconds.toFixed(1)} s after the kill`);
  });

  test('the account is ACTIVE again on a surviving replica', async () => {
    const survivor = cluster.gatewayNames.find((n) => n !== holder)!;
    await eventually(
      'account sandbox ACTIVE on a survivor',
      async () => {
        const found = (await listAccounts(cluster.gateway(survivor).httpUrl)).find((a) => a.name === 'sandbox');
        return found?.state === 'ACTIVE' && found.gatewayId !== holder ? found : undefined;
      },
      10_000,
    );
  });

  test('SIGSTOP / SIGCONT a replica, restart the killed one on the same ports', async () => {
    const frozen = cluster.gatewayNames.find((n) => n !== holder && cluster.isRunning(n))!;
    await cluster.kill(frozen, 'SIGSTOP');
    assert.ok(cluster.isStopped(frozen) && cluster.isRunning(frozen));
    assert.equal(processState(cluster.pid(frozen)!), 'T');
    await cluster.kill(frozen, 'SIGCONT');
    assert.equal(cluster.isStopped(frozen), false);
    assert.notEqual(processState(cluster.pid(frozen)!), 'T');

    const oldPid = cluster.pid(holder)!;
    await cluster.restartGateway(holder);
    assert.ok(cluster.isRunning(holder));
    assert.notEqual(cluster.pid(holder), oldPid);
    const health = await getJson<{ id: string }>(`${cluster.gateway(holder).httpUrl}/health`);
    assert.equal(health.id, holder);
    // The banner may reach the file a moment after /health answers.
    await eventually('the log file to hold both runs', async () => /outpost gateway [\s\S]*outpost gateway /.test(cluster.logs(holder)), 5000);
  });

  test('close() kills every child, including a stopped one', async () => {
    await cluster.kill('gw-2', 'SIGSTOP');
    for (const name of [...cluster.gatewayNames, 'agent-1']) pids.push(cluster.pid(name)!);
    assert.ok(pids.every(alive));
    await cluster.close();
    await cluster.close(); // idempotent
    assert.deepEqual(pids.filter(alive), []);
    await assert.rejects(cluster.sql('select 1'), /closed/);
  });
});
