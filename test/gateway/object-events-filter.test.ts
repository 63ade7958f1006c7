/**
 * ListObjects' involved_object_uid filter (what an object page's Events section reads): only Events about that uid,
 * core v1 (`involvedObject`) and events.k8s.io (`regarding`) alike, in every account unless one is named, paged
 * with tokens bound to the filter; bad input is refused with INVALID_ARGUMENT. On PGlite, and on Postgres when
 * OUTPOST_TEST_POSTGRES is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testDrivers } from '../../testkit/databases.js';
import { connectAgent, event, events, EventType, openAgentStream, type TestAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

function coreEvent(name: string, uid: string, reason: string, rv: number) {
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: 'demo', uid: `ev-${name}`, resourceVersion: String(rv) },
    involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'demo', uid },
    reason,
    message: `${reason} happened`,
    type: 'Normal',
    count: 1,
  };
}

for (const driver of testDrivers()) {
  describe(`ListObjects involved_object_uid (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: TestAgentStream;
    before(async () => {
      t = await startTestGateway(driver);
      agent = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(agent, 'agent-events', [{ name: 'prod' }, { name: 'dev' }]);
      const list = [
        event('prod', EventType.ADDED, coreEvent('web.1', 'uid-web', 'ScalingReplicaSet', 10)),
        event('prod', EventType.ADDED, coreEvent('web.2', 'uid-web', 'SuccessfulCreate', 11)),
        event('prod', EventType.ADDED, coreEvent('web.3', 'uid-web', 'Killing', 12)),
        event('prod', EventType.ADDED, coreEvent('api.1', 'uid-api', 'ScalingReplicaSet', 13)),
        event('prod', EventType.ADDED, {
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: 'web.4', namespace: 'demo', uid: 'ev-web.4', resourceVersion: '14' },
          regarding: { kind: 'Deployment', name: 'web', namespace: 'demo', uid: 'uid-web' },
          reason: 'Paused',
          note: 'paused',
          type: 'Normal',
        }),
        // same uid on an object that is not an Event: never matched
        event('prod', EventType.ADDED, {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'decoy', namespace: 'demo', uid: 'cm-decoy', resourceVersion: '15' },
          involvedObject: { uid: 'uid-web' },
        }),
        event('dev', EventType.ADDED, coreEvent('web.9', 'uid-web', 'Started', 16)),
      ];
      agent.send(events(1, list));
      await agent.waitForAck(1);
    });
    after(async () => {
      agent?.end();
      await agent?.ended;
      await t?.close();
    });

    const listObjects = async (body: Record<string, unknown>) => {
      const res = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.ObjectService/ListObjects`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const names = (body: { objects?: { account: string; name: string }[] }) =>
      (body.objects ?? []).map((o) => `${o.account}/${o.name}`).sort();

    test('returns the Events about the uid only, in one account or all', async () => {
      const prod = await listObjects({ account: 'prod', involvedObjectUid: 'uid-web' });
      assert.equal(prod.status, 200, JSON.stringify(prod.body));
      assert.deepEqual(names(prod.body), ['prod/web.1', 'prod/web.2', 'prod/web.3', 'prod/web.4']);
      const all = await listObjects({ involvedObjectUid: 'uid-web', kind: 'Event' });
      assert.deepEqual(names(all.body), ['dev/web.9', 'prod/web.1', 'prod/web.2', 'prod/web.3', 'prod/web.4']);
      const api = await listObjects({ account: 'prod', involvedObjectUid: 'uid-api' });
      assert.deepEqual(names(api.body), ['prod/api.1']);
      assert.equal(api.body.objects[0].object.reason, 'ScalingReplicaSet');
      const none = await listObjects({ account: 'prod', involvedObjectUid: 'no-such-uid' });
      assert.deepEqual(names(none.body), []);
    });

    test('pages with tokens bound to the uid', async () => {
      const first = await listObjects({ account: 'prod', involvedObjectUid: 'uid-web', pageSize: 3 });
      assert.equal(first.body.objects.length, 3);
      assert.ok(first.body.nextPageToken);
      const second = await listObjects({ account: 'prod', involvedObjectUid: 'uid-web', pageSize: 3, pageToken: first.body.nextPageToken });
      assert.equal(second.body.objects.length, 1);
      assert.deepEqual(names({ objects: [...first.body.objects, ...second.body.objects] }), [
        'prod/web.1',
        'prod/web.2',
        'prod/web.3',
        'prod/web.4',
      ]);
      const other = await listObjects({ account: 'prod', involvedObjectUid: 'uid-api', pageSize: 3, pageToken: first.body.nextPageToken });
      assert.equal(other.status, 400);
      assert.equal(other.body.code, 'invalid_argument');
      assert.match(other.body.message, /different filters/);
      const without = await listObjects({ account: 'prod', pageSize: 3, pageToken: first.body.nextPageToken });
      assert.equal(without.status, 400);
    });

    test('bad input is refused with a clear INVALID_ARGUMENT', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{ involvedObjectUid: 'x'.repeat(129) }, /involved_object_uid must be an object uid/],
        [{ involvedObjectUid: 'uid web' }, /involved_object_uid must be an object uid/],
        [{ involvedObjectUid: 'uid\u0007web' }, /involved_object_uid must be an object uid/],
        [{ involvedObjectUid: "x' or 1=1 --" }, /involved_object_uid must be an object uid/],
        [{ involvedObjectUid: 'uid\u0000web' }, /NUL character/],
        [{ involvedObjectUid: 'uid-web', kind: 'Deployment' }, /kind must be empty or Event, not Deployment/],
      ];
      for (const [body, message] of cases) {
        const res = await listObjects({ account: 'prod', ...body });
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'invalid_argument');
        assert.match(res.body.message, message);
      }
      // a 128-character uid is fine (and matches nothing)
      const longest = await listObjects({ account: 'prod', involvedObjectUid: 'x'.repeat(128) });
      assert.equal(longest.status, 200);
      assert.deepEqual(names(longest.body), []);
    });
  });
}
