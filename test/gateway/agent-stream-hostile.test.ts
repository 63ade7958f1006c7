/**
 * Hostile or broken agents: every protocol violation ends the stream with the right code and writes nothing of the
 * offending message. Also the Secret-scrubbing defence in depth.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import {
  Code,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  hello,
  openAgentStream,
  SyncPhase,
  syncMarker,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

for (const driver of testDrivers()) {
  describe(`hostile agent streams (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    before(async () => {
      t = await startTestGateway(driver);
    });
    after(async () => {
      await t?.close();
    });
    const names = async (account: string) =>
      (await t.query<{ name: string }>(`select name from objects where account = '${account}' order by name`)).map((r) => r.name);
    const count = async (table: string, account: string) =>
      Number(
        (
          await t.query<{ n: number }>(
            `select count(*)::int as n from ${table} where ${table === 'accounts' ? 'name' : 'account'} = '${account}'`,
          )
        )[0]!.n,
      );
    const failsWith = async (s: TestAgentStream, code: Code, message?: RegExp) => {
      const err = await s.ended;
      assert.ok(err, 'expected the stream to fail');
      assert.equal(err.code, code, `got ${Code[err.code]}: ${err.rawMessage}`);
      if (message) assert.match(err.rawMessage, message);
      assert.doesNotMatch(err.rawMessage, /insert|select|sql|relation/i, 'no SQL leaks to the agent');
    };

    test('data before hello → FAILED_PRECONDITION, nothing written', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      s.send(events(1, [event('early', EventType.ADDED, configMap('a', 1))]));
      await failsWith(s, Code.FailedPrecondition, /first message must be a hello/);
      assert.equal(await count('objects', 'early'), 0);
      assert.equal(await count('accounts', 'early'), 0);
    });

    test('invalid hellos → INVALID_ARGUMENT, no account row', async () => {
      const cases: [string, ReturnType<typeof hello>, RegExp][] = [
        ['empty agent id', hello('', [{ name: 'h1' }]), /agent_id/],
        ['bad account name', hello('a', [{ name: 'Bad_Name!' }]), /account name/],
        ['duplicate account', hello('a', [{ name: 'dup' }, { name: 'dup' }]), /twice/],
        [
          'too many accounts',
          hello(
            'a',
            Array.from({ length: 1001 }, (_, i) => ({ name: `n${i}` })),
          ),
          /at most 1000/,
        ],
        // hostile-input regression: Postgres refused the NUL inside the insert, and the stream failed with INTERNAL
        ['NUL in the zone', hello('a', [{ name: 'dup' }], { zone: 'z\u0000' }), /hello\.zone contains a NUL character/],
        // hostile-input regression (seed 485352027): protobuf-es dropped the leading U+FEFF, so account "bom" was admitted
        ['a leading BOM in an account name', hello('a', [{ name: '\ufeffbom' }]), /account name "\ufeffbom" is invalid/],
      ];
      for (const [what, message, pattern] of cases) {
        const s = openAgentStream(t.gateway.grpcUrl);
        s.send(message);
        await failsWith(s, Code.InvalidArgument, pattern);
        assert.equal(await count('accounts', 'dup'), 0, what);
      }
      assert.equal(await count('accounts', 'n0'), 0);
      assert.equal(await count('accounts', 'bom'), 0);
    });

    test('NUL in an event or sync marker field → INVALID_ARGUMENT, nothing written', async () => {
      // hostile-input regression: the watch namespace reached the watch-state insert and the stream failed INTERNAL
      const bad: [string, Parameters<TestAgentStream['send']>[0], RegExp][] = [
        [
          'NUL in the watch namespace',
          events(1, [event('nul', EventType.ADDED, configMap('one', 1), 'ns\u0000')]),
          /event 0 of batch 1: watchNamespace contains a NUL/,
        ],
        [
          'NUL in the kind',
          events(1, [{ ...event('nul', EventType.ADDED, configMap('one', 1)), kind: 'Config\u0000Map' }]),
          /event 0 of batch 1: kind contains a NUL/,
        ],
        ['NUL in a sync marker', syncMarker(1, 'nul', SyncPhase.START, '', 0, 'a\u0000'), /sync\.watchNamespace contains a NUL/],
      ];
      for (const [what, message, pattern] of bad) {
        const s = openAgentStream(t.gateway.grpcUrl);
        await connectAgent(s, 'agent-nul', [{ name: 'nul' }]);
        s.send(message);
        await failsWith(s, Code.InvalidArgument, pattern);
        assert.deepEqual(await names('nul'), [], what);
        assert.equal((await t.query(`select 1 from watch_states where account = 'nul'`)).length, 0, what);
      }
    });

    test('sequence gaps and repeats → INVALID_ARGUMENT, the bad message is not written, accounts INACTIVE', async () => {
      const gap = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(gap, 'agent-seq', [{ name: 'seq' }]);
      gap.send(events(1, [event('seq', EventType.ADDED, configMap('one', 1))]));
      gap.send(events(3, [event('seq', EventType.ADDED, configMap('three', 3))]));
      await failsWith(gap, Code.InvalidArgument, /sequence 3 is out of order: expected 2/);
      assert.deepEqual(await names('seq'), ['one']);
      await eventually(
        'account seq INACTIVE',
        async () => (await t.query<{ state: string }>(`select state from accounts where name = 'seq'`))[0]!.state === 'INACTIVE',
      );

      const repeat = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(repeat, 'agent-seq', [{ name: 'seq' }]);
      repeat.send(events(1, [event('seq', EventType.ADDED, configMap('two', 2))]));
      repeat.send(events(1, [event('seq', EventType.ADDED, configMap('again', 4))]));
      await failsWith(repeat, Code.InvalidArgument, /out of order/);
      assert.deepEqual(await names('seq'), ['one', 'two']);

      const zero = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(zero, 'agent-seq', [{ name: 'seq' }]);
      zero.send(syncMarker(0, 'seq', SyncPhase.START));
      await failsWith(zero, Code.InvalidArgument, /expected 1/);
      const started = await t.query(`select 1 from watch_states where account = 'seq' and sync_gen > 0`);
      assert.equal(started.length, 0, 'the out-of-order START was not applied');
    });

    test('data for an account the stream does not cache (never announced, STANDBY) → PERMISSION_DENIED, nothing of it written', async () => {
      const holder = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(holder, 'agent-holder', [{ name: 'held' }]);
      const cases: [string, (s: TestAgentStream) => void, RegExp][] = [
        [
          'events, never announced',
          (s) =>
            s.send(
              events(1, [event('mine', EventType.ADDED, configMap('ok', 1)), event('unannounced', EventType.ADDED, configMap('x', 1))]),
            ),
          /event 1 of batch 1: account "unannounced" is not cached by this stream \(the agent has not announced it on this stream, or removed it\)/,
        ],
        [
          'events, STANDBY',
          (s) => s.send(events(1, [event('held', EventType.ADDED, configMap('x', 1))])),
          /account "held" is not cached by this stream \(its verdict on this stream is STANDBY\)/,
        ],
        ['sync marker', (s) => s.send(syncMarker(1, 'unannounced', SyncPhase.START)), /sync marker 1: account "unannounced" is not cached/],
        [
          'account report',
          (s) =>
            s.send({ case: 'accountReport', value: { account: { name: 'held', apiHost: 'https://cluster-held:6443' }, progress: [] } }),
          /account_report: account "held" is not cached/,
        ],
      ];
      for (const [what, send, message] of cases) {
        const s = openAgentStream(t.gateway.grpcUrl);
        const w = await connectAgent(s, `agent-${what.replaceAll(/\W/g, '')}`, [{ name: 'mine' }, { name: 'held' }]);
        assert.deepEqual(
          w.accounts.map((a) => a.verdict),
          [Verdict.CACHING, Verdict.STANDBY],
          what,
        );
        send(s);
        await failsWith(s, Code.PermissionDenied, message);
        assert.equal(await count('objects', 'mine'), 0, `${what}: nothing of the batch written`);
        assert.equal(await count('objects', 'held'), 0, what);
        assert.equal(await count('objects', 'unannounced'), 0, what);
        assert.equal(await count('watch_states', 'unannounced'), 0, what);
      }
      holder.end();
      await holder.ended;
    });

    test('sync END without START → INVALID_ARGUMENT, nothing pruned or marked synced', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-end', [{ name: 'endless' }]);
      s.send(events(1, [event('endless', EventType.ADDED, configMap('kept', 1))]));
      s.send(syncMarker(2, 'endless', SyncPhase.END, '10', 0));
      await failsWith(s, Code.InvalidArgument, /without a START/);
      assert.deepEqual(await names('endless'), ['kept']);
      const states = await t.query<{ synced: boolean }>(`select synced from watch_states where account = 'endless'`);
      assert.ok(states.every((r) => !r.synced));
    });

    test('sync END whose count is not the number of objects the list sent → INVALID_ARGUMENT, nothing pruned or marked synced', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-count', [{ name: 'counted' }]);
      s.send(events(1, [event('counted', EventType.ADDED, configMap('old', 1)), event('counted', EventType.ADDED, configMap('kept', 2))]));
      s.send(syncMarker(2, 'counted', SyncPhase.START));
      // The list sends "kept" (twice: one object) but claims three objects: an agent that lost some on the way.
      s.send(events(3, [event('counted', EventType.ADDED, configMap('kept', 3))]));
      s.send(events(4, [event('counted', EventType.ADDED, configMap('kept', 3))]));
      s.send(syncMarker(5, 'counted', SyncPhase.END, '10', 3));
      await failsWith(
        s,
        Code.InvalidArgument,
        /sync END for counted\/v1\/ConfigMap says the list held 3 objects, but the stream sent 1 distinct ones since its START: nothing pruned/,
      );
      assert.deepEqual(await names('counted'), ['kept', 'old'], 'nothing pruned');
      const states = await t.query<{ synced: boolean }>(`select synced from watch_states where account = 'counted'`);
      assert.ok(
        states.every((r) => !r.synced),
        'not marked synced: no resume point offered',
      );
    });

    test('invalid object JSON or identity mismatch → INVALID_ARGUMENT, nothing of the batch written', async () => {
      const bad = [
        [
          'not JSON',
          { ...event('badjson', EventType.ADDED, configMap('x', 2)), objectJson: new TextEncoder().encode('{"oops') },
          /not valid UTF-8 JSON/,
        ],
        [
          'array',
          { ...event('badjson', EventType.ADDED, configMap('x', 2)), objectJson: new TextEncoder().encode('[1]') },
          /must be a JSON object/,
        ],
        ['name mismatch', { ...event('badjson', EventType.ADDED, configMap('x', 2)), name: 'y' }, /metadata.name/],
        ['namespace mismatch', { ...event('badjson', EventType.ADDED, configMap('x', 2)), namespace: 'other' }, /metadata.namespace/],
        ['rv mismatch', { ...event('badjson', EventType.ADDED, configMap('x', 2)), resourceVersion: '3' }, /resourceVersion/],
        [
          'NUL character',
          {
            ...event('badjson', EventType.ADDED, configMap('x', 2)),
            objectJson: new TextEncoder().encode(JSON.stringify(configMap('x', 2, { data: { v: 'a\u0000b' } }))),
          },
          /NUL/,
        ],
        [
          'no object',
          { ...event('badjson', EventType.MODIFIED, configMap('x', 2)), objectJson: new Uint8Array() },
          /object_json is required/,
        ],
      ] as const;
      for (const [what, badEvent, pattern] of bad) {
        const s = openAgentStream(t.gateway.grpcUrl);
        await connectAgent(s, 'agent-json', [{ name: 'badjson' }]);
        s.send(events(1, [event('badjson', EventType.ADDED, configMap(`good-${what.replace(/ /g, '-')}`, 1)), badEvent]));
        await failsWith(s, Code.InvalidArgument, pattern);
      }
      assert.deepEqual(await names('badjson'), []);
      assert.equal(await count('watch_states', 'badjson'), 0);
    });

    test('a message over 4 MiB → RESOURCE_EXHAUSTED, nothing written', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-big', [{ name: 'big' }]);
      const huge = configMap('huge', 1, { data: { blob: 'x'.repeat(4 * 1024 * 1024 + 10) } });
      s.send(events(1, [event('big', EventType.ADDED, huge)]));
      await failsWith(s, Code.ResourceExhausted);
      assert.equal(await count('objects', 'big'), 0);
      await eventually(
        'account big INACTIVE',
        async () => (await t.query<{ state: string }>(`select state from accounts where name = 'big'`))[0]!.state === 'INACTIVE',
      );
    });

    test('a Secret that still carries data is stored without it', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-sec', [{ name: 'sec' }]);
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'creds',
          namespace: 'default',
          uid: 'u1',
          resourceVersion: '7',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"password":"hunter2"}}', keep: 'me' },
        },
        type: 'Opaque',
        data: { password: Buffer.from('hunter2').toString('base64') },
        stringData: { password: 'hunter2' },
      };
      s.send(events(1, [event('sec', EventType.ADDED, secret)]));
      await s.waitForAck(1);
      const dump = await t.query<{ row: string }>(`select t::text as row from objects t where account = 'sec'`);
      assert.equal(dump.length, 1);
      assert.ok(!dump[0]!.row.includes('hunter2') && !dump[0]!.row.includes(Buffer.from('hunter2').toString('base64')));
      const [row] = await t.query<{ object: Record<string, any> }>(`select object from objects where account = 'sec'`);
      assert.equal(row!.object.data, undefined);
      assert.equal(row!.object.stringData, undefined);
      assert.equal(row!.object.type, 'Opaque');
      assert.deepEqual(row!.object.metadata.annotations, { keep: 'me' });
      s.end();
      assert.equal(await s.ended, undefined);
    });

    test('a database failure ends the stream with INTERNAL and no SQL detail; earlier batches stay acknowledged', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-dbfail', [{ name: 'dbfail' }]);
      s.send(events(1, [event('dbfail', EventType.ADDED, configMap('before', 1))]));
      await s.waitForAck(1);
      await t.query('alter table watch_states rename to watch_states_away');
      try {
        s.send(events(2, [event('dbfail', EventType.ADDED, configMap('during', 2))]));
        const err = await s.ended;
        assert.equal(err?.code, Code.Internal);
        assert.equal(err?.rawMessage, 'internal error');
      } finally {
        await t.query('alter table watch_states_away rename to watch_states');
      }
      assert.deepEqual(await names('dbfail'), ['before'], 'the failed batch was rolled back as a whole');
    });
  });
}
