/**
 * The rules of the overview's fleet tiles, as pure functions of web/src run in node: the worst workload health of an
 * account, its connection state (every row of the mapping in tile-model.ts, and the page's own staleness), the
 * grouping by zone with "No zone" last and the counts, the filter box's syntax, the tile size for a count, and the
 * one SummarizeHealth call per fleet change the tiles share with the health table.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { AccountActivitySchema, type AccountActivity } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { AccountHealthSchema } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { sharedHealthSummary } from '../../web/src/health-summary-source.js';
import type { Services } from '../../web/src/services.js';
import { parseTileFilter } from '../../web/src/tile-filter.js';
import { buildTiles, connectionOf, groupByZone, worstHealth, type Tile } from '../../web/src/tile-model.js';
import { tileSizeFor } from '../../web/src/tile-size.js';

/** A fleet summary entry: an ACTIVE account cached by a live lease holder, unless `init` says otherwise. */
function activity(init: Partial<Omit<AccountActivity, '$typeName'>>): AccountActivity {
  return create(AccountActivitySchema, { name: 'a', state: 'ACTIVE', desiredState: 'ACTIVE', leased: true, ...init });
}

const health = (account: string, counts: Partial<Record<'healthy' | 'progressing' | 'degraded' | 'paused' | 'unknown', number>>) =>
  create(AccountHealthSchema, { account, ...counts });

describe('fleet tiles', () => {
  test('the worst health wins: Degraded > Progressing > Paused > Unknown > Healthy; no workloads is none', () => {
    const tally = (c: Partial<Record<'healthy' | 'progressing' | 'degraded' | 'paused' | 'unknown', number>>) => health('x', c);
    assert.equal(worstHealth(tally({ healthy: 9, progressing: 1, degraded: 1, paused: 1, unknown: 1 })), 'degraded');
    assert.equal(worstHealth(tally({ healthy: 9, progressing: 1, paused: 1, unknown: 1 })), 'progressing');
    assert.equal(worstHealth(tally({ healthy: 9, paused: 1, unknown: 1 })), 'paused');
    assert.equal(worstHealth(tally({ healthy: 9, unknown: 1 })), 'unknown');
    assert.equal(worstHealth(tally({ healthy: 9 })), 'healthy');
    assert.equal(worstHealth(tally({})), 'none');
    assert.equal(worstHealth(undefined), 'none');
  });

  test('the connection state: failed, inactive, active, standby, else stale; a stale page makes active and standby stale', () => {
    const cases: [Partial<AccountActivity>, string, string][] = [
      [{}, 'active', 'a live lease holder caches it'],
      [{ standbyAgents: 2 }, 'active', 'standby streams beside the holder do not change it'],
      [{ state: 'TO_DEACTIVATE', desiredState: 'INACTIVE' }, 'active', 'still streamed while being deactivated'],
      [{ leased: false, standbyAgents: 1 }, 'standby', "the holder's lease lapsed, a standby stream takes over"],
      [{ leased: false }, 'stale', "the holder's lease lapsed and nobody stands by"],
      [{ state: 'INACTIVE', leased: false }, 'stale', 'its agent left; still wanted'],
      [{ state: 'ACTIVATING', leased: false }, 'stale', 'pushed, no agent caches it yet'],
      [{ state: 'INACTIVE', desiredState: 'INACTIVE', leased: false }, 'inactive', 'an admin deactivated it'],
      [{ state: 'DELETING', leased: false }, 'inactive', 'being deleted'],
      [{ state: 'FAILED', leased: false }, 'failed', 'an activation no agent confirmed'],
      [{ state: 'DELETE_FAILED', leased: false }, 'failed', 'a failed delete'],
      [{ state: 'ORPHANED', leased: false }, 'failed', 'reserved, read as failed'],
    ];
    for (const [init, expected, why] of cases) assert.equal(connectionOf(activity(init), false), expected, why);
    assert.equal(connectionOf(activity({}), true), 'stale', 'the page lost the gateway: nothing proves the agent is there');
    assert.equal(connectionOf(activity({ leased: false, standbyAgents: 1 }), true), 'stale');
    assert.equal(connectionOf(activity({ state: 'FAILED', leased: false }), true), 'failed', 'failed stays failed');
    assert.equal(connectionOf(activity({ state: 'INACTIVE', desiredState: 'INACTIVE', leased: false }), true), 'inactive');
  });

  test('tiles join the health counts by name and group by zone, zones by name with "No zone" last, with counts', () => {
    const tiles = buildTiles(
      [
        activity({ name: 'a1', zone: 'us' }),
        activity({ name: 'a2', zone: '' }),
        activity({ name: 'a3', zone: 'eu', state: 'FAILED', leased: false }),
        activity({ name: 'a4', zone: 'us', state: 'INACTIVE', leased: false }),
      ],
      [health('a1', { healthy: 2, degraded: 1 }), health('a4', { healthy: 1 })],
      false,
    );
    assert.deepEqual(
      tiles.map((t) => [t.name, t.health, t.connection]),
      [
        ['a1', 'degraded', 'active'],
        ['a2', 'none', 'active'],
        ['a3', 'none', 'failed'],
        ['a4', 'healthy', 'stale'],
      ],
    );
    assert.equal(tiles[0]!.counts?.degraded, 1);
    assert.equal(tiles[1]!.counts, undefined, 'no workloads: no counts');
    const groups = groupByZone(tiles);
    assert.deepEqual(
      groups.map((g) => [g.zone, g.tiles.map((t) => t.name)]),
      [
        ['eu', ['a3']],
        ['us', ['a1', 'a4']],
        ['', ['a2']],
      ],
    );
    const us = groups[1]!;
    assert.deepEqual([us.connections.active, us.connections.stale, us.healths.degraded, us.healths.healthy], [1, 1, 1, 1]);
    assert.equal(buildTiles([activity({ name: 'a1' })], undefined, false)[0]!.health, 'none', 'health not loaded yet: neutral tiles');
  });

  test('the filter: name parts, zone:, state: (connection or account state), health:, all words at once', () => {
    const tiles: Tile[] = buildTiles(
      [
        activity({ name: 'prod-eu-1', zone: 'eu-west' }),
        activity({ name: 'prod-us-1', zone: 'us-east', leased: false, state: 'INACTIVE' }),
        activity({ name: 'dev-1', zone: '' }),
        activity({ name: 'dev-2', zone: 'eu-west', state: 'DELETE_FAILED', leased: false }),
      ],
      [health('prod-eu-1', { degraded: 1 }), health('dev-1', { healthy: 3 })],
      false,
    );
    const names = (text: string) => tiles.filter(parseTileFilter(text).matches).map((t) => t.name);
    assert.deepEqual(names('prod'), ['prod-eu-1', 'prod-us-1']);
    assert.deepEqual(names('PROD  eu'), ['prod-eu-1'], 'case-insensitive, every word must match');
    assert.deepEqual(names('name:dev'), ['dev-1', 'dev-2']);
    assert.deepEqual(names('zone:eu'), ['prod-eu-1', 'dev-2']);
    assert.deepEqual(names('zone:none'), ['dev-1'], 'zone:none: accounts without a zone');
    assert.deepEqual(names('state:stale'), ['prod-us-1']);
    assert.deepEqual(names('state:failed'), ['dev-2'], 'a connection word: DELETE_FAILED reads failed');
    assert.deepEqual(names('state:delete_failed'), ['dev-2'], 'an account state, exactly');
    assert.deepEqual(names('state:INACTIVE'), [], 'inactive is the connection word: prod-us-1 is stale, not inactive');
    assert.deepEqual(names('health:degraded'), ['prod-eu-1']);
    assert.deepEqual(names('health:none'), ['prod-us-1', 'dev-2']);
    assert.deepEqual(names('health:healthy zone:none'), ['dev-1']);
    assert.deepEqual(names('zone:'), names(''), 'a prefix without its value is ignored while typed');
    assert.equal(parseTileFilter('').active, false);
    assert.equal(parseTileFilter('  ').active, false);
    const bad = parseTileFilter('prod health:bad state:gone');
    assert.deepEqual(bad.invalid, ['health:bad', 'state:gone']);
    assert.deepEqual(tiles.filter(bad.matches), [], 'a word that cannot match matches nothing');
  });

  test('tiles shrink with their number: named cards up to 48, then 20, 12 and 8 px squares', () => {
    assert.deepEqual([1, 10, 48, 49, 300, 400, 401, 1500, 1501, 5000, 20_000].map(tileSizeFor), [
      'large',
      'large',
      'large',
      'medium',
      'medium',
      'medium',
      'small',
      'small',
      'tiny',
      'tiny',
      'tiny',
    ]);
  });
});

describe('the shared health summary', () => {
  /** Services whose SummarizeHealth counts its calls and answers `answer()`; `version` is the auth version. */
  function fakeServices(answer: () => Promise<unknown>) {
    const state = { version: 0, calls: 0 };
    const services = {
      auth: { state: () => ({ version: state.version }) },
      api: {
        objects: {
          summarizeHealth: () => {
            state.calls++;
            return answer().then(() => ({ accounts: [health('a', { healthy: state.calls })] }));
          },
        },
      },
    } as unknown as Services;
    return { services, state };
  }

  test('views asking for the same fleet change under the same sign-in share one call; a failure is not kept', async () => {
    const { services, state } = fakeServices(() => Promise.resolve());
    const [a, b] = await Promise.all([sharedHealthSummary(services, 'sig-1'), sharedHealthSummary(services, 'sig-1')]);
    assert.equal(state.calls, 1, 'the tiles and the health table: one RPC');
    assert.equal(a, b);
    await sharedHealthSummary(services, 'sig-2');
    assert.equal(state.calls, 2, 'a fleet change: a new call');
    state.version = 1;
    await sharedHealthSummary(services, 'sig-2');
    assert.equal(state.calls, 3, 'another sign-in never gets the previous one’s answer');

    let fail = true;
    const flaky = fakeServices(() => (fail ? Promise.reject(new Error('down')) : Promise.resolve()));
    await assert.rejects(sharedHealthSummary(flaky.services, 'sig-1'), /down/);
    fail = false;
    await sharedHealthSummary(flaky.services, 'sig-1');
    assert.equal(flaky.state.calls, 2, 'the failed call is asked again');
  });
});
