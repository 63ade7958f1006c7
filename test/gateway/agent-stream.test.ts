/**
 * The agent stream over real HTTP/2 sockets: Hello → Welcome, events stored and acknowledged, stale events dropped,
 * full lists pruning what they did not see, resume points, account binding, INACTIVE after disconnect.
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
  openAgentStream,
  SyncPhase,
  syncMarker,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { eventually } from '../../testkit/eventually.js';

type Row = { name: string; resource_version: string; data: string };

for (const driver of testDrivers()) {
  describe(`agent stream (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    before(async () => {
      t = await startTestGateway(driver, { agents: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 1 } });
    });
    after(async () => {
      await t?.close();
    });
    const rows = (account: string) =>
      t.query<Row>(`select name, resource_version, object->'data'->>'v' as data from objects where account = '${account}' order by name`);
    const accountState = async (name: string) =>
      (await t.query<{ state: string }>(`select state from accounts where name = '${name}'`))[0]?.state;

    test('hello gets a welcome with a CACHING verdict, and the account becomes ACTIVE', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      const welcome = await connectAgent(s, 'agent-a', [{ name: 'alpha' }]);
      assert.equal(welcome.gatewayId, 'gw-test');
      assert.ok(welcome.sessionId.length > 0);
      assert.equal(welcome.maxUnacked, 32);
      assert.equal(welcome.heartbeatIntervalSeconds, 1);
      assert.deepEqual(
        welcome.accounts.map((a) => [a.account, a.verdict]),
        [['alpha', Verdict.CACHING]],
      );
      const [acc] = await t.query<{ state: string; agent_id: string; session_id: string; api_host: string; kinds: unknown }>(
        `select state, agent_id, session_id, api_host, kinds from accounts where name = 'alpha'`,
      );
      assert.equal(acc!.state, 'ACTIVE');
      assert.equal(acc!.agent_id, 'agent-a');
      assert.equal(acc!.session_id, welcome.sessionId);
      assert.equal(acc!.api_host, 'https://cluster-alpha:6443');
      assert.deepEqual(acc!.kinds, [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }]);
      s.end();
      assert.equal(await s.ended, undefined);
      await eventually('account alpha INACTIVE', async () => (await accountState('alpha')) === 'INACTIVE');
    });

    test('events are stored, updated and deleted; stale and duplicate events never overwrite newer data', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-a', [{ name: 'alpha' }]);
      s.send(events(1, [event('alpha', EventType.ADDED, configMap('a', 10)), event('alpha', EventType.ADDED, configMap('b', 11))]));
      await s.waitForAck(1);
      assert.deepEqual(await rows('alpha'), [
        { name: 'a', resource_version: '10', data: '10' },
        { name: 'b', resource_version: '11', data: '11' },
      ]);
      s.send(events(2, [event('alpha', EventType.MODIFIED, configMap('a', 12)), event('alpha', EventType.DELETED, configMap('b', 13))]));
      await s.waitForAck(2);
      assert.deepEqual(await rows('alpha'), [{ name: 'a', resource_version: '12', data: '12' }]);
      // Stale (older RV) and a replay of the same batch's older state: both dropped.
      s.send(events(3, [event('alpha', EventType.MODIFIED, configMap('a', 9))]));
      s.send(events(4, [event('alpha', EventType.MODIFIED, configMap('a', 15)), event('alpha', EventType.MODIFIED, configMap('a', 14))]));
      await s.waitForAck(4);
      assert.deepEqual(await rows('alpha'), [{ name: 'a', resource_version: '15', data: '15' }]);
      // A stale DELETED does not delete a newer row.
      s.send(events(5, [event('alpha', EventType.DELETED, configMap('a', 14))]));
      await s.waitForAck(5);
      assert.equal((await rows('alpha')).length, 1);
      // Labels are stored from metadata.labels; last_event_at is set.
      s.send(events(6, [event('alpha', EventType.ADDED, configMap('c', 20, { labels: { app: 'web' } }))]));
      await s.waitForAck(6);
      const [c] = await t.query<{ labels: unknown }>(`select labels from objects where account = 'alpha' and name = 'c'`);
      assert.deepEqual(c!.labels, { app: 'web' });
      const [acc] = await t.query<{ ok: boolean }>(`select last_event_at is not null as ok from accounts where name = 'alpha'`);
      assert.equal(acc!.ok, true);
      s.end();
      assert.equal(await s.ended, undefined);
    });

    test('a full list prunes rows it did not see and records a resume point offered to the next stream', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      const welcome = await connectAgent(s, 'agent-l', [{ name: 'lister' }]);
      assert.deepEqual(welcome.accounts[0]!.resume, []);
      s.send(
        events(
          1,
          ['x', 'y', 'z'].map((n, i) => event('lister', EventType.ADDED, configMap(n, 100 + i))),
        ),
      );
      s.send(syncMarker(2, 'lister', SyncPhase.START));
      s.send(events(3, [event('lister', EventType.ADDED, configMap('x', 100)), event('lister', EventType.ADDED, configMap('new', 104))]));
      await s.waitForAck(3);
      const [during] = await t.query<{ synced: boolean; sync_gen: string | number }>(
        `select synced, sync_gen from watch_states where account = 'lister'`,
      );
      assert.equal(during!.synced, false);
      s.send(syncMarker(4, 'lister', SyncPhase.END, '110', 2));
      await s.waitForAck(4);
      assert.deepEqual(
        (await rows('lister')).map((r) => r.name),
        ['new', 'x'],
      );
      const [state] = await t.query<{ synced: boolean; resource_version: string; listed: number }>(
        `select synced, resource_version, listed from watch_states where account = 'lister'`,
      );
      assert.deepEqual(state, { synced: true, resource_version: '110', listed: 2 });
      // A later watch event moves the resume point.
      s.send(events(5, [event('lister', EventType.MODIFIED, configMap('x', 120))]));
      await s.waitForAck(5);
      s.end();
      await s.ended;

      const s2 = openAgentStream(t.gateway.grpcUrl);
      const w2 = await connectAgent(s2, 'agent-l', [{ name: 'lister' }]);
      assert.deepEqual(
        w2.accounts[0]!.resume.map((r) => [r.apiVersion, r.kind, r.watchNamespace, r.resourceVersion]),
        [['v1', 'ConfigMap', '', '120']],
      );
      s2.end();
      await s2.ended;
      // Stale scopes (too old) and unsynced scopes are not offered.
      await t.query(`update watch_states set updated_at = now() - interval '1 hour' where account = 'lister'`);
      const s3 = openAgentStream(t.gateway.grpcUrl);
      const w3 = await connectAgent(s3, 'agent-l', [{ name: 'lister' }]);
      assert.deepEqual(w3.accounts[0]!.resume, []);
      s3.send(syncMarker(1, 'lister', SyncPhase.START));
      await s3.waitForAck(1);
      s3.end();
      await s3.ended;
      const s4 = openAgentStream(t.gateway.grpcUrl);
      const w4 = await connectAgent(s4, 'agent-l', [{ name: 'lister' }]);
      assert.deepEqual(w4.accounts[0]!.resume, [], 'an interrupted list leaves the scope unsynced');
      assert.deepEqual(
        (await rows('lister')).map((r) => r.name),
        ['new', 'x'],
        'an interrupted list prunes nothing',
      );
      s4.end();
      await s4.ended;
    });

    test('a complete list replaces rows whatever their resourceVersion (an etcd restore starts lower); ordering holds within the watch after it', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-r', [{ name: 'restored' }]);
      s.send(
        events(1, [
          event('restored', EventType.ADDED, configMap('a', 900000)),
          event('restored', EventType.ADDED, configMap('gone', 900001)),
        ]),
      );
      await s.waitForAck(1);
      // etcd restored from a backup: the re-list's versions are far below the cached ones.
      s.send(syncMarker(2, 'restored', SyncPhase.START));
      s.send(events(3, [event('restored', EventType.ADDED, configMap('a', 120))]));
      s.send(syncMarker(4, 'restored', SyncPhase.END, '120', 1));
      await s.waitForAck(4);
      assert.deepEqual(
        await rows('restored'),
        [{ name: 'a', resource_version: '120', data: '120' }],
        'the list replaced the newer-looking row and pruned the other',
      );
      // The watch that follows the list: an older event is stale again, a newer one applies.
      s.send(events(5, [event('restored', EventType.MODIFIED, configMap('a', 119))]));
      s.send(events(6, [event('restored', EventType.MODIFIED, configMap('a', 121))]));
      await s.waitForAck(6);
      assert.deepEqual(await rows('restored'), [{ name: 'a', resource_version: '121', data: '121' }]);
      s.end();
      await s.ended;
    });

    test('resourceVersions that are not decimal are opaque: stored and offered back as the resume point as received; stream order decides', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-o', [{ name: 'opaque' }]);
      const cm = (rv: string, v: string) => ({
        ...configMap('a', 1),
        metadata: { name: 'a', namespace: 'default', uid: 'uid-a', resourceVersion: rv },
        data: { v },
      });
      s.send(syncMarker(1, 'opaque', SyncPhase.START));
      s.send(events(2, [event('opaque', EventType.ADDED, cm('abc', 'first'))]));
      s.send(syncMarker(3, 'opaque', SyncPhase.END, 'list/abc', 1));
      s.send(events(4, [event('opaque', EventType.MODIFIED, cm('7', 'second'))]));
      await s.waitForAck(4);
      assert.deepEqual(
        await rows('opaque'),
        [{ name: 'a', resource_version: '7', data: 'second' }],
        'not comparable: the later message wins',
      );
      s.send(
        events(5, [
          event('opaque', EventType.BOOKMARK, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '', resourceVersion: 'zz-9' } }),
        ]),
      );
      await s.waitForAck(5);
      s.end();
      await s.ended;
      const s2 = openAgentStream(t.gateway.grpcUrl);
      const w2 = await connectAgent(s2, 'agent-o', [{ name: 'opaque' }]);
      assert.deepEqual(
        w2.accounts[0]!.resume.map((r) => r.resourceVersion),
        ['zz-9'],
        'the resume point is the last version received, as received',
      );
      s2.end();
      await s2.ended;
    });

    test('bookmarks move the resume point but are not events: events_total and last_event_at count changes only', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-b', [{ name: 'idle' }]);
      const bookmark = (rv: string) =>
        event('idle', EventType.BOOKMARK, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: '', resourceVersion: rv } });
      const figures = async () =>
        (
          await t.query<{ events_total: string | number; has_event: boolean; rv: string }>(
            `select a.events_total, a.last_event_at is not null as has_event, w.resource_version as rv
             from accounts a left join watch_states w on w.account = a.name where a.name = 'idle'`,
          )
        )[0]!;
      s.send(events(1, [bookmark('40'), bookmark('41')]));
      await s.waitForAck(1);
      assert.deepEqual(
        { ...(await figures()), events_total: Number((await figures()).events_total) },
        { events_total: 0, has_event: false, rv: '41' },
      );
      s.send(events(2, [event('idle', EventType.ADDED, configMap('one', 42)), bookmark('43')]));
      await s.waitForAck(2);
      const after = await figures();
      assert.deepEqual({ ...after, events_total: Number(after.events_total) }, { events_total: 1, has_event: true, rv: '43' });
      s.end();
      await s.ended;
    });

    test('a namespaced list prunes only its namespace', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-n', [{ name: 'nsacc' }]);
      s.send(
        events(1, [
          event('nsacc', EventType.ADDED, configMap('keep-other-ns', 1, { namespace: 'other' }), 'other'),
          event('nsacc', EventType.ADDED, configMap('gone', 2, { namespace: 'team' }), 'team'),
        ]),
      );
      s.send(syncMarker(2, 'nsacc', SyncPhase.START, '', 0, 'team'));
      s.send(events(3, [event('nsacc', EventType.ADDED, configMap('seen', 3, { namespace: 'team' }), 'team')]));
      s.send(syncMarker(4, 'nsacc', SyncPhase.END, '5', 1, 'team'));
      await s.waitForAck(4);
      assert.deepEqual(
        (await rows('nsacc')).map((r) => r.name),
        ['keep-other-ns', 'seen'],
      );
      s.end();
      await s.ended;
    });

    test('an account bound to another cluster is refused and nothing of it is stored', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-b', [{ name: 'bound' }]);
      s.end();
      await s.ended;
      const intruder = openAgentStream(t.gateway.grpcUrl);
      const w = await connectAgent(intruder, 'agent-evil', [{ name: 'bound', apiHost: 'https://evil:6443' }, { name: 'fresh' }]);
      const [refused, fresh] = w.accounts;
      assert.equal(refused!.verdict, Verdict.REFUSED);
      assert.match(refused!.reason, /bound to cluster https:\/\/cluster-bound:6443/);
      assert.equal(fresh!.verdict, Verdict.CACHING);
      // Data for the refused account ends the stream: a stream writes only what it was told to cache.
      intruder.send(events(1, [event('bound', EventType.ADDED, configMap('hijack', 1))]));
      const refusal = await intruder.ended;
      assert.equal(refusal?.code, Code.PermissionDenied);
      assert.match(refusal!.rawMessage, /account "bound" is not cached by this stream \(its verdict on this stream is REFUSED\)/);
      assert.deepEqual(await rows('bound'), []);
      const [acc] = await t.query<{ api_host: string; agent_id: string }>(`select api_host, agent_id from accounts where name = 'bound'`);
      assert.deepEqual(acc, { api_host: 'https://cluster-bound:6443', agent_id: 'agent-b' });
      // Same host, different CA: refused too.
      const intruder2 = openAgentStream(t.gateway.grpcUrl);
      const w2 = await connectAgent(intruder2, 'agent-evil2', [{ name: 'bound', caFingerprint: 'cd'.repeat(32) }]);
      assert.equal(w2.accounts[0]!.verdict, Verdict.REFUSED);
      intruder2.end();
      await intruder2.ended;
    });

    test('a second agent gets STANDBY; a new stream of the same agent takes over', async () => {
      const first = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(first, 'agent-1', [{ name: 'shared' }]);
      const other = openAgentStream(t.gateway.grpcUrl);
      const w = await connectAgent(other, 'agent-2', [{ name: 'shared' }]);
      assert.equal(w.accounts[0]!.verdict, Verdict.STANDBY);
      assert.match(w.accounts[0]!.reason, /agent-1/);
      // A standby stream may not write the account: its data ends the stream.
      other.send(events(1, [event('shared', EventType.ADDED, configMap('from-standby', 1))]));
      assert.equal((await other.ended)?.code, Code.PermissionDenied);
      assert.deepEqual(await rows('shared'), [], 'a standby agent does not write');

      const again = openAgentStream(t.gateway.grpcUrl);
      const w2 = await connectAgent(again, 'agent-1', [{ name: 'shared' }]);
      assert.equal(w2.accounts[0]!.verdict, Verdict.CACHING);
      const err = await first.ended;
      assert.equal(err?.code, 10 /* Aborted */);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(await accountState('shared'), 'ACTIVE', 'the old stream ending does not deactivate the new owner');
      again.send(events(1, [event('shared', EventType.ADDED, configMap('from-new', 1))]));
      await again.waitForAck(1);
      assert.deepEqual(
        (await rows('shared')).map((r) => r.name),
        ['from-new'],
      );
      again.end();
      await again.ended;
      await eventually('account shared INACTIVE', async () => (await accountState('shared')) === 'INACTIVE');
      assert.equal((await rows('shared')).length, 1, 'the cache is kept after disconnect');
    });

    test('the gateway sends heartbeats and closes a silent stream with DEADLINE_EXCEEDED', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-quiet', [{ name: 'quiet' }]);
      const err = await s.ended;
      assert.equal(err?.code, 4 /* DeadlineExceeded */);
      assert.ok(
        s.received.some((r) => r.message.case === 'heartbeat'),
        'expected a heartbeat before the deadline',
      );
      await eventually('account quiet INACTIVE', async () => (await accountState('quiet')) === 'INACTIVE');
    });

    test('account_report updates kinds, skipped kinds and list progress', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-r', [{ name: 'reporter' }]);
      s.send({
        case: 'accountReport',
        value: {
          account: {
            name: 'reporter',
            apiHost: 'https://cluster-reporter:6443',
            caFingerprint: 'ab'.repeat(32),
            kinds: [{ apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments', namespaced: true }],
            skippedKinds: [{ apiVersion: 'v1', kind: 'Secret', reason: 'forbidden' }],
          },
          progress: [{ apiVersion: 'apps/v1', kind: 'Deployment', namespace: '', listed: 42n }],
        },
      });
      s.send({ case: 'heartbeat', value: { agentId: 'agent-r' } });
      await eventually('the watch state of reporter listing 42', async () => {
        const [w] = await t.query<{ listed: number }>(`select listed from watch_states where account = 'reporter'`);
        return w?.listed === 42;
      });
      const [acc] = await t.query<{ kinds: { kind: string }[]; skipped_kinds: { reason: string }[] }>(
        `select kinds, skipped_kinds from accounts where name = 'reporter'`,
      );
      assert.equal(acc!.kinds[0]!.kind, 'Deployment');
      assert.equal(acc!.skipped_kinds[0]!.reason, 'forbidden');
      s.end();
      await s.ended;
    });

    test('gateway shutdown ends agent streams with a reconnect-now UNAVAILABLE and marks their accounts INACTIVE before the database closes', async () => {
      const s = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(s, 'agent-down', [{ name: 'down' }]);
      s.send(events(1, [event('down', EventType.ADDED, configMap('kept', 1))]));
      await s.waitForAck(1);
      const states: string[] = [];
      const database = t.gateway.database;
      const realClose = database.close;
      (database as { close: () => Promise<void> }).close = async () => {
        states.push(...(await t.query<{ state: string }>(`select state from accounts where name = 'down'`)).map((r) => r.state));
        await realClose();
      };
      await t.gateway.close();
      const ended = await s.ended;
      // Ended by the gateway (not cut when the servers' grace period ran out, which a wall-clock bound could not tell
      // from a slow close on a loaded machine).
      assert.equal(ended?.code, Code.Unavailable, 'the agent is told to go elsewhere');
      assert.equal(ended?.metadata.get('x-outpost-reconnect'), 'now');
      assert.deepEqual(states, ['INACTIVE']);
    });
  });
}
