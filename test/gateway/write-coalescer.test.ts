/**
 * Cross-stream group commit (src/gateway/cache/write-coalescer.ts over object-writer.ts's `writeGroup`):
 * - the coalescer over a recording writer and a clock the test moves: a batch alone is written at once; batches of
 *   several streams that wait while a group is written go in the next group, no sooner than the window after the
 *   previous start; one batch per session per group; maxRows splits; each write settles only after its group; a lost
 *   lease rejects only its batch; a failed statement is retried batch by batch so only the bad one fails; disabled or
 *   unfenced writes go straight through;
 * - `writeGroup` on each driver: several sessions' batches in one statement, each fenced by its own lease (a stale
 *   epoch, an expired lease, another session's account write nothing of their batch and are reported), events_total
 *   counted per account; a statement that fails (a row that breaks a constraint) writes nothing, and through the
 *   coalescer only the bad batch fails.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import { emptyDecodedBatch, type DecodedBatch, type ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter, type FencedBatch, type GroupObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { createCoalescingWriter, type CoalesceClock } from '../../src/gateway/cache/write-coalescer.js';
import { isLeaseLost, type WriteFence } from '../../src/gateway/accounts/lease-fence.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';

const row = (account: string, name: string, version = 1): ObjectRow => ({
  account,
  api_version: 'v1',
  kind: 'ConfigMap',
  namespace: 'default',
  name,
  uid: `uid-${account}-${name}`,
  resource_version: String(version),
  labels: {},
  object: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } }),
  watch_namespace: '',
  sync_gen: 0,
});
const batchOf = (account: string, names: string[]): DecodedBatch => ({
  ...emptyDecodedBatch(),
  upserts: names.map((n) => row(account, n)),
  accounts: [account],
  eventCounts: { [account]: names.length },
});
const fenceOf = (sessionId: string, account: string, epoch = 1): WriteFence => ({ sessionId, leases: [{ name: account, epoch }] });

/** A clock whose time and timers only move when the test says. */
function manualClock() {
  let now = 0;
  const timers: { at: number; fn: () => void }[] = [];
  const clock: CoalesceClock = {
    now: () => now,
    setTimeout: (fn, ms) => {
      const timer = { at: now + ms, fn };
      timers.push(timer);
      return timer;
    },
    clearTimeout: (handle) => {
      const i = timers.indexOf(handle as (typeof timers)[number]);
      if (i >= 0) timers.splice(i, 1);
    },
  };
  return {
    clock,
    pendingTimers: () => timers.length,
    /** Moves time to `to` and fires the timers due. */
    advance(to: number) {
      now = to;
      for (const t of [...timers].sort((a, b) => a.at - b.at)) {
        if (t.at <= now) {
          timers.splice(timers.indexOf(t), 1);
          t.fn();
        }
      }
    },
  };
}

/** A writer that records each group and finishes it when the test says. */
function recordingWriter() {
  const groups: { entries: readonly FencedBatch[]; finish(lost?: string[][]): void; fail(err: Error): void }[] = [];
  const direct: DecodedBatch[] = [];
  const writer: GroupObjectWriter = {
    async write(batch) {
      direct.push(batch);
    },
    writeGroup(entries) {
      return new Promise((resolve, reject) => {
        groups.push({ entries, finish: (lost) => resolve(lost ?? entries.map(() => [])), fail: reject });
      });
    },
  };
  return { writer, groups, direct };
}

const settled = async <T>(p: Promise<T>) => {
  let state: 'pending' | 'resolved' | 'rejected' = 'pending';
  p.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  await new Promise((r) => setImmediate(r));
  return state;
};
const tick = () => new Promise((r) => setImmediate(r));

describe('write coalescer', () => {
  const options = { enabled: true, windowMs: 10, maxRows: 100 };

  test('a batch alone is written at once; batches that wait while a group runs share the next one, after the window', async () => {
    const { writer, groups } = recordingWriter();
    const time = manualClock();
    const records: number[] = [];
    const coalescer = createCoalescingWriter(writer, options, { clock: time.clock, metrics: { groupWritten: (b) => records.push(b) } });
    const first = coalescer.write(batchOf('a', ['x']), fenceOf('s1', 'a'));
    assert.equal(groups.length, 1, 'nothing was being written: at once, no timer');
    assert.equal(time.pendingTimers(), 0);
    const later = ['b', 'c', 'd'].map((acct, i) => coalescer.write(batchOf(acct, ['x']), fenceOf(`s${i + 2}`, acct)));
    assert.equal(groups.length, 1, 'they wait for the group being written');
    assert.equal(await settled(first), 'pending', 'not before its commit');
    groups[0]!.finish();
    await first;
    await tick();
    // Several streams wait: the next group starts windowMs after the previous start, not before.
    assert.equal(groups.length, 1);
    time.advance(9);
    assert.equal(groups.length, 1);
    time.advance(10);
    assert.equal(groups.length, 2);
    assert.deepEqual(
      groups[1]!.entries.map((e) => e.fence.sessionId),
      ['s2', 's3', 's4'],
    );
    groups[1]!.finish();
    await Promise.all(later);
    assert.deepEqual(records, [1, 3]);
    // Alone again, long after: at once.
    time.advance(1000);
    const alone = coalescer.write(batchOf('a', ['y']), fenceOf('s1', 'a'));
    await tick();
    assert.equal(groups.length, 3);
    groups[2]!.finish();
    await alone;
  });

  test('groups start at most once per window while many streams write', async () => {
    const { writer, groups } = recordingWriter();
    const time = manualClock();
    const coalescer = createCoalescingWriter(writer, options, { clock: time.clock });
    const writes: Promise<void>[] = [];
    const starts: number[] = [];
    const step = async (now: number, arrivals: number) => {
      time.advance(now);
      for (let s = 0; s < arrivals; s++) {
        const account = `acct-${now}-${s}`;
        writes.push(coalescer.write(batchOf(account, ['x']), fenceOf(`session-${account}`, account)));
      }
      while (starts.length < groups.length) starts.push(now);
      // Every statement takes less than a millisecond here.
      for (const g of groups) g.finish();
      await tick();
      await tick();
    };
    let now = 0;
    for (; now < 100; now++) await step(now, 5);
    for (; coalescer.waiting > 0 && now < 1000; now++) await step(now, 0);
    await Promise.all(writes);
    assert.equal(
      groups.reduce((n, g) => n + g.entries.length, 0),
      500,
    );
    for (let i = 1; i < starts.length; i++) assert.ok(starts[i]! - starts[i - 1]! >= 10, `group starts ${starts.join(', ')}`);
    assert.ok(groups.length <= 12, `${groups.length} groups for 500 batches over 100 ms`);
  });

  test('one batch per session per group, within maxRows; a batch larger than maxRows goes alone', async () => {
    const { writer, groups } = recordingWriter();
    const time = manualClock();
    const coalescer = createCoalescingWriter(writer, { ...options, maxRows: 5 }, { clock: time.clock });
    const first = coalescer.write(batchOf('a', ['0']), fenceOf('s1', 'a'));
    const queued = [
      coalescer.write(batchOf('a', ['1']), fenceOf('s1', 'a')),
      coalescer.write(batchOf('b', ['1', '2']), fenceOf('s2', 'b')),
      coalescer.write(batchOf('a', ['2']), fenceOf('s1', 'a')),
      coalescer.write(batchOf('c', ['1', '2', '3']), fenceOf('s3', 'c')),
      coalescer.write(batchOf('d', ['1', '2', '3', '4', '5', '6', '7']), fenceOf('s4', 'd')),
    ];
    groups[0]!.finish();
    await first;
    for (let now = 10; now < 200 && coalescer.waiting > 0; now += 10) {
      await tick();
      time.advance(now);
      groups.at(-1)!.finish();
      await tick();
    }
    groups.at(-1)!.finish();
    await Promise.all(queued);
    const shape = groups.slice(1).map((g) => g.entries.map((e) => `${e.fence.sessionId}:${e.batch.upserts.length}`));
    assert.deepEqual(shape, [['s1:1', 's2:2'], ['s1:1', 's3:3'], ['s4:7']]);
  });

  test('a lost lease rejects only its batch; a failed statement is retried batch by batch', async () => {
    const { writer, groups } = recordingWriter();
    const time = manualClock();
    const coalescer = createCoalescingWriter(writer, options, { clock: time.clock });
    const first = coalescer.write(batchOf('a', ['0']), fenceOf('s1', 'a'));
    const [b, c] = [coalescer.write(batchOf('b', ['1']), fenceOf('s2', 'b')), coalescer.write(batchOf('c', ['1']), fenceOf('s3', 'c'))];
    groups[0]!.finish();
    await first;
    await tick();
    time.advance(10);
    groups[1]!.finish([['b'], []]);
    await assert.rejects(b, (err) => isLeaseLost(err) && err.accounts.join() === 'b');
    await c;
    await tick();

    const [d, e, f] = ['d', 'e', 'f'].map((acct, i) => coalescer.write(batchOf(acct, ['1']), fenceOf(`t${i}`, acct)));
    const eFails = assert.rejects(e!, /e alone/);
    time.advance(20);
    await tick();
    groups[2]!.fail(new Error('null value in column "kind"'));
    await tick();
    // Alone, one by one: d, then e (the bad one), then f.
    assert.equal(groups[3]!.entries.length, 1);
    groups[3]!.finish();
    await tick();
    groups[4]!.fail(new Error('null value in column "kind" (e alone)'));
    await tick();
    groups[5]!.finish();
    await d;
    await eFails;
    await f;
  });

  test('disabled, or unfenced, or without accounts: straight to the writer', async () => {
    const { writer, groups, direct } = recordingWriter();
    await createCoalescingWriter(writer, { ...options, enabled: false }).write(batchOf('a', ['x']), fenceOf('s1', 'a'));
    const on = createCoalescingWriter(writer, options);
    await on.write(batchOf('a', ['x']));
    await on.write(emptyDecodedBatch(), fenceOf('s1', 'a'));
    assert.equal(direct.length, 3);
    assert.equal(groups.length, 0);
  });
});

for (const driver of testDrivers()) {
  describe(`group writes (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let run: ReturnType<typeof createRawQuery>;
    const names = async (account: string) =>
      (await run(`select name from objects where account = $1 order by name`, [account])).map((r) => String((r as { name: string }).name));
    const eventsTotal = async (account: string) =>
      Number(((await run(`select events_total from accounts where name = $1`, [account])) as { events_total: number }[])[0]!.events_total);

    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url, { maxConnections: 2 });
      run = createRawQuery(database);
      // Five accounts leased to five sessions (epoch 1, valid), one whose lease expired.
      for (const [name, session, expiry] of [
        ['a', 's1', "now() + interval '1 minute'"],
        ['b', 's2', "now() + interval '1 minute'"],
        ['c', 's3', "now() + interval '1 minute'"],
        ['d', 's4', "now() - interval '1 second'"],
        ['e', 's5', "now() + interval '1 minute'"],
      ] as const) {
        await run(`insert into accounts (name, state, session_id, lease_epoch, lease_expires_at) values ($1, 'ACTIVE', $2, 1, ${expiry})`, [
          name,
          session,
        ]);
      }
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('several sessions in one statement, each fenced by its own lease', async () => {
      const writer = createObjectWriter(database);
      const lost = await writer.writeGroup([
        { batch: batchOf('a', ['a1', 'a2']), fence: fenceOf('s1', 'a') },
        { batch: batchOf('b', ['b1']), fence: fenceOf('s2', 'b', 7) }, // stale epoch
        { batch: batchOf('c', ['c1']), fence: fenceOf('s1', 'c') }, // c is s3's
        { batch: batchOf('d', ['d1']), fence: fenceOf('s4', 'd') }, // expired
        { batch: batchOf('e', ['e1', 'e2', 'e3']), fence: fenceOf('s5', 'e') },
      ]);
      assert.deepEqual(lost, [[], ['b'], ['c'], ['d'], []]);
      assert.deepEqual(await names('a'), ['a1', 'a2']);
      assert.deepEqual(await names('e'), ['e1', 'e2', 'e3']);
      for (const account of ['b', 'c', 'd']) assert.deepEqual(await names(account), [], `${account}: nothing written`);
      assert.deepEqual([await eventsTotal('a'), await eventsTotal('b'), await eventsTotal('e')], [2, 0, 3]);
    });

    test('a statement that fails writes nothing; through the coalescer only the bad batch fails', async () => {
      const writer = createObjectWriter(database);
      const bad = batchOf('b', ['b-bad']);
      (bad.upserts[0] as { kind: string | null }).kind = null; // breaks objects.kind NOT NULL
      const entries = [
        { batch: batchOf('a', ['a3']), fence: fenceOf('s1', 'a') },
        { batch: bad, fence: fenceOf('s2', 'b') },
        { batch: batchOf('e', ['e4']), fence: fenceOf('s5', 'e') },
      ];
      await assert.rejects(writer.writeGroup(entries));
      assert.deepEqual(await names('a'), ['a1', 'a2'], 'the failed statement wrote nothing');

      const coalescer = createCoalescingWriter(writer, { enabled: true, windowMs: 0, maxRows: 100 });
      // A first write holds the coalescer busy, so the next three wait and share one group.
      const busy = coalescer.write(batchOf('c', ['c9']), fenceOf('s3', 'c'));
      const results = await Promise.allSettled([busy, ...entries.map((e) => coalescer.write(e.batch, e.fence))]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual(await names('a'), ['a1', 'a2', 'a3']);
      assert.deepEqual(await names('e'), ['e1', 'e2', 'e3', 'e4']);
      assert.deepEqual(await names('b'), []);
    });
  });
}
