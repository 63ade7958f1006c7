import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createWriteBatcher } from '../../src/gateway/operations/write-batcher.js';

describe('write batcher', () => {
  it('sends a lone write at once and groups writes issued while a batch is in flight', async () => {
    const batches: number[][] = [];
    let release: () => void = () => {};
    const batcher = createWriteBatcher(
      async (items: number[]) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((r) => (release = r));
        return items.map((n) => n * 10);
      },
      { concurrency: 1 },
    );
    const first = batcher.add(1);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(batches, [[1]]);
    const rest = [2, 3, 4].map((n) => batcher.add(n));
    assert.equal(batcher.size, 4);
    release();
    assert.deepEqual(await Promise.all([first, ...rest]), [10, 20, 30, 40]);
    assert.deepEqual(batches, [[1], [2, 3, 4]]);
    assert.equal(batcher.size, 0);
  });

  it('splits at maxBatch and rejects every item of a failed batch with its error', async () => {
    const batches: string[][] = [];
    const batcher = createWriteBatcher(
      async (items: string[]) => {
        batches.push(items);
        if (items.includes('bad')) throw new Error('statement failed');
        return items.map((s) => s.toUpperCase());
      },
      { maxBatch: 2, concurrency: 1 },
    );
    const results = await Promise.allSettled(['a', 'b', 'bad', 'c', 'd'].map((s) => batcher.add(s)));
    assert.deepEqual(batches, [['a', 'b'], ['bad', 'c'], ['d']]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)),
      ['A', 'B', 'statement failed', 'statement failed', 'D'],
    );
  });

  it('runs a batch again, whole, after an error retryOn accepts; other errors and the last attempt reject', async () => {
    let calls = 0;
    const conflict = Object.assign(new Error('deadlock detected'), { code: '40P01' });
    const batcher = createWriteBatcher(
      async (items: number[]) => {
        calls++;
        if (calls < 3) throw conflict;
        return items.map((n) => n + 1);
      },
      { retryOn: (err) => (err as { code?: string }).code === '40P01', maxAttempts: 3 },
    );
    assert.deepEqual(await Promise.all([batcher.add(1), batcher.add(2)]), [2, 3]);
    assert.equal(calls, 3);

    let tries = 0;
    const never = createWriteBatcher(
      async () => {
        tries++;
        throw conflict;
      },
      { retryOn: () => true, maxAttempts: 2 },
    );
    await assert.rejects(never.add(1), /deadlock/);
    assert.equal(tries, 2);

    let plain = 0;
    const noRetry = createWriteBatcher(async () => {
      plain++;
      throw conflict;
    });
    await assert.rejects(noRetry.add(1), /deadlock/);
    assert.equal(plain, 1, 'no retryOn: one attempt');
  });
});
