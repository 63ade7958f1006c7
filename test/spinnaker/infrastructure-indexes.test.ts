/**
 * The generated columns behind Deck's infrastructure views (migration 0012, src/db/schema.ts) and the plans of the
 * store's queries, on each driver. The columns must say what the TypeScript mapping says (moniker.ts through
 * object-facts.ts) for every name and annotation form the mapping handles — annotations, legacy JSON quotes, Frigga
 * names with and without versions, `system:` names, unparsable names, ignored objects, kinds of other classes and
 * groups. With thousands of cached objects (analyzed), the store's reads must be index scans: an application's objects
 * by `objects_spinnaker_app_idx`, an owner's by `objects_owner_uid_idx` (first owners, also for hundreds of owners at
 * once) and `objects_multi_owner_idx` (objects with several owners), a kind's by the primary key — since migration
 * 0016 partitioned the cache, through the partitions' copies of them (`objects_spinnaker_app_idx_p15`…). The instance
 * shape of pods keeps what their health, names and ids are computed from.
 */
import assert from 'node:assert/strict';
import { emptyDecodedBatch } from '../../src/gateway/cache/event-decoder.js';
import { after, before, describe, test } from 'node:test';
import { eq } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/database.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import { objects } from '../../src/db/schema.js';
import type { ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { infrastructureQueries } from '../../src/gateway/cache/infrastructure-queries.js';
import { createInfrastructureStore } from '../../src/gateway/spinnaker/infrastructure/infrastructure-store.js';
import { fullNameOf, isIgnored, korkMonikerOf, spinnakerClassOf } from '../../src/gateway/spinnaker/infrastructure/object-facts.js';
import { serverGroupSummary } from '../../src/gateway/spinnaker/infrastructure/infrastructure-views.js';
import { healthEntriesOf } from '../../src/gateway/spinnaker/infrastructure/pod-health.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';

type Obj = Record<string, any>;

const GROUP: Record<string, string> = {
  ReplicaSet: 'apps/v1',
  StatefulSet: 'apps/v1',
  DaemonSet: 'apps/v1',
  Deployment: 'apps/v1',
  Job: 'batch/v1',
  CronJob: 'batch/v1',
  Service: 'v1',
  Pod: 'v1',
  ConfigMap: 'v1',
  Ingress: 'networking.k8s.io/v1',
  NetworkPolicy: 'networking.k8s.io/v1',
};

let uidCounter = 0;
function object(
  kind: string,
  name: string,
  extra: { annotations?: Record<string, string>; owners?: string[]; apiVersion?: string; namespace?: string } = {},
): Obj {
  return {
    apiVersion: extra.apiVersion ?? GROUP[kind],
    kind,
    metadata: {
      name,
      namespace: extra.namespace ?? 'default',
      uid: `uid-${++uidCounter}`,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.owners
        ? { ownerReferences: extra.owners.map((uid) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'x', uid })) }
        : {}),
    },
  };
}

function row(account: string, o: Obj, version: number): ObjectRow {
  return {
    account,
    api_version: o.apiVersion,
    kind: o.kind,
    namespace: o.metadata.namespace,
    name: o.metadata.name,
    uid: o.metadata.uid,
    resource_version: String(version),
    labels: {},
    object: JSON.stringify(o),
    watch_namespace: '',
    sync_gen: 0,
  };
}

const app = (value: string) => ({ 'moniker.spinnaker.io/application': value });
const cluster = (value: string) => ({ 'moniker.spinnaker.io/cluster': value });

/** Every form the mapping reads, on the kinds of each class. */
const PARITY: Obj[] = [
  object('ReplicaSet', 'hello-6d4cf56db6', { annotations: { ...app('hello'), ...cluster('deployment hello') } }),
  object('ReplicaSet', 'hello-6d4cf56db6b'),
  object('ReplicaSet', 'web-prod-canary-v003'),
  object('ReplicaSet', 'web--canary-v1234'),
  object('ReplicaSet', 'web-v12'),
  object('ReplicaSet', 'a.b_c-x~y^z-v001'),
  object('ReplicaSet', 'a~b-v001'),
  object('ReplicaSet', 'web-prod-x~y'),
  object('StatefulSet', 'db', { annotations: app('"legacy"') }),
  object('StatefulSet', 'db-2', { annotations: { ...app('"legacy"'), ...cluster('"statefulSet db-2"') } }),
  object('DaemonSet', 'system:node-agent-v002'),
  object('DaemonSet', 'system:node-agent'),
  object('Job', 'nightly-28000000', { annotations: cluster('cronJob nightly') }),
  object('CronJob', 'nightly', { annotations: app('') }),
  object('Deployment', 'hello', { annotations: { ...app('hello'), ...cluster('deployment hello') } }),
  object('Deployment', 'hidden', { annotations: { ...app('hello'), 'caching.spinnaker.io/ignore': 'true' } }),
  object('Deployment', 'shown', { annotations: { ...app('hello'), 'caching.spinnaker.io/ignore': 'false' } }),
  object('Service', 'hello', { annotations: app('hello') }),
  object('Service', 'web-frontend'),
  object('Ingress', 'web-in'),
  object('NetworkPolicy', 'hello-deny', { annotations: app('hello') }),
  object('Pod', 'hello-6d4cf56db6-x7k2p', { annotations: app('hello') }),
  object('ConfigMap', 'hello-config', { annotations: app('hello') }),
  object('ReplicaSet', 'custom-v001', { apiVersion: 'example.com/v1' }),
  object('Service', 'UPPER.case'),
  object('ReplicaSet', 'has space'),
];

for (const driver of testDrivers()) {
  describe(`infrastructure columns and indexes (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let explain: (query: { toSQL(): { sql: string; params: unknown[] } }) => Promise<string>;

    before(async () => {
      testDb = await createTestDatabase(driver);
      // One connection: the plans are read on the connection that analyzed.
      database = await openDatabase(testDb.url, { maxConnections: 1 });
      const writer = createObjectWriter(database);
      const rows: ObjectRow[] = PARITY.map((o, i) => row('parity', o, i + 1));
      // Enough objects that the planner prefers the indexes: 300 applications of 5 ReplicaSets and 10 pods each.
      for (let a = 0; a < 300; a++) {
        for (let r = 0; r < 5; r++) {
          const rs = object('ReplicaSet', `app${a}-v00${r}`, { annotations: cluster(`replicaSet app${a}`) });
          rows.push(row('big', rs, rows.length + 1));
          for (let p = 0; p < 2; p++)
            rows.push(row('big', object('Pod', `app${a}-v00${r}-${p}`, { owners: [rs.metadata.uid] }), rows.length + 1));
        }
        rows.push(row('big', object('ConfigMap', `app${a}-config`), rows.length + 1));
      }
      // Objects with several owners (rare: the partial GIN index holds only these), and pods with every status form.
      const shared = object('Pod', 'shared-pod', { owners: ['owner-a', 'owner-b'] });
      rows.push(
        row('multi', shared, rows.length + 1),
        row('multi', object('Pod', 'second-only', { owners: ['owner-c', 'owner-b'] }), rows.length + 2),
      );
      const statusForms: Obj[] = [
        {
          phase: 'Running',
          containerStatuses: [
            { name: 'a', ready: true, image: 'x' },
            { name: 'b', ready: false, restartCount: 3 },
          ],
        },
        { phase: 'Pending' },
        {},
        { conditions: [{ type: 'PodScheduled', status: 'True' }] },
        { phase: 'Failed', containerStatuses: 'not a list' },
      ];
      statusForms.forEach((status, i) => {
        const pod = object('Pod', `status-${i}`, {
          owners: ['status-owner'],
          annotations: i === 1 ? { 'caching.spinnaker.io/ignore': 'true' } : undefined,
        });
        rows.push(row('multi', { ...pod, spec: { containers: [{ name: 'a', image: 'x' }] }, status }, rows.length + 1));
      });
      rows.push(row('multi', object('Pod', 'no-status', { owners: ['status-owner'] }), rows.length + 1));
      // Server groups of every kind, with what a summary reads and what it does not (status, last-applied, pod specs).
      const shapes = { ...app('shapes'), ...cluster('replicaSet shapes') };
      const template = (containers: Obj[], initContainers: Obj[] = []) => ({
        metadata: { labels: { app: 'shapes', tier: 'web' } },
        spec: { containers, initContainers, volumes: [{ name: 'v', emptyDir: {} }] },
      });
      const serverGroups: Obj[] = [
        {
          ...object('ReplicaSet', 'shapes-v001', {
            annotations: {
              ...shapes,
              'traffic.spinnaker.io/load-balancers': '["service shapes"]',
              'kubectl.kubernetes.io/last-applied-configuration': '{"a":"very long"}',
              'deployment.kubernetes.io/revision': '4',
            },
          }),
          spec: {
            replicas: 3,
            template: template([{ name: 'a', image: 'a:1', env: [{ name: 'X', value: 'y' }] }], [{ name: 'i', image: 'init:1' }]),
          },
          status: { replicas: 3, readyReplicas: 2 },
        },
        {
          ...object('StatefulSet', 'shapes-db', { annotations: { ...shapes, 'caching.spinnaker.io/ignore': 'false' } }),
          spec: {
            replicas: 1,
            serviceName: 'shapes',
            template: template([
              { name: 'db', image: 'db:16' },
              { name: 'x', image: 'db:16' },
            ]),
          },
        },
        { ...object('DaemonSet', 'shapes-agent', { annotations: shapes }), spec: { template: template([{ name: 'n' }]) } },
        {
          ...object('CronJob', 'shapes-nightly', { annotations: shapes }),
          spec: {
            schedule: '@daily',
            jobTemplate: { spec: { template: template([{ name: 'j', image: 'job:2' }], [{ name: 'k', image: 'init:1' }]) } },
          },
        },
        { ...object('Job', 'shapes-once', { annotations: shapes }), spec: { template: template([{ name: 'j', image: 'job:3' }]) } },
      ];
      for (const sg of serverGroups) rows.push(row('multi', sg, rows.length + 1));
      rows.push(row('multi', { ...object('Service', 'shapes'), spec: { selector: { app: 'shapes' } } }, rows.length + 1));
      await writer.write({ ...emptyDecodedBatch(), upserts: rows });
      const raw = createRawQuery(database);
      await raw('analyze objects', []);
      explain = async (query) => {
        const { sql, params } = query.toSQL();
        const plan = await raw(`explain ${sql}`, params);
        return plan.map((r) => String(Object.values(r)[0])).join('\n');
      };
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('the generated moniker columns say what the TypeScript mapping says', async () => {
      const stored = await database.db
        .select({ name: objects.name, kind: objects.kind, app: objects.spinnakerApp, cluster: objects.spinnakerCluster })
        .from(objects)
        .where(eq(objects.account, 'parity'));
      assert.equal(stored.length, PARITY.length);
      for (const o of PARITY) {
        const got = stored.find((r) => r.name === o.metadata.name && r.kind === o.kind)!;
        const cls = spinnakerClassOf(o);
        const ignored = o.metadata.annotations?.['caching.spinnaker.io/ignore'] === 'true';
        const linked = !ignored && ['serverGroups', 'serverGroupManagers', 'loadBalancers', 'securityGroups'].includes(cls);
        const clustered = linked && (cls === 'serverGroups' || cls === 'serverGroupManagers');
        const moniker = korkMonikerOf(o);
        assert.deepEqual(
          { app: got.app, cluster: got.cluster },
          { app: linked ? moniker.app : null, cluster: clustered ? moniker.cluster : null },
          `${o.kind} ${o.metadata.name} ${JSON.stringify(o.metadata.annotations ?? {})}`,
        );
      }
    });

    test('the owner uids column lists every owner reference', async () => {
      const [pod] = await database.db.select({ owners: objects.ownerUids }).from(objects).where(eq(objects.name, 'app7-v002-1'));
      assert.equal(pod!.owners!.length, 1);
      const [cm] = await database.db.select({ owners: objects.ownerUids }).from(objects).where(eq(objects.name, 'app7-config'));
      assert.deepEqual(cm!.owners, []);
    });

    test("an application's objects and clusters are read through objects_spinnaker_app_idx", async () => {
      const q = infrastructureQueries(database.db);
      for (const query of [q.linkedToApp(['big'], 'app7', ['ReplicaSet', 'Deployment']), q.clusterKeys(['big'], 'app7')]) {
        const plan = await explain(query);
        assert.match(plan, /objects_spinnaker_app_idx/, plan);
        assert.doesNotMatch(plan, /Seq Scan/, plan);
      }
      const rows = await q.linkedToApp(['big'], 'app7', ['ReplicaSet']);
      assert.equal(rows.length, 5);
    });

    test("a server group's pods are read through the owner-uid indexes, for one owner and for hundreds", async () => {
      const q = infrastructureQueries(database.db);
      const [rs] = await q.linkedToApp(['big'], 'app9', ['ReplicaSet']);
      const one = q.ownedBy(['big'], [(rs!.object!.metadata as Obj).uid], ['Pod']);
      const plan = await explain(one);
      assert.match(plan, /objects_owner_uid_idx/, plan);
      assert.match(plan, /objects_multi_owner_idx/, plan);
      assert.doesNotMatch(plan, /Seq Scan/, plan);
      assert.equal((await one).length, 2);
      const uids = (await q.ofKinds(['big'], ['ReplicaSet'])).slice(0, 300).map((r) => (r.object.metadata as Obj).uid as string);
      const many = q.ownedBy(['big'], uids, ['Pod'], 'instance');
      const manyPlan = await explain(many);
      const brief = manyPlan.replace(/'\{[^}]*\}'/g, "'{…}'");
      assert.match(manyPlan, /objects_owner_uid_idx/, brief);
      assert.doesNotMatch(manyPlan, /Seq Scan/, brief);
      assert.equal((await many).length, 600);
    });

    test('an object with several owners is found by any of them, once', async () => {
      const store = createInfrastructureStore(database);
      const names = async (uids: string[]) =>
        (await store.ownedBy(['multi'], uids, ['Pod'])).map((r) => (r.object.metadata as Obj).name).sort();
      assert.deepEqual(await names(['owner-a']), ['shared-pod']);
      assert.deepEqual(await names(['owner-b']), ['second-only', 'shared-pod'], 'the second owner finds both');
      assert.deepEqual(await names(['owner-a', 'owner-b', 'owner-c']), ['second-only', 'shared-pod'], 'never twice');
    });

    test('the instance shape of a pod keeps its name, uid, owners, ignore annotation and health', async () => {
      const store = createInfrastructureStore(database);
      const full = await store.ownedBy(['multi'], ['status-owner'], ['Pod']);
      const slim = await store.ownedBy(['multi'], ['status-owner'], ['Pod'], 'instance');
      assert.equal(slim.length, 6);
      for (const f of full) {
        const meta = f.object.metadata as Obj;
        const s = slim.find((r) => (r.object.metadata as Obj).uid === meta.uid)!;
        assert.equal(fullNameOf(s.object), fullNameOf(f.object));
        assert.equal((s.object.metadata as Obj).namespace, meta.namespace);
        assert.deepEqual((s.object.metadata as Obj).ownerReferences, meta.ownerReferences);
        assert.equal(isIgnored(s.object), isIgnored(f.object), meta.name);
        assert.deepEqual(healthEntriesOf(s.object), healthEntriesOf(f.object), meta.name);
        assert.equal(s.object.spec, undefined, 'no spec: only what instance summaries read');
      }
    });

    test('the summary shape of a server group gives the same summary as the whole object, in fewer bytes', async () => {
      const store = createInfrastructureStore(database);
      const kinds = ['ReplicaSet', 'StatefulSet', 'DaemonSet', 'CronJob', 'Job'];
      const full = await store.linkedToApp(['multi'], 'shapes', kinds);
      const summary = await store.linkedToApp(['multi'], 'shapes', kinds, 'summary');
      assert.equal(summary.length, 5);
      const services = (await store.ofKinds(['multi'], ['Service'])).map((r) => r.object);
      for (const f of full) {
        const uid = (f.object.metadata as Obj).uid;
        const s = summary.find((r) => (r.object.metadata as Obj).uid === uid)!;
        const joined = (object: Obj) => serverGroupSummary({ account: 'multi', object, pods: [], services });
        assert.deepEqual(joined(s.object), joined(f.object), (f.object.metadata as Obj).name);
        assert.equal(isIgnored(s.object), isIgnored(f.object));
        assert.equal(s.object.status, undefined);
        assert.ok(JSON.stringify(s.object).length < JSON.stringify(f.object).length);
      }
      await assert.rejects(store.linkedToApp(['multi'], 'shapes', ['Service'], 'summary'), /server groups only/);
    });

    test("a kind's objects in an account (and one object) are read through the primary key", async () => {
      const q = infrastructureQueries(database.db);
      // The cache is partitioned by account (migration 0016): 'parity' and its few dozen objects share a partition of a
      // page or two, which the planner rightly reads whole. Sequential scans are disabled for these plans so that they
      // show the index that serves the query (a query no index serves would still show a Seq Scan).
      const raw = createRawQuery(database);
      await raw('set enable_seqscan = off', []);
      try {
        for (const query of [q.ofKinds(['parity'], ['Service'], ['default']), q.one('parity', 'Service', 'default', 'hello')]) {
          const plan = await explain(query);
          assert.match(plan, /objects_account_kind_api_version_namespace_name_pk/, plan);
          assert.doesNotMatch(plan, /Seq Scan/, plan);
        }
      } finally {
        await raw('reset enable_seqscan', []);
      }
    });
  });
}
