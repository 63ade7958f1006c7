import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createClosers } from '../../src/shared/closers.js';

describe('closers', () => {
  test('steps run newest first, each awaited before the next; add returns the started value', async () => {
    const order: string[] = [];
    const closers = createClosers(() => assert.fail('no step fails'));
    const db = closers.add('database', { name: 'db' }, async (d) => {
      await new Promise((r) => setTimeout(r, 5));
      order.push(`close ${d.name}`);
    });
    assert.deepEqual(db, { name: 'db' });
    closers.defer('server', async () => {
      await new Promise((r) => setTimeout(r, 10));
      order.push('close server');
    });
    closers.defer('timer', () => order.push('stop timer'));
    assert.equal(closers.closing, false);
    await closers.close();
    assert.equal(closers.closing, true);
    assert.deepEqual(order, ['stop timer', 'close server', 'close db']);
  });

  test('a failing step is reported and the others still run; close twice runs nothing twice', async () => {
    const errors: string[] = [];
    const ran: string[] = [];
    const closers = createClosers((name, err) => errors.push(`${name}: ${(err as Error).message}`));
    closers.defer('first', () => ran.push('first'));
    closers.defer('broken', () => {
      throw new Error('boom');
    });
    closers.defer('last', async () => ran.push('last'));
    const [a, b] = [closers.close(), closers.close()];
    assert.equal(a, b, 'the same promise');
    await a;
    assert.deepEqual(ran, ['last', 'first']);
    assert.deepEqual(errors, ['broken: boom']);
  });

  test('a failed start stops only what started: the steps registered so far', async () => {
    const ran: string[] = [];
    const closers = createClosers(() => {});
    const start = async () => {
      closers.defer('a', () => ran.push('a'));
      closers.defer('b', () => ran.push('b'));
      throw new Error('port in use');
    };
    await assert.rejects(
      start().catch(async (err) => {
        await closers.close();
        throw err;
      }),
      /port in use/,
    );
    assert.deepEqual(ran, ['b', 'a']);
  });

  test('a step added after closing began runs at once', async () => {
    const ran: string[] = [];
    const closers = createClosers(() => {});
    await closers.close();
    closers.defer('late', () => ran.push('late'));
    await closers.close();
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(ran, ['late']);
  });
});
