/**
 * FleetService over Connect JSON on HTTP/1.1 (what a browser speaks): GetFleet, and WatchFleet streaming a new summary
 * when an agent connects, events arrive (rate and counters move) and operations finish; each account's zone, the
 * admin's wish, its lease and its standby streams; one reading per interval
 * however many watchers; read role required; a failing database ends the stream with UNAVAILABLE.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { FleetSchema, FleetService, WatchFleetRequestSchema, type Fleet } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createFleetMonitor } from '../../src/gateway/api/fleet-monitor.js';
import { createFleetService } from '../../src/gateway/api/fleet-service.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { EventType, configMap, connectAgent, event, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { startOperationAgent } from './operations-helpers.js';

const READ_TOKEN = 'fleet-reader-token-0123456789';

/** Reads a WatchFleet stream in the background; `until` waits for a summary matching the check. */
function follow(stream: AsyncIterable<{ fleet?: Fleet }>) {
  const seen: Fleet[] = [];
  let error: unknown;
  let notify = () => {};
  const done = (async () => {
    try {
      for await (const m of stream) {
        seen.push(m.fleet!);
        notify();
      }
    } catch (err) {
      error = err;
      notify();
    }
  })();
  return {
    seen,
    done,
    error: () => error,
    async until(check: (f: Fleet) => boolean, what: string, timeoutMs = 30_000): Promise<Fleet> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const hit = seen.find(check);
        if (hit) return hit;
        if (error) throw error;
        assert.ok(
          Date.now() < deadline,
          `no summary with ${what}; last: ${JSON.stringify(seen.at(-1), (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`,
        );
        await new Promise<void>((resolve) => {
          notify = resolve;
          setTimeout(resolve, 100);
        });
      }
    },
  };
}

describe('FleetService over Connect JSON (HTTP/1.1)', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', { id: 'gw-fleet', web: { fleetPollSeconds: 0.1 } });
  });
  after(async () => {
    await t?.close();
  });

  test('WatchFleet sends the summary at once, then agents, events, rate and operations as they change', async () => {
    const transport = createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' });
    const fleet = createClient(FleetService, transport);
    const abort = new AbortController();
    const watch = follow(fleet.watchFleet({}, { signal: abort.signal }));
    const first = await watch.until(() => true, 'anything', 30_000);
    assert.equal(first.connectedAgents, 0);
    assert.deepEqual(
      first.replicas.map((r) => [r.id, r.ready]),
      [['gw-fleet', true]],
    );
    assert.equal(first.accounts.length, 0);

    const stream = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(stream, 'agent-fleet', [{ name: 'fleet-acct' }]);
    const connected = await watch.until((f) => f.connectedAgents === 1, 'one agent');
    assert.equal(connected.replicas[0]!.connectedAgents, 1);
    assert.equal(connected.accountsByState.ACTIVE, 1);

    let seq = 1n;
    for (let i = 0; i < 6; i++) {
      stream.send({
        case: 'events',
        value: {
          sequence: seq++,
          events: [
            event('fleet-acct', EventType.ADDED, configMap(`cm-${i}`, i + 1)),
            event('fleet-acct', EventType.MODIFIED, configMap(`cm-${i}`, i + 100)),
          ],
        },
      });
      await stream.waitForAck(Number(seq - 1n));
      await new Promise((r) => setTimeout(r, 250));
    }
    const counted = await watch.until((f) => f.accounts.find((a) => a.name === 'fleet-acct')?.eventsTotal === 12n, '12 events');
    const activity = counted.accounts.find((a) => a.name === 'fleet-acct')!;
    assert.equal(activity.state, 'ACTIVE');
    assert.equal(activity.gatewayId, 'gw-fleet');
    assert.equal(activity.agentId, 'agent-fleet');
    assert.ok(activity.lastEventTime, 'last event time set');
    assert.ok(
      watch.seen.some((f) => f.eventsPerSecond > 0),
      'a positive ingest rate was reported while events flowed',
    );
    stream.end();
    await stream.ended;

    const agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-ops', ['fleet-ops']);
    const ops = createClient(OperationService, transport);
    const submitted = await ops.submitOperation({
      account: 'fleet-ops',
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', type: PatchType.MERGE, patch: '{"data":{}}' } },
    });
    assert.equal(submitted.operation?.state, OperationState.SUCCEEDED);
    const withOp = await watch.until(
      (f) => f.recentOperations.some((o) => o.id === submitted.operation!.id && o.state === OperationState.SUCCEEDED),
      'the finished operation',
    );
    const op = withOp.recentOperations.find((o) => o.id === submitted.operation!.id)!;
    assert.equal(op.operation, undefined, 'the summary leaves the submitted spec out');
    assert.equal(op.result?.success, true);
    assert.ok(op.totalDuration, 'timing present');
    assert.equal(withOp.operationsInFlight, 0);
    await agent.close();

    const once = await fleet.getFleet({});
    assert.deepEqual(once.fleet?.accounts.map((a) => a.name).sort(), ['fleet-acct', 'fleet-ops']);
    abort.abort();
    await watch.done;
  });

  test("each account's zone, the admin's wish, whether a live lease holder caches it, and its standby streams", async () => {
    const fleet = createClient(FleetService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
    const abort = new AbortController();
    const watch = follow(fleet.watchFleet({}, { signal: abort.signal }));
    const of = (f: Fleet) => f.accounts.find((a) => a.name === 'zoned');
    const caching = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(caching, 'agent-zoned-1', [{ name: 'zoned' }], { zone: 'eu-west' });
    const cached = of(await watch.until((f) => of(f)?.leased === true, 'zoned cached'))!;
    assert.equal(cached.zone, 'eu-west');
    assert.equal(cached.desiredState, 'ACTIVE');
    assert.equal(cached.standbyAgents, 0);

    const standby = openAgentStream(t.gateway.grpcUrl);
    const welcome = await connectAgent(standby, 'agent-zoned-2', [{ name: 'zoned' }], { zone: 'eu-west' });
    assert.equal(welcome.accounts[0]?.verdict, Verdict.STANDBY, 'the second stream of the same identity stands by');
    await watch.until((f) => of(f)?.standbyAgents === 1 && of(f)?.leased === true, 'one standby stream beside the holder');
    standby.end();
    await standby.ended;
    await watch.until((f) => of(f)?.standbyAgents === 0, 'the standby stream gone');

    caching.end();
    await caching.ended;
    const left = of(await watch.until((f) => of(f)?.state === 'INACTIVE', 'zoned released'))!;
    assert.equal(left.leased, false, 'no lease once released');
    assert.equal(left.desiredState, 'ACTIVE', 'still wanted: it lost its agent');
    assert.equal(left.zone, 'eu-west');
    abort.abort();
    await watch.done;
  });
});

describe('FleetService authorization', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', {
      id: 'gw-fleet-auth',
      insecure: false,
      auth: { tokens: [{ subject: 'reader', token: READ_TOKEN }] },
      authorization: { rules: [{ kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] }] },
    });
  });
  after(async () => {
    await t?.close();
  });

  test('needs the read role on both methods', async () => {
    const anonymous = createClient(FleetService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
    await assert.rejects(anonymous.getFleet({}), (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated);
    await assert.rejects(
      (async () => {
        for await (const _ of anonymous.watchFleet({})) break;
      })(),
      (err: unknown) => ConnectError.from(err).code === Code.Unauthenticated,
    );
    const reader = createClient(
      FleetService,
      createConnectTransport({
        baseUrl: t.gateway.httpUrl,
        httpVersion: '1.1',
        interceptors: [(next) => (req) => (req.header.set('authorization', `Bearer ${READ_TOKEN}`), next(req))],
      }),
    );
    const res = await reader.getFleet({});
    assert.equal(res.fleet?.replicas[0]?.id, 'gw-fleet-auth');
  });
});

describe('fleet monitor', () => {
  const logger = createSilentLogger();
  const reading = (total: number) => ({ fleet: create(FleetSchema, { connectedAgents: total > 100 ? 2 : 1 }), eventsTotal: total });

  test('one reading per interval for any number of watchers; unchanged summaries are not resent; the rate is the counters growth', async () => {
    let reads = 0;
    let total = 0;
    let clock = 0;
    const monitor = createFleetMonitor({ read: async () => (reads++, reading(total)), intervalMs: 20, logger, now: () => clock });
    const got: Fleet[][] = [[], [], []];
    const stops = got.map((list) => monitor.watch({ next: (f) => list.push(f), error: () => assert.fail('no error expected') }));
    await new Promise((r) => setTimeout(r, 5));
    assert.equal(reads, 1, 'three watchers share the first reading');
    assert.deepEqual(
      got.map((l) => l.length),
      [1, 1, 1],
    );
    const started = Date.now();
    for (let i = 0; i < 5; i++) {
      clock += 1000;
      await new Promise((r) => setTimeout(r, 30));
    }
    const intervals = (Date.now() - started) / 20;
    assert.ok(
      reads >= 3 && reads <= intervals + 2,
      `one reading per interval (${intervals.toFixed(1)} intervals), not one per watcher: got ${reads}`,
    );
    assert.deepEqual(
      got.map((l) => l.length),
      [1, 1, 1],
      'nothing changed, nothing resent',
    );
    total = 500; // 500 events since the last reading, a second later
    clock += 1000;
    await new Promise((r) => setTimeout(r, 40));
    const last = got[0]!.at(-1)!;
    assert.equal(last.connectedAgents, 2);
    assert.ok(last.eventsPerSecond > 0 && last.eventsPerSecond <= 500, `rate ${last.eventsPerSecond}`);
    for (const stop of stops) stop();
    monitor.close(new Error('closed'));
  });

  test('a failing reading ends WatchFleet with UNAVAILABLE and no database detail', async () => {
    let fail = false;
    const monitor = createFleetMonitor({
      read: async () => {
        if (fail) throw new Error('connect ECONNREFUSED 10.0.0.1:5432 secret-host');
        return reading(1);
      },
      intervalMs: 10,
      logger,
    });
    const service = createFleetService(monitor, { logger, keepaliveMs: 50 });
    const abort = new AbortController();
    const stream = service.watchFleet(create(WatchFleetRequestSchema), { signal: abort.signal } as never) as AsyncGenerator<{
      fleet?: Fleet;
    }>;
    const first = await stream.next();
    assert.equal(first.value.fleet.connectedAgents, 1);
    const keepalive = await stream.next();
    assert.equal(keepalive.value.fleet.connectedAgents, 1, 'resent after the keepalive interval although nothing changed');
    fail = true;
    await assert.rejects(stream.next(), (err: unknown) => {
      const e = ConnectError.from(err);
      return e.code === Code.Unavailable && !e.message.includes('secret-host');
    });
    monitor.close(new Error('closed'));
  });
});
