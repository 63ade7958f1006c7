/**
 * Workload health over the client API (gRPC, on PGlite and Postgres): ListObjects and GetObject carry each
 * workload's health — also with omit_object, computed from the body in the gateway and sent without it — and none
 * for kinds without status rules; owner_uid lists an object's dependents, pages with tokens bound to it and refuses
 * what cannot be a uid; SummarizeHealth counts workloads per account and state.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { HealthState, ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import {
  Code,
  ConnectError,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } };

function deployment(name: string, uid: string, status: Record<string, unknown>) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'shop', uid, resourceVersion: '10', generation: 1, labels: { app: name } },
    spec: { replicas: 2, selector: { matchLabels: { app: name } }, template },
    status: { observedGeneration: 1, ...status },
  };
}

function replicaSet(name: string, uid: string, owner: string, ready: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      namespace: 'shop',
      uid,
      resourceVersion: '11',
      generation: 1,
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: owner, controller: true }],
    },
    spec: { replicas: 2, template },
    status: { replicas: 2, fullyLabeledReplicas: 2, readyReplicas: ready, availableReplicas: ready, observedGeneration: 1 },
  };
}

function pod(name: string, owner: string, phase: string) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'shop',
      uid: `uid-${name}`,
      resourceVersion: '12',
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-1', uid: owner, controller: true }],
    },
    spec: template.spec,
    status: { phase },
  };
}

const rolledOut = { replicas: 2, updatedReplicas: 2, readyReplicas: 2, availableReplicas: 2 };

for (const driver of testDrivers()) {
  describe(`workload health over the client API (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: TestAgentStream;
    let client: Client<typeof ObjectService>;
    before(async () => {
      t = await startTestGateway(driver);
      agent = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(agent, 'agent-health', [{ name: 'prod' }, { name: 'dev' }]);
      agent.send(
        events(1, [
          event('prod', EventType.ADDED, deployment('web', 'd-web', rolledOut)),
          event('prod', EventType.ADDED, deployment('api', 'd-api', { ...rolledOut, updatedReplicas: 1 })),
          event('prod', EventType.ADDED, replicaSet('web-1', 'rs-1', 'd-web', 2)),
          event('prod', EventType.ADDED, replicaSet('web-0', 'rs-0', 'd-web', 0)),
          event('prod', EventType.ADDED, replicaSet('api-1', 'rs-api', 'd-api', 1)),
          event('prod', EventType.ADDED, pod('web-1-a', 'rs-1', 'Running')),
          event('prod', EventType.ADDED, pod('web-1-b', 'rs-1', 'Pending')),
          event('prod', EventType.ADDED, configMap('settings', 13, { namespace: 'shop' })),
          event('dev', EventType.ADDED, pod('lonely', 'rs-x', 'Running')),
        ]),
      );
      await agent.waitForAck(1);
      client = createClient(ObjectService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    });
    after(async () => {
      agent?.end();
      await agent?.ended;
      await t?.close();
    });

    const healthByName = async (omitObject: boolean) => {
      const { objects } = await client.listObjects({ account: 'prod', omitObject });
      return Object.fromEntries(objects.map((o) => [`${o.kind}/${o.name}`, [o.health?.state, o.health?.reason, o.object !== undefined]]));
    };

    test('ListObjects carries each workload’s health, the same with and without bodies; ConfigMaps get none', async () => {
      const expected = {
        'ConfigMap/settings': [undefined, undefined],
        'Deployment/api': [HealthState.PROGRESSING, 'Waiting for all replicas to be updated'],
        'Deployment/web': [HealthState.HEALTHY, 'Stable'],
        'Pod/web-1-a': [HealthState.HEALTHY, 'Stable'],
        'Pod/web-1-b': [HealthState.PROGRESSING, 'Pod is pending'],
        'ReplicaSet/api-1': [HealthState.PROGRESSING, 'Waiting for all replicas to be ready'],
        'ReplicaSet/web-0': [HealthState.PROGRESSING, 'Waiting for all replicas to be ready'],
        'ReplicaSet/web-1': [HealthState.HEALTHY, 'Stable'],
      };
      const strip = (m: Record<string, unknown[]>) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, v.slice(0, 2)]));
      const withBodies = await healthByName(false);
      const without = await healthByName(true);
      assert.deepEqual(strip(withBodies), expected);
      assert.deepEqual(strip(without), expected);
      assert.ok(Object.values(withBodies).every((v) => v[2] === true));
      assert.ok(
        Object.values(without).every((v) => v[2] === false),
        'omit_object sends no body',
      );
    });

    test('GetObject carries the health and its reason', async () => {
      const got = await client.getObject({ account: 'prod', kind: 'Deployment', namespace: 'shop', name: 'api' });
      assert.equal(got.object?.health?.state, HealthState.PROGRESSING);
      assert.equal(got.object?.health?.reason, 'Waiting for all replicas to be updated');
      const cm = await client.getObject({ account: 'prod', kind: 'ConfigMap', namespace: 'shop', name: 'settings' });
      assert.equal(cm.object?.health, undefined);
    });

    test('owner_uid lists the dependents of one object, across pages bound to it', async () => {
      const names = async (ownerUid: string, extra: Record<string, unknown> = {}) =>
        (await client.listObjects({ ownerUid, ...extra })).objects.map((o) => `${o.account}/${o.kind}/${o.name}`);
      assert.deepEqual(await names('d-web'), ['prod/ReplicaSet/web-0', 'prod/ReplicaSet/web-1']);
      assert.deepEqual(await names('rs-1', { kind: 'Pod' }), ['prod/Pod/web-1-a', 'prod/Pod/web-1-b']);
      assert.deepEqual(await names('rs-x'), ['dev/Pod/lonely']);
      assert.deepEqual(await names('no-such-uid'), []);

      const first = await client.listObjects({ ownerUid: 'd-web', pageSize: 1, omitObject: true });
      assert.equal(first.objects[0]?.name, 'web-0');
      assert.equal(first.objects[0]?.health?.state, HealthState.PROGRESSING);
      const second = await client.listObjects({ ownerUid: 'd-web', pageSize: 1, omitObject: true, pageToken: first.nextPageToken });
      assert.deepEqual(
        second.objects.map((o) => o.name),
        ['web-1'],
      );
      assert.equal(second.nextPageToken, '');
      await assert.rejects(
        client.listObjects({ ownerUid: 'd-api', pageSize: 1, omitObject: true, pageToken: first.nextPageToken }),
        (err) => ConnectError.from(err).code === Code.InvalidArgument && /different filters/.test(ConnectError.from(err).message),
      );
    });

    test('an owner_uid that cannot be a uid is refused with a clear error', async () => {
      for (const bad of ["x' or 1=1 --", ' d-web', 'a'.repeat(129), 'd-web"}]']) {
        await assert.rejects(
          client.listObjects({ ownerUid: bad }),
          (err) =>
            ConnectError.from(err).code === Code.InvalidArgument && /owner_uid must be an object uid/.test(ConnectError.from(err).message),
          bad,
        );
      }
    });

    test('SummarizeHealth counts workloads per account and state, kinds without rules left out', async () => {
      const all = await client.summarizeHealth({});
      const plain = all.accounts.map(({ account, healthy, progressing, degraded, paused, unknown }) => ({
        account,
        healthy,
        progressing,
        degraded,
        paused,
        unknown,
      }));
      assert.deepEqual(plain, [
        { account: 'dev', healthy: 1, progressing: 0, degraded: 0, paused: 0, unknown: 0 },
        { account: 'prod', healthy: 3, progressing: 4, degraded: 0, paused: 0, unknown: 0 },
      ]);
      const dev = await client.summarizeHealth({ account: 'dev' });
      assert.deepEqual(
        dev.accounts.map((a) => a.account),
        ['dev'],
      );
      assert.deepEqual((await client.summarizeHealth({ account: 'nowhere' })).accounts, []);
    });

    test('health follows the cache: a Deployment that finishes its rollout turns Healthy', async () => {
      agent.send(
        events(2, [
          event('prod', EventType.MODIFIED, {
            ...deployment('api', 'd-api', rolledOut),
            metadata: { ...deployment('api', 'd-api', rolledOut).metadata, resourceVersion: '20' },
          }),
        ]),
      );
      await agent.waitForAck(2);
      const got = await client.getObject({ account: 'prod', kind: 'Deployment', namespace: 'shop', name: 'api' });
      assert.equal(got.object?.health?.state, HealthState.HEALTHY);
      const prod = (await client.summarizeHealth({ account: 'prod' })).accounts[0];
      assert.equal(prod?.healthy, 4);
      assert.equal(prod?.progressing, 3);
    });
  });
}
