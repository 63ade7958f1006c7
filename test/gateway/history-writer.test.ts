/**
 * The history's writer on both drivers, driven step by step with its own clock (never real timers): the first step
 * only starts the counters; later steps count events (the growth of `events_total`) and the operations that ended in
 * the step by outcome with their latency percentiles, a fleet row every step and account rows only at the account
 * step and only for accounts that changed; one writer at a time (the lease), the next one starting its own counters;
 * rows past their window deleted at a day step.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase, type Database } from '../../src/db/database.js';
import { rowsOf } from '../../src/db/query-helpers.js';
import type { HistorySteps } from '../../src/gateway/history/history-sampler.js';
import { createHistoryWriter, type HistoryWriter, sampleSchedule } from '../../src/gateway/history/history-writer.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createTestDatabase, testDrivers, type TestDatabase } from '../../testkit/databases.js';

const STEPS: HistorySteps = { stepSeconds: 10, accountStepSeconds: 60, dayStepSeconds: 300 };
/** A day step's boundary (1.8e9 s is a multiple of 300 s). */
const T0 = 1_800_000_000_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface Row {
  resolution: number;
  scope: string;
  at: Date;
  seconds: number;
  events: number | null;
  succeeded: number;
  failed: number;
  timed_out: number;
  latency_p50_ms: number | null;
  latency_p99_ms: number | null;
  states: Record<string, number> | null;
}

describe('history writer schedule', () => {
  test('successive ticks sample successive boundaries, whether a step takes 0.1, 0.4 or 0.9 of its length', () => {
    for (const stepSeconds of [1, 2, 10]) {
      const plan = sampleSchedule(stepSeconds);
      for (const busy of [0.1, 0.4, 0.9]) {
        let now = T0 + 123;
        const sampled: number[] = [];
        for (let i = 0; i < 6; i++) {
          now = plan.nextTick(now);
          sampled.push((plan.at(now) - T0) / 1000);
          now += busy * stepSeconds * 1000;
        }
        assert.deepEqual(
          sampled,
          [0, 1, 2, 3, 4, 5].map((k) => k * stepSeconds),
          `step ${stepSeconds} s, busy ${busy}`,
        );
      }
    }
  });
});

for (const driver of testDrivers()) {
  describe(`history writer (${driver})`, () => {
    let testDb: TestDatabase;
    let database: Database;
    const run = async (text: string) => rowsOf(await database.db.execute(sql.raw(text)));
    const samples = async (at: number): Promise<Row[]> =>
      (await run(`select * from metric_samples where at = '${iso(at)}' order by resolution, scope`)).map((r) => ({
        ...(r as unknown as Row),
        at: new Date(r.at as string),
        seconds: Number(r.seconds),
        events: r.events === null ? null : Number(r.events),
        latency_p50_ms: r.latency_p50_ms === null ? null : Number(r.latency_p50_ms),
        latency_p99_ms: r.latency_p99_ms === null ? null : Number(r.latency_p99_ms),
      }));
    const writer = (replicaId: string, steps: HistorySteps = STEPS): HistoryWriter =>
      createHistoryWriter({ db: database.db, replicaId, steps, staleAfterSeconds: 60, logger: createSilentLogger() });
    const endOperation = (id: string, account: string, state: string, finishedMs: number, latencyMs: number) =>
      run(`insert into operations (id, account, type, request, state, gateway_id, timeout_ms, received_at, stored_at,
             deadline_at, request_hash, finished_at)
           values ('${id}', '${account}', 'scale', '{}', '${state}', 'gw', 60000, '${iso(finishedMs - latencyMs)}',
             '${iso(finishedMs - latencyMs)}', '${iso(finishedMs + 60_000)}', 'h-${id}', '${iso(finishedMs)}')`);

    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('counts events and ended operations per step: a fleet row every step, account rows only for accounts that changed', async () => {
      await run(`insert into accounts (name, state, events_total) values ('alpha', 'ACTIVE', 100), ('beta', 'ACTIVE', 50),
                 ('gamma', 'FAILED', 0)`);
      const w = writer('gw-1');
      assert.equal(await w.step(T0 + 1000), true, 'the only replica takes the lease');
      const first = await samples(T0);
      assert.deepEqual(
        first.map((r) => [r.resolution, r.scope, r.events]),
        [
          [10, '', null],
          [300, '', null],
        ],
        'the first step (a fleet and a day step) only starts the counters: no event count, no account row',
      );
      assert.deepEqual(first[0]!.states, { ACTIVE: 2, FAILED: 1 });

      // In the next 10 s: alpha stores 30 events; three of its operations end (100, 300 and 500 ms), beta's none.
      await run(`update accounts set events_total = 130 where name = 'alpha'`);
      await endOperation('op-1', 'alpha', 'SUCCEEDED', T0 + 3000, 100);
      await endOperation('op-2', 'alpha', 'SUCCEEDED', T0 + 4000, 300);
      await endOperation('op-3', 'alpha', 'FAILED', T0 + 5000, 500);
      await endOperation('op-late', 'beta', 'TIMED_OUT', T0 + 12_000, 60_000);
      assert.equal(await w.step(T0 + 10_000 + 1000), true);
      const second = await samples(T0 + 10_000);
      assert.equal(second.length, 1, 'only the fleet row at a fleet step');
      const fleet = second[0]!;
      assert.equal(fleet.seconds, 10);
      assert.equal(fleet.events, 30);
      assert.deepEqual([fleet.succeeded, fleet.failed, fleet.timed_out], [2, 1, 0], 'op-late ended after the step');
      assert.equal(fleet.latency_p50_ms, 300);
      assert.ok(Math.abs(fleet.latency_p99_ms! - 496) < 0.01, `p99 of 100/300/500 ms: ${fleet.latency_p99_ms}`);

      // Up to the account step at T0+60 s: beta stores 5 events in its last 10 s.
      for (const s of [20, 30, 40, 50]) assert.equal(await w.step(T0 + s * 1000 + 1000), true);
      assert.equal((await samples(T0 + 20_000))[0]!.timed_out, 1, 'op-late counted in its own step');
      await run(`update accounts set events_total = 55 where name = 'beta'`);
      assert.equal(await w.step(T0 + 60_000 + 1000), true);
      const minute = await samples(T0 + 60_000);
      assert.deepEqual(
        minute.map((r) => [r.resolution, r.scope, r.seconds, r.events, r.succeeded, r.failed, r.timed_out]),
        [
          [10, '', 10, 5, 0, 0, 0],
          [60, 'alpha', 60, 30, 2, 1, 0],
          [60, 'beta', 60, 5, 0, 0, 1],
        ],
        'the account step has a row for each account that changed in its minute, none for the idle gamma',
      );
      await w.close();
    });

    test('one writer at a time; the next one starts its own counters; a missed step widens the next one', async () => {
      const base = T0 + 3600_000;
      const one = writer('gw-one');
      const two = writer('gw-two');
      assert.equal(await one.step(base + 1000), true);
      assert.equal(await two.step(base + 1000), false, 'the lease is held');
      assert.equal(await two.step(base + 10_000 + 1000), false);
      assert.equal(await one.step(base + 10_000 + 1000), true);
      // one misses a step: its next row covers both.
      assert.equal(await one.step(base + 30_000 + 1000), true);
      assert.equal((await samples(base + 30_000))[0]!.seconds, 20);
      await one.close();
      assert.equal(await two.step(base + 40_000 + 1000), true, 'a released lease is taken at once');
      const taken = await samples(base + 40_000);
      assert.equal(taken[0]!.events, null, 'the new writer has no counters yet');
      assert.equal(await one.step(base + 50_000 + 1000), false, 'the old writer does not get it back while it is held');
      await two.close();
    });

    test('at a 1 s step every second is sampled, so a 2 s account step falls due every other one', async () => {
      const fast = { stepSeconds: 1, accountStepSeconds: 2, dayStepSeconds: 4 };
      const base = T0 + 7 * 86_400_000;
      const w = writer('gw-fast', fast);
      // Each tick comes half a step after its boundary and samples that boundary.
      for (let s = 0; s < 5; s++) assert.equal(await w.step(base + s * 1000 + 500), true, `second ${s}`);
      await run(`update accounts set events_total = events_total + 1 where name = 'alpha'`);
      assert.equal(await w.step(base + 5000 + 500), true);
      assert.equal(await w.step(base + 6000 + 500), true);
      const fleetSeconds = await run(
        `select at from metric_samples where resolution = 1 and scope = '' and at >= '${iso(base)}' order by at`,
      );
      assert.deepEqual(
        fleetSeconds.map((r) => (new Date(r.at as string).getTime() - base) / 1000),
        [0, 1, 2, 3, 4, 5, 6],
      );
      const accountRows = await run(
        `select at, events from metric_samples where resolution = 2 and scope = 'alpha' and at >= '${iso(base)}'`,
      );
      assert.deepEqual(
        accountRows.map((r) => [(new Date(r.at as string).getTime() - base) / 1000, Number(r.events)]),
        [[6, 1]],
        'the account step after the change counts it',
      );
      await w.close();
    });

    test('a day step deletes the rows past their window, and only those', async () => {
      const at = T0 + 2 * 86_400_000;
      await run(`insert into metric_samples (resolution, scope, at, seconds) values
                 (10, '', '${iso(at - 3 * 3600_000)}', 10), (10, '', '${iso(at - 3600_000)}', 10),
                 (60, 'alpha', '${iso(at - 3 * 3600_000)}', 60),
                 (300, '', '${iso(at - 27 * 3600_000)}', 300), (300, 'alpha', '${iso(at - 25 * 3600_000)}', 300)`);
      const w = writer('gw-retention');
      assert.equal(await w.step(at + 1000), true);
      const left =
        await run(`select resolution, scope, at from metric_samples where at < '${iso(at)}' and at >= '${iso(at - 28 * 3600_000)}'
                              order by resolution, at`);
      assert.deepEqual(
        left.map((r) => [Number(r.resolution), r.scope, new Date(r.at as string).getTime()]),
        [
          [10, '', at - 3600_000],
          [300, 'alpha', at - 25 * 3600_000],
        ],
      );
      await w.close();
    });
  });
}
