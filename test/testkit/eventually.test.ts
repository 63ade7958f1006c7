/**
 * testkit/eventually.ts: what counts as an answer, what is retried, what ends the wait, and what a timeout says.
 * Ordering only (how many calls, in which order): no assertion depends on how long anything took.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { eventually, StopWaiting } from '../../testkit/eventually.js';

/** A function returning (or throwing) the given outcomes in turn, counting its calls. */
function scripted(outcomes: (() => unknown)[]) {
  const fn = () => {
    const next = outcomes[fn.calls++];
    if (!next) throw new Error('called once too often');
    return next();
  };
  fn.calls = 0;
  return fn;
}

describe('eventually', () => {
  test('returns the first value that is not undefined, null or false', async () => {
    const fn = scripted([() => undefined, () => null, () => false, async () => undefined, () => 'done']);
    assert.equal(await eventually('done', fn, { intervalMs: 0 }), 'done');
    assert.equal(fn.calls, 5);
  });

  test('0, an empty string and true are answers', async () => {
    assert.equal(await eventually('zero', () => 0), 0);
    assert.equal(await eventually('empty', async () => ''), '');
    assert.equal(await eventually('true', () => true), true);
  });

  test('a throw or a rejection is retried', async () => {
    const fn = scripted([
      () => {
        throw new Error('not there yet');
      },
      () => Promise.reject(new Error('still not')),
      () => ({ row: 1 }),
    ]);
    assert.deepEqual(await eventually('the row', fn, { intervalMs: 0 }), { row: 1 });
    assert.equal(fn.calls, 3);
  });

  test('StopWaiting ends the wait at once with that error', async () => {
    const stop = new StopWaiting('the process exited');
    const fn = scripted([
      () => false,
      () => {
        throw stop;
      },
    ]);
    await assert.rejects(eventually('the process ready', fn, { intervalMs: 0 }), (err) => err === stop);
    assert.equal(fn.calls, 2);
  });

  test('attempts never overlap', async () => {
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    await eventually(
      'five attempts',
      async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight--;
        return ++calls === 5;
      },
      { intervalMs: 0 },
    );
    assert.equal(calls, 5);
    assert.equal(most, 1);
  });

  test('on timeout: fn ran at least once, and the error names what and the last error', async () => {
    const boom = new Error('connection refused');
    const fn = scripted([
      () => {
        throw boom;
      },
    ]);
    await assert.rejects(eventually('gateway gw-1 healthy', fn, { timeoutMs: 0 }), (err: Error) => {
      assert.match(err.message, /^gateway gw-1 healthy: not reached within 0 ms \(1 attempts\); last error: connection refused$/);
      assert.equal(err.cause, boom);
      return true;
    });
    assert.equal(fn.calls, 1);
  });

  test('on timeout after "not yet" values: the error names the last value', async () => {
    await assert.rejects(
      eventually('the list', () => false, { timeoutMs: 0 }),
      /^Error: the list: not reached .*; last value: false$/,
    );
    await assert.rejects(
      eventually('the row', () => null, { timeoutMs: 0 }),
      /last value: null$/,
    );
  });
});
