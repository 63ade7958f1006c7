/**
 * The periodic-job helper, driven by fake timers: the test fires each scheduled round itself and controls when a
 * round ends, so every check is about order (what is scheduled, what ran, what waited), never about wall-clock time.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { NODE_TIMERS, createPeriodicJob, type JobTimers } from '../../src/shared/periodic-job.js';

/** Timers the test fires by hand; `pending` lists what is scheduled now. */
function fakeTimers() {
  let next = 0;
  const scheduled = new Map<number, { callback: () => void; ms: number }>();
  const timers: JobTimers = {
    set(callback, ms) {
      next++;
      scheduled.set(next, { callback, ms });
      return next;
    },
    clear: (handle) => void scheduled.delete(handle as number),
  };
  return {
    timers,
    /** The delays of the timers scheduled now. */
    pending: () => [...scheduled.values()].map((s) => s.ms),
    /** Fires the only scheduled timer. */
    fire() {
      assert.equal(scheduled.size, 1, 'exactly one timer is scheduled');
      const [[handle, { callback }]] = [...scheduled];
      scheduled.delete(handle);
      callback();
    },
  };
}

/** A round the test ends when it wants. */
function controllableRuns() {
  const ends: (() => void)[] = [];
  let started = 0;
  return {
    run: () => {
      started++;
      return new Promise<void>((resolve) => ends.push(resolve));
    },
    started: () => started,
    endRound() {
      const end = ends.shift();
      assert.ok(end, 'a round is running');
      end();
    },
  };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const silent = { error: () => {} };

describe('periodic job', () => {
  test('nothing runs before start; the first round comes after the interval, the next one an interval after it ended', async () => {
    const clock = fakeTimers();
    const runs = controllableRuns();
    const job = createPeriodicJob({ run: runs.run, intervalMs: 500, logger: silent, errorMessage: 'x', timers: clock.timers });
    assert.deepEqual(clock.pending(), []);
    assert.equal(job.started, false);
    job.start();
    job.start();
    assert.equal(job.started, true);
    assert.deepEqual(clock.pending(), [500], 'one timer, however often start is called');
    assert.equal(runs.started(), 0);
    clock.fire();
    assert.equal(runs.started(), 1);
    assert.deepEqual(clock.pending(), [], 'no timer while the round runs: rounds never overlap');
    runs.endRound();
    await settle();
    assert.deepEqual(clock.pending(), [500]);
    clock.fire();
    assert.equal(runs.started(), 2);
    runs.endRound();
    await job.stop();
  });

  test('runSoon moves the next round to now, but not while a round runs and not before start', async () => {
    const clock = fakeTimers();
    const runs = controllableRuns();
    const job = createPeriodicJob({ run: runs.run, intervalMs: 500, logger: silent, errorMessage: 'x', timers: clock.timers });
    job.runSoon();
    assert.deepEqual(clock.pending(), [], 'not started: nothing scheduled');
    job.start();
    job.runSoon();
    assert.deepEqual(clock.pending(), [0], 'the interval timer is replaced, not doubled');
    clock.fire();
    job.runSoon();
    assert.deepEqual(clock.pending(), [], 'ignored while the round runs');
    runs.endRound();
    await settle();
    assert.deepEqual(clock.pending(), [500]);
    await job.stop();
  });

  test('a failing round is logged with the message and the job goes on', async () => {
    const clock = fakeTimers();
    const logged: { err: unknown; message: string }[] = [];
    const logger = { error: (fields: { err: unknown }, message: string) => void logged.push({ err: fields.err, message }) };
    let round = 0;
    const job = createPeriodicJob({
      run: async () => {
        round++;
        if (round === 1) throw new Error('database down');
        if (round === 2) return Promise.reject(new Error('still down'));
      },
      intervalMs: 100,
      logger,
      errorMessage: 'sweep failed',
      timers: clock.timers,
    });
    job.start();
    for (let i = 0; i < 3; i++) {
      clock.fire();
      await settle();
    }
    assert.equal(round, 3);
    assert.deepEqual(
      logged.map((l) => [l.message, (l.err as Error).message]),
      [
        ['sweep failed', 'database down'],
        ['sweep failed', 'still down'],
      ],
    );
    assert.deepEqual(clock.pending(), [100], 'still scheduled after the failures');
    await job.stop();
  });

  test('a round that throws synchronously is logged like any other failure', async () => {
    const clock = fakeTimers();
    const logged: string[] = [];
    const job = createPeriodicJob({
      run: () => {
        throw new Error('at once');
      },
      intervalMs: 100,
      logger: { error: (_: unknown, message: string) => void logged.push(message) },
      errorMessage: 'round failed',
      timers: clock.timers,
    });
    job.start();
    clock.fire();
    await settle();
    assert.deepEqual(logged, ['round failed']);
    assert.deepEqual(clock.pending(), [100]);
    await job.stop();
  });

  test('stop waits for the running round and schedules nothing more; start after stop works again', async () => {
    const clock = fakeTimers();
    const runs = controllableRuns();
    const job = createPeriodicJob({ run: runs.run, intervalMs: 500, logger: silent, errorMessage: 'x', timers: clock.timers });
    job.start();
    clock.fire();
    const order: string[] = [];
    const stopped = job.stop().then(() => void order.push('stopped'));
    await settle();
    assert.equal(order.length, 0, 'stop has not resolved while the round runs');
    order.push('round ended');
    runs.endRound();
    await stopped;
    assert.deepEqual(order, ['round ended', 'stopped']);
    assert.deepEqual(clock.pending(), [], 'no round after stop');
    assert.equal(job.started, false);
    await job.stop();

    job.start();
    assert.deepEqual(clock.pending(), [500]);
    clock.fire();
    assert.equal(runs.started(), 2);
    runs.endRound();
    await job.stop();
    assert.deepEqual(clock.pending(), []);
  });

  test('start while a round of an earlier start still runs: one round at a time, then one timer', async () => {
    const clock = fakeTimers();
    const runs = controllableRuns();
    const job = createPeriodicJob({ run: runs.run, intervalMs: 500, logger: silent, errorMessage: 'x', timers: clock.timers });
    job.start();
    clock.fire();
    const stopped = job.stop();
    job.start();
    assert.deepEqual(clock.pending(), [], 'the running round schedules the next one when it ends');
    runs.endRound();
    await stopped;
    await settle();
    assert.deepEqual(clock.pending(), [500]);
    assert.equal(runs.started(), 1);
    await job.stop();
  });

  test("Node's timers are unref'd: a scheduled round never keeps the process alive", () => {
    const handle = NODE_TIMERS.set(() => assert.fail('cleared before it fires'), 60_000) as NodeJS.Timeout;
    try {
      assert.equal(handle.hasRef(), false);
    } finally {
      NODE_TIMERS.clear(handle);
    }
  });
});
