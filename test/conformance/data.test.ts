/**
 * Page sections 3 (sequences, acks, accounts a stream may write), 4 (events, ordering, bookmarks), 5 (lists and resume
 * points) and 8 (the gateway scrubs Secrets anyway), with rows E14–E17: every broken data message ends the stream with
 * its row's status and nothing of it is written; a complete list is authoritative whatever its versions (etcd
 * restore); opaque versions are kept as received and offered back; bookmarks move resume points but are not events.
 * The cache is read through the gateway's ObjectService, the resume points from Welcomes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Verdict, type Welcome } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import { startTestGateway } from '../../testkit/test-gateway.js';
import { helloAndWelcome, openAgentStream, type AgentStream, type RequestMessage } from './agent-stream.js';
import { cachedVersions, helloFor, objectClient, type TestGateway } from './harness.js';
import { added, batch, bookmark, cm, deleted, EventType, marker, modified, SyncPhase, type EventInit } from './scripted.js';
import { rowTest } from './status-cases.js';

const enc = (text: string) => new TextEncoder().encode(text);

for (const driver of testDrivers()) {
  describe(`data messages, events, lists and resume points (sections 3, 4, 5, 8, 9) (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    const open: AgentStream[] = [];
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 20 } });
    });
    after(async () => {
      for (const s of open) s.abort();
      await t?.close();
    });
    const stream = () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      open.push(s);
      return s;
    };
    /** Opens a stream for `agentId` caching `accounts` and returns it with its Welcome. */
    const connect = async (
      agentId: string,
      accounts: string[],
      extra: Parameters<typeof helloFor>[2] = {},
    ): Promise<[AgentStream, Welcome]> => {
      const s = stream();
      const w = await helloAndWelcome(s, helloFor(agentId, accounts, extra));
      return [s, w];
    };
    const close = async (s: AgentStream) => {
      s.end();
      await s.ended;
    };
    /** name → resourceVersion of the account's cached ConfigMaps. */
    const cache = async (account: string) => {
      const out: Record<string, string> = {};
      for (const [k, rv] of await cachedVersions(t.gateway.grpcUrl, account)) out[k.split('/').at(-1)!] = rv;
      return out;
    };
    const resumeOf = (w: Welcome, account: string) =>
      w.accounts
        .find((a) => a.account === account)!
        .resume.map((p) => `${p.apiVersion}/${p.kind}/${p.watchNamespace}@${p.resourceVersion}`);
    const eventsTotal = async (account: string) => {
      const [row] = await t.query<{ events_total: number | string; last_event_at: unknown }>(
        `select events_total, last_event_at from accounts where name = '${account}'`,
      );
      return { total: Number(row!.events_total), lastEventAt: String(row!.last_event_at) };
    };
    /** Lists the ConfigMap scope of `account` completely: START, the objects as ADDED, END. Returns the next sequence. */
    const list = async (s: AgentStream, seq: number, account: string, objects: ReturnType<typeof cm>[], rv: string): Promise<number> => {
      s.send(marker(seq, account, SyncPhase.START));
      s.send(
        batch(
          seq + 1,
          objects.map((o) => added(account, o)),
        ),
      );
      s.send(marker(seq + 2, account, SyncPhase.END, rv, objects.length));
      await s.waitForAck(seq + 2);
      return seq + 3;
    };

    rowTest(
      'E14',
      'a gap, a repeat or a first sequence other than 1: the stream ends and nothing of that message is stored',
      async (expect) => {
        const [gap] = await connect('agent-seq', ['conf-seq']);
        gap.send(batch(1, [added('conf-seq', cm('one', '1'))]));
        await gap.waitForAck(1);
        gap.send(batch(3, [added('conf-seq', cm('three', '3'))]));
        expect(await gap.ended, /sequence 3 is out of order: expected 2/);

        const [repeat] = await connect('agent-seq', ['conf-seq']);
        repeat.send(batch(1, [added('conf-seq', cm('two', '2'))]));
        await repeat.waitForAck(1);
        repeat.send(batch(1, [added('conf-seq', cm('again', '4'))]));
        expect(await repeat.ended, /out of order/);

        const [zero] = await connect('agent-seq', ['conf-seq']);
        zero.send(marker(0, 'conf-seq', SyncPhase.START));
        expect(await zero.ended, /expected 1/);
        assert.deepEqual(Object.keys(await cache('conf-seq')).sort(), ['one', 'two']);
      },
    );

    rowTest('E14', 'the first data message of a resumed session must also have sequence 1', async (expect) => {
      const [first, w] = await connect('agent-seq-resume', ['conf-seq-resume']);
      first.send(batch(1, [added('conf-seq-resume', cm('a', '1'))]));
      await first.waitForAck(1);
      const [resumed] = await connect('agent-seq-resume', ['conf-seq-resume'], {
        resumeSessionId: w.sessionId,
        resumeSessionToken: w.sessionToken,
      });
      resumed.send(batch(2, [added('conf-seq-resume', cm('b', '2'))]));
      expect(await resumed.ended, /expected 1/);
      const [again, w2] = await connect('agent-seq-resume', ['conf-seq-resume']);
      assert.equal(w2.accounts[0]!.verdict, Verdict.CACHING);
      again.send(batch(1, [added('conf-seq-resume', cm('c', '3'))]));
      await again.waitForAck(1);
      assert.deepEqual(Object.keys(await cache('conf-seq-resume')).sort(), ['a', 'c']);
      await close(again);
    });

    rowTest(
      'E15',
      'data for an account the stream does not cache (never announced, STANDBY, REFUSED, removed): nothing of the message written',
      async (expect) => {
        const [holder] = await connect('agent-holder', ['conf-held']);
        const refusedHello: RequestMessage = {
          case: 'hello',
          value: {
            agentId: 'agent-x',
            accounts: [
              { name: 'conf-mine', apiHost: 'https://a:6443' },
              { name: 'conf-held', apiHost: 'https://cluster-conf-held.example:6443' },
              { name: 'conf-unreachable', error: 'cannot reach the API server' },
            ],
          },
        };
        const cases: [string, (s: AgentStream) => void][] = [
          [
            'events for an account never announced (after a valid one in the same batch)',
            (s) => s.send(batch(1, [added('conf-mine', cm('ok', '1')), added('conf-never', cm('x', '1'))])),
          ],
          ['events for a STANDBY account', (s) => s.send(batch(1, [added('conf-held', cm('x', '1'))]))],
          ['events for a REFUSED account', (s) => s.send(batch(1, [added('conf-unreachable', cm('x', '1'))]))],
          ['a sync marker for an account never announced', (s) => s.send(marker(1, 'conf-never', SyncPhase.START))],
          [
            'an AccountReport for a STANDBY account',
            (s) =>
              s.send({
                case: 'accountReport',
                value: { account: { name: 'conf-held', apiHost: 'https://cluster-conf-held.example:6443' } },
              }),
          ],
          [
            'events for an account removed with AccountsChanged',
            (s) => {
              s.send({ case: 'accountsChanged', value: { changeId: 1n, removed: ['conf-mine'] } });
              s.send(batch(1, [added('conf-mine', cm('late', '1'))]));
            },
          ],
        ];
        for (const [what, send] of cases) {
          const s = stream();
          const w = await helloAndWelcome(s, refusedHello);
          assert.deepEqual(
            w.accounts.map((a) => Verdict[a.verdict]),
            ['CACHING', 'STANDBY', 'REFUSED'],
            what,
          );
          send(s);
          const o = await s.ended;
          assert.ok(o.grpcStatus !== undefined, what);
          expect(o);
        }
        for (const account of ['conf-mine', 'conf-held', 'conf-never', 'conf-unreachable'])
          assert.deepEqual(await cache(account), {}, `nothing written for ${account}`);
        await close(holder);
      },
    );

    /** Events that break section 4, each after a valid event of the same batch. */
    const badEvents: [string, EventInit][] = (() => {
      const ok = added('conf-ev', cm('x', '2'));
      const json = (obj: unknown) => enc(JSON.stringify(obj));
      return [
        ['no api_version', { ...ok, apiVersion: '' }],
        ['no kind', { ...ok, kind: '' }],
        ['no resource_version', { ...ok, resourceVersion: '' }],
        ['type UNSPECIFIED', { ...ok, type: EventType.UNSPECIFIED }],
        ['an unknown type', { ...ok, type: 9 as EventType }],
        ['ADDED without a name', { ...ok, name: '' }],
        ['ADDED without object_json', { ...ok, objectJson: new Uint8Array() }],
        ['MODIFIED without object_json', { ...modified('conf-ev', cm('x', '2')), objectJson: new Uint8Array() }],
        ['object_json that is not JSON', { ...ok, objectJson: enc('{"metadata":') }],
        ['object_json that is not UTF-8', { ...ok, objectJson: new Uint8Array([0x7b, 0xff, 0x7d]) }],
        ['object_json that is an array', { ...ok, objectJson: enc('[1]') }],
        ['object_json without metadata', { ...ok, objectJson: json({ apiVersion: 'v1', kind: 'ConfigMap' }) }],
        ["an apiVersion other than the event's", { ...ok, objectJson: json({ ...cm('x', '2'), apiVersion: 'v2' }) }],
        ["a kind other than the event's", { ...ok, objectJson: json({ ...cm('x', '2'), kind: 'Secret' }) }],
        ["a metadata.name other than the event's", { ...ok, name: 'y' }],
        ["a metadata.namespace other than the event's", { ...ok, namespace: 'other' }],
        ["a metadata.uid other than the event's", { ...ok, uid: 'another-uid' }],
        ["a metadata.resourceVersion other than the event's", { ...ok, resourceVersion: '3' }],
        [
          'labels that are not strings',
          { ...ok, objectJson: json({ ...cm('x', '2'), metadata: { ...cm('x', '2').metadata, labels: { a: 1 } } }) },
        ],
        ['a NUL character in the object', { ...ok, objectJson: json(cm('x', '2', { data: { v: 'a\u0000b' } })) }],
        ['a NUL character in the name', { ...ok, name: 'x\u0000' }],
      ];
    })();

    rowTest(
      'E16',
      'an event that breaks section 4 (required fields, type, object_json shape and identity, labels, NUL): nothing of the batch written',
      async (expect) => {
        for (const [what, bad] of badEvents) {
          const [s] = await connect('agent-ev', ['conf-ev']);
          s.send(batch(1, [added('conf-ev', cm(`good-${what.replace(/\W+/g, '-').toLowerCase()}`, '1')), bad]));
          const o = await s.ended;
          assert.ok(o.grpcStatus !== undefined, what);
          try {
            expect(o);
          } catch (err) {
            throw new Error(`${what}: ${(err as Error).message}`);
          }
        }
        assert.deepEqual(await cache('conf-ev'), {});
      },
    );

    rowTest('E16', 'an event whose object holds a lone surrogate (a JSON \\ud800 escape)', async (expect) => {
      const [s] = await connect('agent-ev-surrogate', ['conf-ev-surrogate']);
      const obj = JSON.stringify(cm('x', '2')).replace('"v":"2"', '"v":"\\ud800"');
      s.send(batch(1, [{ ...added('conf-ev-surrogate', cm('x', '2')), objectJson: enc(obj) }]));
      expect(await s.ended);
      assert.deepEqual(await cache('conf-ev-surrogate'), {});
    });

    test('list items without apiVersion and kind are accepted: the gateway fills them in from the event', async () => {
      const [s] = await connect('agent-items', ['conf-items']);
      const { apiVersion: _a, kind: _k, ...item } = cm('bare', '5');
      s.send(batch(1, [{ ...added('conf-items', cm('bare', '5')), objectJson: enc(JSON.stringify(item)) }]));
      await s.waitForAck(1);
      const got = await objectClient(t.gateway.grpcUrl).getObject({
        account: 'conf-items',
        kind: 'ConfigMap',
        namespace: 'default',
        name: 'bare',
      });
      assert.equal(got.object?.object?.apiVersion, 'v1');
      assert.equal(got.object?.object?.kind, 'ConfigMap');
      await close(s);
    });

    rowTest(
      'E17',
      'a sync marker that breaks section 5 (END without START, END without resourceVersion, no api_version / kind, an unknown phase)',
      async (expect) => {
        const cases: [string, RequestMessage[]][] = [
          ['END without START', [marker(1, 'conf-sync', SyncPhase.END, '10', 0)]],
          ['END without resource_version', [marker(1, 'conf-sync', SyncPhase.START), marker(2, 'conf-sync', SyncPhase.END, '', 0)]],
          [
            'a marker without api_version',
            [{ case: 'sync', value: { sequence: 1n, account: 'conf-sync', kind: 'ConfigMap', phase: SyncPhase.START } }],
          ],
          [
            'a marker without kind',
            [{ case: 'sync', value: { sequence: 1n, account: 'conf-sync', apiVersion: 'v1', phase: SyncPhase.START } }],
          ],
          ['phase UNSPECIFIED', [marker(1, 'conf-sync', SyncPhase.UNSPECIFIED)]],
          ['an unknown phase', [marker(1, 'conf-sync', 7 as SyncPhase)]],
          [
            'END of another scope than the START',
            [marker(1, 'conf-sync', SyncPhase.START, '', 0, 'ns-a'), marker(2, 'conf-sync', SyncPhase.END, '10', 0, 'ns-b')],
          ],
        ];
        for (const [what, messages] of cases) {
          const [s] = await connect('agent-sync', ['conf-sync']);
          for (const m of messages) s.send(m);
          const o = await s.ended;
          assert.ok(o.grpcStatus !== undefined, what);
          try {
            expect(o);
          } catch (err) {
            throw new Error(`${what}: ${(err as Error).message}`);
          }
        }
      },
    );

    rowTest(
      'E17',
      "END's count differs from the distinct objects sent since START: nothing pruned, nothing marked synced",
      async (expect) => {
        const [s] = await connect('agent-count', ['conf-count']);
        let seq = await list(s, 1, 'conf-count', [cm('old', '1'), cm('kept', '2')], '2');
        await close(s);
        const [s2, w2] = await connect('agent-count', ['conf-count']);
        assert.deepEqual(resumeOf(w2, 'conf-count'), ['v1/ConfigMap/@2'], 'the first list completed');
        seq = 1;
        s2.send(marker(seq++, 'conf-count', SyncPhase.START));
        s2.send(batch(seq++, [added('conf-count', cm('kept', '3'))]));
        s2.send(batch(seq++, [added('conf-count', cm('kept', '3'))]));
        s2.send(marker(seq++, 'conf-count', SyncPhase.END, '10', 3));
        expect(await s2.ended);
        assert.deepEqual(Object.keys(await cache('conf-count')).sort(), ['kept', 'old'], 'nothing pruned');
        const [s3, w3] = await connect('agent-count', ['conf-count']);
        assert.deepEqual(resumeOf(w3, 'conf-count'), [], 'the scope is not synced: no resume point, the agent lists again');
        await close(s3);
      },
    );

    test('a complete list at a LOWER resourceVersion replaces cached objects with higher ones and prunes the rest (etcd restore); its version becomes the resume point', async () => {
      const [s] = await connect('agent-restore', ['conf-restore']);
      await list(s, 1, 'conf-restore', [cm('a', '900'), cm('b', '901'), cm('gone', '902')], '950');
      assert.deepEqual(await cache('conf-restore'), { a: '900', b: '901', gone: '902' });
      await close(s);
      // The cluster was restored from a backup: versions start lower.
      const [s2, w2] = await connect('agent-restore', ['conf-restore']);
      assert.deepEqual(resumeOf(w2, 'conf-restore'), ['v1/ConfigMap/@950']);
      await list(s2, 1, 'conf-restore', [cm('a', '12', { data: { restored: 'yes' } }), cm('b', '13')], '20');
      assert.deepEqual(await cache('conf-restore'), { a: '12', b: '13' });
      const obj = await objectClient(t.gateway.grpcUrl).getObject({
        account: 'conf-restore',
        kind: 'ConfigMap',
        namespace: 'default',
        name: 'a',
      });
      assert.deepEqual(obj.object?.object?.data, { restored: 'yes' }, 'the listed object, not the older row');
      await close(s2);
      const [s3, w3] = await connect('agent-restore', ['conf-restore']);
      assert.deepEqual(resumeOf(w3, 'conf-restore'), ['v1/ConfigMap/@20'], 'the list version, lower than before, is the resume point');
      await close(s3);
    });

    test('non-decimal resourceVersions are stored and offered back as the resume point exactly as received; between two of them the later message wins', async () => {
      const [s] = await connect('agent-opaque', ['conf-opaque']);
      let seq = await list(s, 1, 'conf-opaque', [cm('o', 'opaque-B7')], 'list:Zz-01');
      s.send(batch(seq++, [modified('conf-opaque', cm('o', 'opaque-A1'))]));
      s.send(batch(seq++, [added('conf-opaque', cm('p', '17')), modified('conf-opaque', cm('p', 'x16'))]));
      await s.waitForAck(seq - 1);
      assert.deepEqual(await cache('conf-opaque'), { o: 'opaque-A1', p: 'x16' }, 'not compared: the later message wins');
      s.send(batch(seq++, [bookmark('conf-opaque', 'bm/ÄÖ 7')]));
      await s.waitForAck(seq - 1);
      await close(s);
      const [s2, w2] = await connect('agent-opaque', ['conf-opaque']);
      assert.deepEqual(resumeOf(w2, 'conf-opaque'), ['v1/ConfigMap/@bm/ÄÖ 7'], 'offered back exactly as received');
      await close(s2);
    });

    test('within a watch, an older decimal version is acknowledged and has no effect; DELETED may omit object_json', async () => {
      const [s] = await connect('agent-order', ['conf-order']);
      let seq = await list(s, 1, 'conf-order', [cm('w', '10')], '10');
      s.send(batch(seq++, [modified('conf-order', cm('w', '9', { data: { stale: 'yes' } }))]));
      s.send(batch(seq++, [deleted('conf-order', cm('w', '8'))]));
      await s.waitForAck(seq - 1);
      assert.deepEqual(await cache('conf-order'), { w: '10' });
      s.send(batch(seq++, [modified('conf-order', cm('w', '11'))]));
      await s.waitForAck(seq - 1);
      assert.deepEqual(await cache('conf-order'), { w: '11' });
      s.send(batch(seq++, [deleted('conf-order', cm('w', '12'))]));
      await s.waitForAck(seq - 1);
      assert.deepEqual(await cache('conf-order'), {});
      // DELETED may come without object_json.
      s.send(batch(seq++, [added('conf-order', cm('v', '13'))]));
      s.send(batch(seq++, [{ ...deleted('conf-order', cm('v', '14')), objectJson: new Uint8Array() }]));
      await s.waitForAck(seq - 1);
      assert.deepEqual(await cache('conf-order'), {}, 'a DELETED without object_json deletes');
      await close(s);
    });

    test('a BOOKMARK moves the resume point but is not an event: events_total and last_event_at do not move', async () => {
      const [s] = await connect('agent-bookmark', ['conf-bookmark']);
      let seq = await list(s, 1, 'conf-bookmark', [cm('b1', '100'), cm('b2', '101')], '101');
      const before = await eventsTotal('conf-bookmark');
      assert.equal(before.total, 2, 'the two listed objects are events');
      for (const rv of ['150', '160', '170']) {
        s.send(batch(seq++, [bookmark('conf-bookmark', rv)]));
      }
      await s.waitForAck(seq - 1);
      assert.deepEqual(await eventsTotal('conf-bookmark'), before, 'bookmarks are not counted');
      await close(s);
      const [s2, w2] = await connect('agent-bookmark', ['conf-bookmark']);
      assert.deepEqual(resumeOf(w2, 'conf-bookmark'), ['v1/ConfigMap/@170'], 'the last bookmark is the resume point');
      s2.send(batch(1, [modified('conf-bookmark', cm('b1', '171'))]));
      await s2.waitForAck(1);
      assert.equal((await eventsTotal('conf-bookmark')).total, 3, 'a change is counted');
      await close(s2);
    });

    test('a list cut off before END prunes nothing and leaves the scope unsynced: the next connection lists it again', async () => {
      const [s] = await connect('agent-cut', ['conf-cut']);
      await list(s, 1, 'conf-cut', [cm('c1', '5'), cm('c2', '6')], '6');
      await close(s);
      const [s2, w2] = await connect('agent-cut', ['conf-cut']);
      assert.deepEqual(resumeOf(w2, 'conf-cut'), ['v1/ConfigMap/@6']);
      s2.send(marker(1, 'conf-cut', SyncPhase.START));
      s2.send(batch(2, [added('conf-cut', cm('c1', '7'))]));
      await s2.waitForAck(2);
      s2.abort();
      await s2.ended;
      const [s3, w3] = await connect('agent-cut', ['conf-cut']);
      assert.deepEqual(resumeOf(w3, 'conf-cut'), [], 'no resume point: list again');
      assert.deepEqual(Object.keys(await cache('conf-cut')).sort(), ['c1', 'c2'], 'nothing pruned');
      await close(s3);
    });

    test('resume points are offered on any connection, not only a resumed session (another agent process of the same identity)', async () => {
      const [s] = await connect('agent-any-1', ['conf-any']);
      await list(s, 1, 'conf-any', [cm('x', '40')], '41');
      await close(s);
      const [s2, w2] = await connect('agent-any-2', ['conf-any']);
      assert.equal(w2.accounts[0]!.verdict, Verdict.CACHING);
      assert.deepEqual(resumeOf(w2, 'conf-any'), ['v1/ConfigMap/@41']);
      await close(s2);
    });

    test('acks are cumulative: each acknowledges everything up to its sequence, never more than was sent', async () => {
      const [s] = await connect('agent-acks', ['conf-acks']);
      for (let i = 1; i <= 20; i++) s.send(batch(i, [added('conf-acks', cm(`a${i}`, String(i)))]));
      await s.waitForAck(20);
      const acks = s.received.flatMap((r) => (r.message.case === 'ack' ? [r.message.value.sequence] : []));
      assert.ok(
        acks.every((a, i) => a >= 1n && a <= 20n && (i === 0 || a > acks[i - 1]!)),
        `acks increase: ${acks.join(',')}`,
      );
      assert.equal(Object.keys(await cache('conf-acks')).length, 20);
      await close(s);
    });

    test('the gateway removes Secret data, stringData and the last-applied annotation from events anyway (section 8)', async () => {
      const [s] = await connect('agent-secret', ['conf-secret']);
      const secret = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: 'creds',
          namespace: 'default',
          uid: 'u1',
          resourceVersion: '7',
          annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"p":"hunter2"}}', keep: 'me' },
        },
        type: 'Opaque',
        data: { p: Buffer.from('hunter2').toString('base64') },
        stringData: { p: 'hunter2' },
      };
      s.send(batch(1, [added('conf-secret', secret)]));
      await s.waitForAck(1);
      const got = await objectClient(t.gateway.grpcUrl).getObject({
        account: 'conf-secret',
        kind: 'Secret',
        namespace: 'default',
        name: 'creds',
      });
      const obj = got.object!.object! as Record<string, any>;
      assert.equal(obj.data, undefined);
      assert.equal(obj.stringData, undefined);
      assert.deepEqual(obj.metadata.annotations, { keep: 'me' });
      assert.ok(!JSON.stringify(obj).includes('hunter2'));
      await close(s);
    });
  });
}
