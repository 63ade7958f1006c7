/**
 * The charts' data (web/src/history-data.ts): a GetHistory answer becomes the four charts in reading order, unknown
 * values (NaN on the wire) become gaps, the fleet adds the connected agents, states keep their colours, and each
 * line's words (latest and peak) skip the gaps.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { GetHistoryResponseSchema } from '../../src/gen/outpost/api/v1/metrics_service_pb.js';
import { chartsOf, formatValue, summarize } from '../../web/src/history-data.js';

const answer = create(GetHistoryResponseSchema, {
  stepSeconds: 10,
  times: [100, 110, 120],
  eventsPerSecond: [Number.NaN, 2.5, 0],
  succeededPerSecond: [0, 0.1, 0],
  failedPerSecond: [0, 0, 0.2],
  timedOutPerSecond: [0, 0, 0],
  latencyP50Ms: [Number.NaN, 40, 1200],
  latencyP99Ms: [Number.NaN, 90, 4000],
  connectedAgents: [3, 3, 2],
  states: [
    { state: 'ACTIVE', values: [3, 3, 2] },
    { state: 'FAILED', values: [0, 0, 1] },
    { state: 'TO_MIGRATE', values: [1, 0, 0] },
  ],
});

describe('chart data', () => {
  test('four charts in reading order; NaN becomes a gap; the fleet adds its agents; states keep their colours', () => {
    const charts = chartsOf(answer, true);
    assert.deepEqual(
      charts.map((c) => [c.id, c.unit, c.lines.map((l) => `${l.label}:${l.color}`)]),
      [
        ['events', '/s', ['events:blue']],
        ['operations', '/s', ['succeeded:green', 'failed:red', 'timed out:amber']],
        ['latency', 'ms', ['p50:blue', 'p99:violet']],
        ['states', '', ['connected agents:blue', 'ACTIVE:green', 'FAILED:red', 'TO_MIGRATE:teal']],
      ],
    );
    assert.deepEqual(charts[0]!.lines[0]!.values, [null, 2.5, 0]);
    assert.deepEqual(charts[0]!.times, [100, 110, 120]);
    assert.equal(charts[3]!.lines[0]!.stepped, true, 'counts hold until the next sample');
    const account = chartsOf(create(GetHistoryResponseSchema, { ...answer, connectedAgents: [] }), false);
    assert.equal(account[3]!.title, 'Account state');
    assert.deepEqual(
      account[3]!.lines.map((l) => l.label),
      ['ACTIVE', 'FAILED', 'TO_MIGRATE'],
    );
  });

  test('latest and peak skip the gaps; values read with their unit', () => {
    const [events, , latency] = chartsOf(answer, true);
    assert.deepEqual(summarize(events!), [{ label: 'events', latest: 0, peak: 2.5 }]);
    assert.deepEqual(summarize(latency!), [
      { label: 'p50', latest: 1200, peak: 1200 },
      { label: 'p99', latest: 4000, peak: 4000 },
    ]);
    const empty = chartsOf(create(GetHistoryResponseSchema, { times: [1], eventsPerSecond: [Number.NaN] }), true)[0]!;
    assert.deepEqual(summarize(empty), [{ label: 'events', latest: null, peak: null }]);
    assert.equal(formatValue(null, '/s'), '—');
    assert.equal(formatValue(0.25, '/s'), '0.25/s');
    assert.equal(formatValue(1204.4, 'ms'), '1,204 ms');
    assert.equal(formatValue(12, ''), '12');
  });
});
