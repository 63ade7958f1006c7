/**
 * MetricsService.GetHistory over Connect JSON: the read role as for FleetService, clear refusals of an unknown account
 * and range, the columns built from stored samples (rates from counts and seconds, NaN where unknown, an account's
 * idle steps as zeros on the fleet's time axis, its state from its transitions), and end to end on a gateway whose
 * writer runs on real timers at a 1 s step: an agent's events and an operation reach the fleet's and the account's
 * series, with the connected agent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError, createClient, type Interceptor } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { HistoryRange, MetricsService } from '../../src/gen/outpost/api/v1/metrics_service_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { eventually } from '../../testkit/eventually.js';
import { EventType, configMap, connectAgent, event, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { startOperationAgent } from './operations-helpers.js';

const READ_TOKEN = 'history-reader-token-0123456789';
const AGENT_TOKEN = 'history-agent-token-0123456789';
const bearer =
  (token: string): Interceptor =>
  (next) =>
  (req) => (req.header.set('authorization', `Bearer ${token}`), next(req));
const clientOf = (t: TestGateway, token?: string) =>
  createClient(
    MetricsService,
    createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1', interceptors: token ? [bearer(token)] : [] }),
  );
const codeOf = (err: unknown) => ConnectError.from(err).code;

describe('MetricsService: authorization, refusals and the columns of stored samples', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', {
      id: 'gw-history',
      insecure: false,
      history: { enabled: false },
      auth: {
        tokens: [
          { subject: 'reader', token: READ_TOKEN },
          { subject: 'agent', token: AGENT_TOKEN },
        ],
      },
      authorization: {
        rules: [
          { kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] },
          { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
        ],
      },
    });
  });
  after(async () => {
    await t?.close();
  });

  test('needs the read role; an unknown account is NOT_FOUND and an unknown range INVALID_ARGUMENT', async () => {
    await assert.rejects(clientOf(t).getHistory({}), (err) => codeOf(err) === Code.Unauthenticated);
    await assert.rejects(clientOf(t, AGENT_TOKEN).getHistory({}), (err) => codeOf(err) === Code.PermissionDenied);
    const reader = clientOf(t, READ_TOKEN);
    await assert.rejects(reader.getHistory({ account: 'nowhere' }), (err) => {
      assert.equal(codeOf(err), Code.NotFound);
      assert.match(ConnectError.from(err).rawMessage, /account "nowhere" does not exist/);
      return true;
    });
    await assert.rejects(reader.getHistory({ range: 7 as HistoryRange }), (err) => codeOf(err) === Code.InvalidArgument);
    const empty = await reader.getHistory({});
    assert.deepEqual([empty.stepSeconds, empty.times.length, empty.recording], [10, 0, false], 'nothing recorded: said so');
  });

  test('rates, unknown values, an idle account as zeros on the fleet axis, and its state over time', async () => {
    const minute = Math.floor(Date.now() / 60_000) * 60_000 - 5 * 60_000;
    const iso = (ms: number) => new Date(ms).toISOString();
    await t.query(`insert into accounts (name, state) values ('alpha', 'ACTIVE')`);
    await t.query(`insert into account_transitions (account, from_state, to_state, actor, at) values
                   ('alpha', '', 'ACTIVATING', 'gateway', '${iso(minute - 30_000)}'),
                   ('alpha', 'ACTIVATING', 'ACTIVE', 'gateway', '${iso(minute + 90_000)}')`);
    // Fleet rows every 10 s for two minutes; the first has no event count (counters starting).
    const fleetRows = Array.from({ length: 13 }, (_, i) => {
      const at = minute + i * 10_000;
      const events = i === 0 ? 'null' : String(i * 10);
      return `(10, '', '${iso(at)}', 10, ${events}, ${i === 6 ? 4 : 0}, ${i === 6 ? 1 : 0}, 0, ${i === 6 ? 120 : 'null'}, ${i === 6 ? 900 : 'null'}, 3, '{"ACTIVE": 2, "FAILED": 1}')`;
    });
    await t.query(`insert into metric_samples (resolution, scope, at, seconds, events, succeeded, failed, timed_out,
                   latency_p50_ms, latency_p99_ms, connected_agents, states) values ${fleetRows.join(', ')}`);
    await t.query(`insert into metric_samples (resolution, scope, at, seconds, events, succeeded, failed, latency_p50_ms, latency_p99_ms)
                   values (60, 'alpha', '${iso(minute + 60_000)}', 60, 120, 6, 0, 80, 95)`);

    const reader = clientOf(t, READ_TOKEN);
    const fleet = await reader.getHistory({ range: HistoryRange.HOUR });
    assert.equal(fleet.stepSeconds, 10);
    assert.deepEqual(
      fleet.times,
      fleetRows.map((_, i) => (minute + i * 10_000) / 1000),
    );
    assert.ok(Number.isNaN(fleet.eventsPerSecond[0]!), 'unknown on the counters first step');
    assert.equal(fleet.eventsPerSecond[3], 3, '30 events over 10 s');
    assert.equal(fleet.succeededPerSecond[6], 0.4);
    assert.equal(fleet.failedPerSecond[6], 0.1);
    assert.equal(fleet.latencyP99Ms[6], 900);
    assert.ok(Number.isNaN(fleet.latencyP50Ms[5]!), 'no latency where no operation ended');
    assert.deepEqual(
      fleet.states.map((s) => [s.state, s.values[0]]),
      [
        ['ACTIVE', 2],
        ['FAILED', 1],
      ],
    );
    assert.equal(fleet.connectedAgents[12], 3);

    const alpha = await reader.getHistory({ account: 'alpha', range: HistoryRange.HOUR });
    assert.equal(alpha.stepSeconds, 60);
    assert.deepEqual(alpha.times, [minute / 1000, (minute + 60_000) / 1000, (minute + 120_000) / 1000], 'the fleet rows on the minute');
    assert.ok(Number.isNaN(alpha.eventsPerSecond[0]!), 'unknown where the fleet counters were starting');
    assert.deepEqual([alpha.eventsPerSecond[1], alpha.eventsPerSecond[2]], [2, 0], 'its own row, then idle');
    assert.deepEqual(alpha.succeededPerSecond, [0, 0.1, 0]);
    assert.equal(alpha.latencyP50Ms[1], 80);
    assert.deepEqual(alpha.connectedAgents, [], 'no agent count per account');
    assert.deepEqual(
      alpha.states.map((s) => [s.state, [...s.values]]),
      [
        ['ACTIVATING', [1, 1, 0]],
        ['ACTIVE', [0, 0, 1]],
      ],
    );
  });
});

describe('MetricsService end to end: the writer on real timers', () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', { id: 'gw-history-e2e', history: { stepSeconds: 1, accountStepSeconds: 2, dayStepSeconds: 4 } });
  });
  after(async () => {
    await t?.close();
  });

  test("an agent's events and an operation appear in the fleet's and the account's series", async () => {
    const client = clientOf(t);
    const stream = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(stream, 'agent-history', [{ name: 'history-acct' }]);
    let sequence = 1n;
    /** One change of the account's objects, stored before it returns (the writer's counters see it). */
    const change = async () => {
      stream.send({
        case: 'events',
        value: { sequence, events: [event('history-acct', EventType.ADDED, configMap(`cm-${sequence}`, Number(sequence)))] },
      });
      await stream.waitForAck(Number(sequence++));
    };
    const fleet = await eventually('events counted in a fleet step, with the connected agent', async () => {
      await change();
      const got = await client.getHistory({});
      const i = got.eventsPerSecond.findIndex((v) => v > 0);
      return i >= 0 && got.connectedAgents[i] === 1 && got.recording ? got : undefined;
    });
    assert.equal(fleet.stepSeconds, 1);
    assert.equal(fleet.states.find((s) => s.state === 'ACTIVE')?.values.at(-1), 1);
    // Changes go on: the account's series starts its counters at its own (2 s) step, after the fleet's.
    await eventually("the account's own series counts its events and shows it ACTIVE", async () => {
      await change();
      const got = await client.getHistory({ account: 'history-acct' });
      return got.eventsPerSecond.some((v) => v > 0) && got.states.find((s) => s.state === 'ACTIVE')?.values.at(-1) === 1;
    });
    stream.end();
    await stream.ended;

    const agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-history-ops', ['history-ops']);
    const ops = createClient(OperationService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
    const done = await ops.submitOperation({
      account: 'history-ops',
      wait: true,
      spec: { case: 'patch', value: { kind: 'ConfigMap', name: 'x', type: PatchType.MERGE, patch: '{"data":{}}' } },
    });
    assert.equal(done.operation?.state, OperationState.SUCCEEDED);
    await eventually('the operation counted with its latency, for the fleet and its account', async () => {
      const [all, own] = await Promise.all([client.getHistory({}), client.getHistory({ account: 'history-ops' })]);
      const i = all.succeededPerSecond.findIndex((v) => v > 0);
      const j = own.succeededPerSecond.findIndex((v) => v > 0);
      return i >= 0 && all.latencyP50Ms[i]! >= 0 && j >= 0 && own.latencyP99Ms[j]! >= 0;
    });
    await agent.close();
  });
});
