/**
 * The replica-scale scenario's arithmetic (its run is too long for the suite: `npm run bench -- --quick --only
 * replica-scale` takes 20–30 s): renewal and touch statements are counted from the `(gateway, now())` groups the
 * polls saw, and its rows are per replica, then totals, every figure a number.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { countStatements } from '../../bench/postgres-writes.js';
import { replicaScaleRows, type ReplicaScaleResult } from '../../bench/scenarios/replica-scale.js';

describe('replica-scale scenario', () => {
  test('each new (gateway, stamp) group is one statement; its rows are the largest count seen', () => {
    const baseline = new Set(['gw-1\nt0']);
    const polls = [
      [
        { gateway_id: 'gw-1', t: 't0', n: 5 },
        { gateway_id: 'gw-1', t: 't1', n: 3 },
      ],
      [
        // t1 seen again with fewer rows (some moved on to t2): still one statement of 3 rows.
        { gateway_id: 'gw-1', t: 't1', n: 1 },
        { gateway_id: 'gw-1', t: 't2', n: 2 },
        { gateway_id: 'gw-2', t: 't1', n: 4 },
      ],
    ];
    const counted = countStatements(baseline, polls);
    assert.deepEqual(counted.get('gw-1'), { statements: 2, rows: 5 });
    assert.deepEqual(counted.get('gw-2'), { statements: 1, rows: 4 });
  });

  test('rows: six per replica, then the totals, every value a number', () => {
    const replica = (name: string) => ({
      name,
      sessions: 100,
      leases: 100,
      rssKiBPerAgent: 80,
      rssMiBBefore: 100,
      rssMiBAfter: 107.8125,
      idleCpuPercent: 1,
      renewalStatementsPerSecond: 0.2,
      renewedRowsPerSecond: 20,
      touchStatementsPerSecond: 1,
      touchedRowsPerSecond: 10,
    });
    const run: ReplicaScaleResult = {
      agents: 300,
      replicas: ['gw-1', 'gw-2', 'gw-3'].map(replica),
      connectSeconds: 3,
      lostStreams: 0,
      connectRetries: 0,
      connectCommitsPerAgent: 7,
      connectInsertsPerAgent: 3,
      commitsPerSecond: 12,
      hotUpdateShare: { accounts: 0.9, agentSessions: 0.5 },
      tupUpdatedPerSecond: 90,
      tableUpdatesPerSecond: { accounts: 60, agentSessions: 30, replicas: 0.6 },
      idleSeconds: 30,
      swarmKiBPerAgent: 140,
    };
    const rows = replicaScaleRows([run], 300);
    assert.equal(rows.filter((r) => r.measure.startsWith('gw-')).length, 18);
    assert.equal(rows.find((r) => r.measure.startsWith('all: RSS per agent'))?.value, '80.0');
    assert.equal(rows.find((r) => r.measure.startsWith('agents connected per second'))?.value, '100');
    assert.deepEqual(
      rows.filter((r) => !/^-?\d/.test(r.value)),
      [],
    );
  });
});
