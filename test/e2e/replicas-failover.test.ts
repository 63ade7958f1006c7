/**
 * Gateway replicas end to end, as separate processes on one Postgres: 3 gateway processes, 2 agent processes for the
 * same account (one caches, one stands by) behind a round-robin balancer, and the sandbox cluster. Operations are
 * submitted to every replica; the replica holding the caching stream is killed with SIGKILL while operations flow;
 * the caching agent is killed; a replica is paused (SIGSTOP) past its lease and resumed. After each fault every
 * operation ends terminal, none is applied twice (each operation appends its own finalizer to one ConfigMap with a
 * JSON patch, so a second application would show), and the cache equals the cluster (exact keys and
 * resourceVersions).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase, type Database } from '../../src/db/database.js';
import { waitForCacheToMatch } from '../../testkit/cache-compare.js';
import { testDrivers } from '../../testkit/databases.js';
import { startGatewayCluster, type GatewayCluster } from '../../testkit/gateway-cluster.js';
import { eventually } from '../../testkit/eventually.js';

const ACCOUNT = 'sandbox';
const LEDGER = 'ledger';
const noPostgres = testDrivers().includes('postgres') ? false : 'needs Postgres: set OUTPOST_TEST_POSTGRES';

interface OperationJson {
  id: string;
  state: string;
  error?: string;
  agentId?: string;
}

describe('gateway replicas: failover of replicas and agents (3 gateway processes, 2 agents)', {
  skip: noPostgres,
  concurrency: false,
}, () => {
  let cluster: GatewayCluster;
  let db: Database;
  let seq = 0;
  const submitted: OperationJson[] = [];

  /** Submits (wait) to `gateway`; UNAVAILABLE / network errors → undefined (the caller retries the same id elsewhere). */
  async function submitTo(gateway: string, body: Record<string, unknown>): Promise<OperationJson | undefined> {
    try {
      const res = await fetch(`${cluster.gateway(gateway).httpUrl}/outpost.api.v1.OperationService/SubmitOperation`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ account: ACCOUNT, wait: true, timeout: '20s', ...body }),
        signal: AbortSignal.timeout(30_000),
      });
      const json = (await res.json()) as { operation?: OperationJson; code?: string; message?: string };
      if (res.status !== 200) {
        if (json.code === 'unavailable') return undefined;
        throw new Error(`${gateway}: ${res.status} ${JSON.stringify(json)}`);
      }
      // Protobuf JSON names enum values in full (OPERATION_STATE_SUCCEEDED).
      return json.operation && { ...json.operation, state: json.operation.state.replace(/^OPERATION_STATE_/, '') };
    } catch (err) {
      if (err instanceof Error && /fetch failed|aborted|timeout/i.test(err.message)) return undefined;
      throw err;
    }
  }

  /** One ledger append with its own id, retried on the other live replicas until a replica answers. */
  async function append(preferred: string): Promise<OperationJson> {
    const id = `ledger-op-${++seq}`;
    const patch = JSON.stringify([{ op: 'add', path: '/metadata/finalizers/-', value: `outpost.test/${id}` }]);
    const body = { id, patch: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'demo', name: LEDGER, type: 'PATCH_TYPE_JSON', patch } };
    const order = [preferred, ...cluster.gatewayNames.filter((g) => g !== preferred)];
    for (let round = 0; round < 10; round++) {
      for (const gw of order) {
        if (!cluster.isRunning(gw) || cluster.isStopped(gw)) continue;
        const op = await submitTo(gw, body);
        if (op && ['SUCCEEDED', 'FAILED', 'TIMED_OUT'].includes(op.state)) {
          submitted.push(op);
          return op;
        }
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error(`operation ${id} never reached a terminal state`);
  }

  /** Every terminal operation applied at most once; every SUCCEEDED one exactly once. */
  function checkLedger(): void {
    const cm = cluster.sandbox.store.get('v1', 'ConfigMap', 'demo', LEDGER) as { metadata: { finalizers?: string[] } };
    const entries = (cm.metadata.finalizers ?? []).filter((f) => f.startsWith('outpost.test/ledger-op-'));
    const counts = new Map<string, number>();
    for (const e of entries) counts.set(e, (counts.get(e) ?? 0) + 1);
    for (const [entry, n] of counts) assert.equal(n, 1, `${entry} applied ${n} times`);
    for (const op of submitted.filter((o) => o.state === 'SUCCEEDED'))
      assert.equal(counts.get(`outpost.test/${op.id}`), 1, `${op.id} succeeded but is not in the ledger`);
  }

  /**
   * Asserts the operation succeeded; a failure names its error and every log line (gateways and agents) that mentions
   * its id, which is what tells a lost result from a never-sent operation.
   */
  function assertSucceeded(op: OperationJson, where: string): void {
    if (op.state === 'SUCCEEDED') return;
    const lines = [...cluster.gatewayNames, 'agent-1', 'agent-2'].flatMap((name) =>
      cluster
        .logs(name)
        .split('\n')
        .filter((line) => line.includes(op.id))
        .map((line) => `${name}: ${line}`),
    );
    assert.fail(`${where}: ${JSON.stringify(op)}\n${lines.join('\n')}`);
  }

  const holder = async () =>
    (
      await cluster.sql<{ gateway_id: string; agent_id: string; lease_epoch: string }>(
        `select gateway_id, agent_id, lease_epoch::text from accounts where name = $1 and state = 'ACTIVE' and lease_expires_at > now()`,
        [ACCOUNT],
      )
    )[0];
  const converged = () => waitForCacheToMatch(db, cluster.sandbox, ACCOUNT, { namespaces: ['demo'], timeoutMs: 30_000 });

  before(async () => {
    cluster = await startGatewayCluster({
      startTimeoutMs: 60_000,
      // Operations are logged at debug: a failed assertion shows each one's path through replicas and agents.
      logLevel: 'debug',
      gatewayConfig: { replicas: { leaseSeconds: 3, standbyCheckIntervalSeconds: 0.2 }, operations: { agentWaitSeconds: 10 } },
    });
    db = await openDatabase(cluster.databaseUrl);
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: LEDGER, namespace: 'demo', finalizers: ['outpost.test/base'] },
      data: {},
    });
    await cluster.startAgent('agent-1', { account: { name: ACCOUNT, namespaces: ['demo'] } });
    await eventually('agent-1 caching', async () => (await holder())?.agent_id === 'agent-1');
    await cluster.startAgent('agent-2', { account: { name: ACCOUNT, namespaces: ['demo'] } });
  });
  after(async () => {
    await db?.close().catch(() => {});
    await cluster?.close();
  });

  test('one agent caches and the other stands by; every replica lists the others; an operation submitted to each replica succeeds', async () => {
    for (const gw of cluster.gatewayNames) {
      await eventually(`${gw} to list 3 ready replicas`, async () => {
        const res = await fetch(`${cluster.gateway(gw).httpUrl}/armory/clouddrivers`);
        const list = (await res.json()) as { id: string; ready: boolean }[];
        return list.length === 3 && list.every((r) => r.ready) && list.map((r) => r.id).join() === 'gw-1,gw-2,gw-3';
      });
    }
    const standby = await eventually('agent-2 standing by', async () => {
      const rows = await cluster.sql<{ standby: string[] }>(
        `select standby from agent_sessions where agent_id = 'agent-2' and ended_at is null`,
      );
      return rows.find((r) => r.standby.includes(ACCOUNT));
    });
    assert.ok(standby);
    for (const gw of cluster.gatewayNames) assertSucceeded(await append(gw), gw);
    checkLedger();
    await converged();
  });

  test('kill -9 of the replica holding the caching stream while operations flow: nothing lost or applied twice, the cache converges', async () => {
    const before_ = (await holder())!;
    const flowing = (async () => {
      const ops: OperationJson[] = [];
      for (let i = 0; i < 9; i++) ops.push(await append(cluster.gatewayNames[i % 3]!));
      return ops;
    })();
    await new Promise((r) => setTimeout(r, 500));
    await cluster.kill(before_.gateway_id, 'SIGKILL');
    const ops = await flowing;
    const after_ = await eventually('the account owned by a live replica', async () => {
      const h = await holder();
      return h && h.gateway_id !== before_.gateway_id ? h : undefined;
    });
    assert.ok(Number(after_.lease_epoch) > Number(before_.lease_epoch), 'a new epoch');
    assert.ok(ops.filter((o) => o.state === 'SUCCEEDED').length >= 6, JSON.stringify(ops.map((o) => [o.id, o.state, o.error])));
    // After the failover every operation succeeds.
    for (const gw of cluster.gatewayNames.filter((g) => g !== before_.gateway_id)) assertSucceeded(await append(gw), gw);
    checkLedger();
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-replica-kill', namespace: 'demo' },
      data: { a: '1' },
    });
    await converged();
    await cluster.restartGateway(before_.gateway_id);
  });

  test('kill -9 of the caching agent: the standby is promoted, resumes from the stored resourceVersions and runs the operations', async () => {
    const before_ = (await holder())!;
    const other = before_.agent_id === 'agent-1' ? 'agent-2' : 'agent-1';
    await cluster.kill(before_.agent_id, 'SIGKILL');
    const after_ = await eventually('the standby agent caching', async () => {
      const h = await holder();
      return h?.agent_id === other ? h : undefined;
    });
    assert.ok(Number(after_.lease_epoch) > Number(before_.lease_epoch));
    await eventually('the promoted agent to log it', async () => /promoted to caching by the gateway/.test(cluster.logs(other)), {
      timeoutMs: 30_000,
    });
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-agent-kill', namespace: 'demo' },
      data: { b: '2' },
    });
    for (const gw of cluster.gatewayNames) assertSucceeded(await append(gw), gw);
    checkLedger();
    await converged();
    await cluster.restartAgent(before_.agent_id);
  });

  test('a replica paused (SIGSTOP) past its lease loses the account: the agent moves, and after SIGCONT the old replica writes nothing', async () => {
    const before_ = (await holder())!;
    await cluster.kill(before_.gateway_id, 'SIGSTOP');
    const after_ = await eventually(
      'the account owned by another replica',
      async () => {
        const h = await holder();
        return h && h.gateway_id !== before_.gateway_id ? h : undefined;
      },
      { timeoutMs: 30_000 },
    );
    // Past the paused replica's lease (3 s) and then some, with changes flowing to the new owner.
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'while-paused', namespace: 'demo' },
      data: { c: '3' },
    });
    await new Promise((r) => setTimeout(r, 3500));
    await cluster.kill(before_.gateway_id, 'SIGCONT');
    await new Promise((r) => setTimeout(r, 2000));
    const now = (await holder())!;
    assert.equal(now.gateway_id, after_.gateway_id, 'the resumed replica did not take the account back');
    assert.equal(now.lease_epoch, after_.lease_epoch, 'no claim since the takeover');
    for (const gw of cluster.gatewayNames) assertSucceeded(await append(gw), gw);
    checkLedger();
    cluster.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'after-resume', namespace: 'demo' },
      data: { d: '4' },
    });
    await converged();
  });

  test('close() leaves no child process behind, a stopped one included', async () => {
    await cluster.kill('gw-2', 'SIGSTOP');
    const pids = [...cluster.gatewayNames, 'agent-1', 'agent-2'].map((n) => cluster.pid(n)!).filter((p) => p !== undefined);
    await db.close();
    await cluster.close();
    const alive = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    assert.deepEqual(alive, []);
  });
});
