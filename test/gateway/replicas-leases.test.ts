/**
 * Account ownership across gateway replicas (docs/architecture.md, rule 4), with two in-process gateways sharing one Postgres:
 * the lease decides CACHING vs STANDBY across replicas, a STANDBY stream is promoted when the holder goes away,
 * a resumed session takes its lease over at once, and a replica whose lease is gone can no longer write.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Verdict, type AccountVerdicts, type Welcome } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { loadGatewayConfig, startGateway, type GatewayConfigInput, type RunningGateway } from '../../src/gateway/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { EventType, SyncPhase, configMap, event, hello, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const pg = testDrivers().includes('postgres');
const cluster = { leaseSeconds: 30, standbyCheckIntervalSeconds: 0.1 };

async function startPeer(url: string, id: string, overrides: GatewayConfigInput = {}): Promise<RunningGateway> {
  const config = loadGatewayConfig({
    env: {},
    overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: url, id, insecure: true, replicas: cluster, ...overrides },
  });
  return startGateway(config, { logger: createSilentLogger() });
}

async function welcome(stream: TestAgentStream, message: ReturnType<typeof hello>): Promise<Welcome> {
  stream.send(message);
  const res = await stream.next();
  assert.equal(res.message.case, 'welcome');
  return res.message.value as Welcome;
}

async function pushedVerdicts(stream: TestAgentStream, timeoutMs = 30_000): Promise<AccountVerdicts> {
  for (;;) {
    const res = await stream.next(timeoutMs);
    if (res.message.case === 'verdicts' && res.message.value.changeId === 0n) return res.message.value;
  }
}

/** The stream acknowledges `sequence` and is told (pushed verdicts) that it serves `account` as STANDBY now. */
async function assertDemoted(stream: TestAgentStream, account: string, sequence: number): Promise<void> {
  let acked = false;
  let demoted = false;
  while (!acked || !demoted) {
    const res = await stream.next();
    if (res.message.case === 'ack' && res.message.value.sequence >= BigInt(sequence)) acked = true;
    if (res.message.case === 'verdicts' && res.message.value.changeId === 0n) {
      assert.deepEqual(
        res.message.value.accounts.map((v) => [v.account, v.verdict]),
        [[account, Verdict.STANDBY]],
      );
      assert.match(res.message.value.accounts[0]!.reason, /no longer holds the lease/);
      demoted = true;
    }
  }
}

describe('account leases across replicas (postgres)', { skip: pg ? false : 'needs OUTPOST_TEST_POSTGRES', concurrency: false }, () => {
  let a: TestGateway;
  let b: RunningGateway;
  let n = 0;
  const streams: TestAgentStream[] = [];
  const open = (url: string) => {
    const s = openAgentStream(url);
    streams.push(s);
    return s;
  };
  const lease = async (account: string) =>
    (
      await a.query<{ session_id: string; gateway_id: string; lease_epoch: string; state: string; live: boolean }>(
        `select session_id, gateway_id, lease_epoch::text, state, coalesce(lease_expires_at > now(), false) as live from accounts where name = '${account}'`,
      )
    )[0];

  before(async () => {
    a = await startTestGateway('postgres', { id: 'gw-a', replicas: cluster });
    b = await startPeer(a.testDb.url, 'gw-b');
  });
  after(async () => {
    for (const s of streams) s.abort();
    await b?.close();
    await a?.close();
  });

  test('a second agent on another replica stands by while the first holds the lease; the holder renews it', async () => {
    const account = `acct-${++n}`;
    const first = await welcome(open(a.gateway.grpcUrl), hello('agent-1', [{ name: account }]));
    assert.equal(first.accounts[0]!.verdict, Verdict.CACHING);
    const second = await welcome(open(b.grpcUrl), hello('agent-2', [{ name: account }]));
    assert.equal(second.accounts[0]!.verdict, Verdict.STANDBY);
    assert.match(second.accounts[0]!.reason, /cached by agent agent-1 .* on gateway gw-a/);
    const row = await lease(account);
    assert.deepEqual(
      [row!.session_id, row!.gateway_id, row!.lease_epoch, row!.state, row!.live],
      [first.sessionId, 'gw-a', '1', 'ACTIVE', true],
    );
  });

  test('the standby on another replica is promoted when the caching stream ends: CACHING pushed with resume points, a new epoch', async () => {
    const account = `acct-${++n}`;
    const holder = open(a.gateway.grpcUrl);
    await welcome(holder, hello('agent-1', [{ name: account }]));
    holder.send({ case: 'sync', value: { sequence: 1n, account, apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.START } });
    holder.send({ case: 'events', value: { sequence: 2n, events: [event(account, EventType.ADDED, configMap('one', 10))] } });
    holder.send({
      case: 'sync',
      value: { sequence: 3n, account, apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.END, resourceVersion: '11', count: 1n },
    });
    await holder.waitForAck(3);
    const standby = open(b.grpcUrl);
    const w = await welcome(standby, hello('agent-2', [{ name: account }]));
    assert.equal(w.accounts[0]!.verdict, Verdict.STANDBY);
    holder.abort();
    const pushed = await pushedVerdicts(standby);
    assert.equal(pushed.accounts.length, 1);
    assert.equal(pushed.accounts[0]!.account, account);
    assert.equal(pushed.accounts[0]!.verdict, Verdict.CACHING);
    assert.deepEqual(
      pushed.accounts[0]!.resume.map((r) => [r.kind, r.resourceVersion]),
      [['ConfigMap', '11']],
    );
    const row = await lease(account);
    assert.deepEqual([row!.session_id, row!.gateway_id, row!.lease_epoch], [w.sessionId, 'gw-b', '2']);
    // The promoted stream writes: its events are stored.
    standby.send({ case: 'events', value: { sequence: 1n, events: [event(account, EventType.ADDED, configMap('two', 12))] } });
    await standby.waitForAck(1);
    const names = await a.query<{ name: string }>(`select name from objects where account = '${account}' order by name`);
    assert.deepEqual(
      names.map((r) => r.name),
      ['one', 'two'],
    );
    const agents = await a.query<{ standby: string[]; caching: string[] }>(
      `select caching, standby from agent_sessions where id = '${w.sessionId}'`,
    );
    assert.deepEqual(agents[0]!.caching, [account]);
  });

  test('a session resumed on another replica takes its lease over at once; the old replica can no longer write and ends that stream', async () => {
    const account = `acct-${++n}`;
    const old = open(a.gateway.grpcUrl);
    const first = await welcome(old, hello('agent-1', [{ name: account }]));
    const resumed = open(b.grpcUrl);
    const second = await welcome(
      resumed,
      hello('agent-1', [{ name: account }], { resumeSessionId: first.sessionId, resumeSessionToken: first.sessionToken }),
    );
    assert.equal(second.accounts[0]!.verdict, Verdict.CACHING);
    const row = await lease(account);
    assert.deepEqual([row!.session_id, row!.gateway_id, row!.lease_epoch], [second.sessionId, 'gw-b', '2']);
    // The old stream on gw-a still lives (its replica does not know yet): its write is fenced off, acknowledged, and
    // the stream told it serves the account as STANDBY now.
    old.send({ case: 'events', value: { sequence: 1n, events: [event(account, EventType.ADDED, configMap('stale', 5))] } });
    await assertDemoted(old, account, 1);
    assert.equal((await a.query(`select 1 from objects where account = '${account}'`)).length, 0);
    // Its end does not release what the newer session holds.
    old.abort();
    await old.ended;
    await new Promise((r) => setTimeout(r, 200));
    const after = await lease(account);
    assert.deepEqual([after!.session_id, after!.state, after!.live], [second.sessionId, 'ACTIVE', true]);
  });

  test('fenced sync markers: a list started after the lease moved is refused and prunes nothing', async () => {
    const account = `acct-${++n}`;
    const holder = open(a.gateway.grpcUrl);
    await welcome(holder, hello('agent-1', [{ name: account }]));
    holder.send({ case: 'events', value: { sequence: 1n, events: [event(account, EventType.ADDED, configMap('kept', 3))] } });
    await holder.waitForAck(1);
    // Another replica took the account over (what an expired lease allows).
    await a.query(
      `update accounts set lease_epoch = lease_epoch + 1, session_id = 'other-session', gateway_id = 'gw-x' where name = '${account}'`,
    );
    holder.send({ case: 'sync', value: { sequence: 2n, account, apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.START } });
    await assertDemoted(holder, account, 2);
    // Later data of the account is dropped (still acknowledged), the stream lives on.
    holder.send({ case: 'events', value: { sequence: 3n, events: [event(account, EventType.ADDED, configMap('later', 6))] } });
    await holder.waitForAck(3);
    assert.equal((await a.query(`select 1 from objects where account = '${account}'`)).length, 1);
    const states = await a.query<{ sync_gen: string }>(`select sync_gen::text from watch_states where account = '${account}'`);
    assert.ok(
      states.every((s) => s.sync_gen === '0'),
      'no list generation was started',
    );
  });

  test('the holder renews its lease past its length; when the database gives the lease to another session, the next renewal demotes the stream', async () => {
    // Renewed every second: only a stall of two seconds would let the lease lapse between renewals.
    const c = await startPeer(a.testDb.url, 'gw-c', { replicas: { leaseSeconds: 3, standbyCheckIntervalSeconds: 0.1 } });
    try {
      const account = `acct-${++n}`;
      const holder = open(c.grpcUrl);
      const w = await welcome(holder, hello('agent-1', [{ name: account }]));
      await new Promise((r) => setTimeout(r, 4000));
      const renewed = await lease(account);
      assert.deepEqual([renewed!.session_id, renewed!.gateway_id, renewed!.live], [w.sessionId, 'gw-c', true]);
      // What a takeover by another replica does to the row (after this one was paused past its lease).
      await a.query(
        `update accounts set lease_epoch = lease_epoch + 1, session_id = 'other-session', gateway_id = 'gw-x' where name = '${account}'`,
      );
      const pushed = await pushedVerdicts(holder);
      assert.deepEqual(
        pushed.accounts.map((v) => [v.account, v.verdict]),
        [[account, Verdict.STANDBY]],
      );
      // The stream's end leaves the new holder's row alone.
      holder.abort();
      await holder.ended;
      await new Promise((r) => setTimeout(r, 200));
      const row = await lease(account);
      assert.deepEqual([row!.session_id, row!.state], ['other-session', 'ACTIVE']);
    } finally {
      await c.close();
    }
  });
});
