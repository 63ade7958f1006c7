/**
 * Every query of the object cache keeps using its indexes now that `objects` is partitioned by hash of account
 * (migration 0016), and one that names an account reads one partition. The statements are the code's own — run
 * through a recording database (testkit/query-plans.ts) — and their plans are read with EXPLAIN ANALYZE, sequential
 * scans disabled, on a cache of 400 accounts (about 11,000 objects) spread over the default 16 partitions: no sequential scan of a partition,
 * the indexes each query is written for, and the partitions the executed plan really scanned.
 *
 * The readers: ObjectService (ListObjects by account, kind, namespace, label selector, owner and involved object
 * uid, page tokens; GetObject; SummarizeHealth; the check of a wrong filter), the account views' object counts, the
 * Clouddriver cache reads (cache-reads.ts) and infrastructure store. The writers: the object writer's fenced upsert and
 * delete (one statement), the prune at a list's END, and the removal of an account's cache.
 *
 * Not checked here, and no different from before partitioning: a ListObjects that names no account and filters only
 * on what no index leads with (a kind, an `in`/`exists`/`!=` label requirement, an owner or involved object uid) walks
 * every partition — by the primary key in key order up to the page's end, or by a scan — as it walked the one table;
 * so do SummarizeHealth of every account and the wrong-filter check's list of every account's kinds. With sequential
 * scans disabled their plans say nothing about production, where the planner's choice depends on how many rows match.
 * The generic plan of an owner's pods (planned without the uids) reads the account's pods by primary key: one
 * partition still.
 */
import assert from 'node:assert/strict';
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { after, before, describe, test } from 'node:test';
import { type Database, openDatabase } from '../../src/db/database.js';
import { DEFAULT_OBJECT_PARTITIONS } from '../../src/db/object-partitions.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import {
  GetObjectRequestSchema,
  ListObjectsRequestSchema,
  type ListObjectsResponse,
  SummarizeHealthRequestSchema,
} from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { accountViews } from '../../src/gateway/account-admin/account-view.js';
import { createObjectService } from '../../src/gateway/api/object-service.js';
import { removeAccountCaches } from '../../src/gateway/cache/cache-removal.js';
import { emptyDecodedBatch, type ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { createSyncState } from '../../src/gateway/cache/sync-state.js';
import { createCacheReads } from '../../src/gateway/spinnaker/cache-reads.js';
import { createInfrastructureStore } from '../../src/gateway/spinnaker/infrastructure/infrastructure-store.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';
import {
  explainAnalyze,
  type PlanNode,
  planNodes,
  type RecordedQuery,
  type RecordingDatabase,
  recordQueries,
} from '../../testkit/query-plans.js';
import { podTemplateHash, seedAccount, seedRows } from './objects-seed.js';

const ACCOUNTS = 400;
const A = seedAccount(3);
const B = seedAccount(17);
/** Indexes whose first column is the account: the primary key, (account, namespace). */
const BY_ACCOUNT = /^objects_(account_kind_api_version_namespace_name_pk|account_ns_idx)$/;
/** The primary key. */
const PK = /^objects_account_kind_api_version_namespace_name_pk$/;
const uidOf = (account: string, kind: string, name: string) => `${account}-${kind}-${name}`.toLowerCase();

/** What a plan did to `objects`. */
interface PlanFacts {
  /** Partitions the executed plan scanned (pruned ones, at planning or at run time, are not). */
  scanned: Set<string>;
  /** Indexes used, by the table's name of the index (a partition's is that name with the partition's `_pN` suffix). */
  indexes: Set<string>;
  /** Sequential scans of a partition. */
  seqScans: string[];
  /** The arbiter indexes of an INSERT … ON CONFLICT. */
  arbiters: string[];
  /** Partitions pruned when the executor started (a generic plan's pruning; 0 when pruned at planning). */
  removedAtStart: number;
}

function factsOf(plan: PlanNode): PlanFacts {
  const nodes = planNodes(plan);
  const partitionOf = (n: PlanNode) =>
    /^objects_p\d+$/.exec(n['Relation Name'] ?? '')?.[0] ?? /_(p\d+)$/.exec(n['Index Name'] ?? '')?.[1]?.replace(/^/, 'objects_');
  return {
    scanned: new Set(nodes.filter((n) => (n['Actual Loops'] ?? 0) > 0).flatMap((n) => partitionOf(n) ?? [])),
    indexes: new Set(nodes.flatMap((n) => (n['Index Name'] ? [n['Index Name'].replace(/_p\d+$/, '')] : []))),
    seqScans: nodes.filter((n) => n['Node Type'] === 'Seq Scan' && partitionOf(n)).map((n) => n['Relation Name']!),
    arbiters: nodes.flatMap((n) => n['Conflict Arbiter Indexes'] ?? []),
    removedAtStart: nodes.reduce((sum, n) => sum + (n['Subplans Removed'] ?? 0), 0),
  };
}

/** Statements that read or write `objects` (not `objects_version`, not other tables). */
const OF_OBJECTS = /\b(from|into|update)\s+"?objects"?[\s,)]/i;

for (const driver of testDrivers()) {
  describe(`the cache's queries use their indexes and prune partitions (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    let recording: RecordingDatabase;
    /** Runs `step` through the recording database; the plans of its statements on `objects`, with their text. */
    let plansOf: (
      step: (db: Database) => unknown,
      options?: { generic?: boolean },
    ) => Promise<{ query: RecordedQuery; facts: PlanFacts }[]>;

    before(async () => {
      testDb = await createTestDatabase(driver);
      // One connection: the recording database and the plans use the same session as the writes.
      database = await openDatabase(testDb.url, { maxConnections: 1 });
      const run = createRawQuery(database);
      const rows = seedRows(ACCOUNTS);
      await createObjectWriter(database).write({ ...emptyDecodedBatch(), upserts: rows });
      for (let i = 0; i < ACCOUNTS; i++) {
        const kinds = JSON.stringify(['Namespace', 'Deployment', 'ReplicaSet', 'Pod', 'Service', 'ConfigMap'].map((kind) => ({ kind })));
        await run(
          `insert into accounts (name, state, session_id, lease_epoch, lease_expires_at, kinds)
           values ($1, 'ACTIVE', 'session-1', 1, now() + interval '1 hour', $2::jsonb)`,
          [seedAccount(i), kinds],
        );
      }
      await run('analyze', []);
      recording = recordQueries(database);
      plansOf = async (step, options = {}) => {
        recording.queries.length = 0;
        await step(recording.database);
        const queries = recording.queries.filter((q) => OF_OBJECTS.test(q.text));
        assert.ok(queries.length > 0, 'the step ran a statement on objects');
        const out = [];
        for (const query of queries) out.push({ query, facts: factsOf(await explainAnalyze(database, query, options)) });
        return out;
      };
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    /** Asserts every statement of `step` reads one partition, through an index, and no partition sequentially. */
    const onePartition = async (step: (db: Database) => unknown, indexes: RegExp, options: { generic?: boolean } = {}) => {
      for (const { query, facts } of await plansOf(step, options)) {
        const detail = `${query.text}\n${JSON.stringify({ ...facts, scanned: [...facts.scanned], indexes: [...facts.indexes] })}`;
        assert.deepEqual(facts.seqScans, [], detail);
        assert.equal(facts.scanned.size, 1, `one partition: ${detail}`);
        if (options.generic) assert.ok(facts.removedAtStart >= DEFAULT_OBJECT_PARTITIONS - 1, `pruned at the start: ${detail}`);
        assert.ok(
          [...facts.indexes].some((i) => indexes.test(i)),
          `index ${indexes}: ${detail}`,
        );
      }
    };

    /** Asserts every statement of `step` reads through an index, in `partitions` partitions at most, none sequentially. */
    const indexed = async (step: (db: Database) => unknown, indexes: RegExp, partitions = DEFAULT_OBJECT_PARTITIONS) => {
      for (const { query, facts } of await plansOf(step)) {
        const detail = `${query.text}\n${JSON.stringify({ ...facts, scanned: [...facts.scanned], indexes: [...facts.indexes] })}`;
        assert.deepEqual(facts.seqScans, [], detail);
        assert.ok(facts.scanned.size <= partitions, `at most ${partitions} partitions: ${detail}`);
        assert.ok(
          [...facts.indexes].some((i) => indexes.test(i)),
          `index ${indexes}: ${detail}`,
        );
      }
    };

    const list = async (db: Database, fields: MessageInitShape<typeof ListObjectsRequestSchema>) =>
      (await createObjectService(db).listObjects!(create(ListObjectsRequestSchema, fields), undefined as never)) as ListObjectsResponse;

    test('ListObjects of an account, by kind, namespace, label selector, owner or involved object: one partition', async () => {
      await onePartition((db) => list(db, { account: A }), BY_ACCOUNT);
      await onePartition((db) => list(db, { account: A, kind: 'Pod' }), BY_ACCOUNT);
      await onePartition((db) => list(db, { account: A, kind: 'Pod', namespace: 'web' }), BY_ACCOUNT);
      await onePartition((db) => list(db, { account: A, namespace: 'web', omitObject: true }), BY_ACCOUNT);
      await onePartition(
        (db) => list(db, { account: A, labelSelector: 'app=web1' }),
        /^objects_(account_kind_api_version_namespace_name_pk|account_ns_idx|labels_idx)$/,
      );
      await onePartition((db) => list(db, { account: A, labelSelector: 'tier in (frontend),app' }), BY_ACCOUNT);
      await onePartition((db) => list(db, { account: A, ownerUid: uidOf(A, 'ReplicaSet', 'web1-v001') }), BY_ACCOUNT);
      await onePartition((db) => list(db, { account: A, involvedObjectUid: uidOf(A, 'Pod', 'web0-v001-0') }), BY_ACCOUNT);
      // the second page, after the first's token
      const first = await list(database, { account: A, pageSize: 5 });
      await onePartition((db) => list(db, { account: A, pageSize: 5, pageToken: first.nextPageToken }), BY_ACCOUNT);
    });

    test('ListObjects across accounts: a label selector through every partition GIN index, pages in key order', async () => {
      await indexed(
        (db) => list(db, { labelSelector: `pod-template-hash=${podTemplateHash(B, 'web1')},app=web1` }),
        /^objects_labels_idx$/,
      );
      const first = await list(database, { pageSize: 50 });
      assert.equal(first.objects.length, 50);
      await indexed((db) => list(db, { pageSize: 50, pageToken: first.nextPageToken }), PK);
    });

    test('GetObject, SummarizeHealth of an account, a wrong kind for an account: one partition', async () => {
      const service = (db: Database) => createObjectService(db);
      await onePartition(
        (db) =>
          service(db).getObject!(
            create(GetObjectRequestSchema, { account: A, kind: 'Deployment', namespace: 'web', name: 'web2' }),
            undefined as never,
          ),
        BY_ACCOUNT,
      );
      await onePartition(
        (db) => service(db).summarizeHealth!(create(SummarizeHealthRequestSchema, { account: A }), undefined as never),
        BY_ACCOUNT,
      );
      await onePartition((db) => assert.rejects(list(db, { account: A, kind: 'Widget' }), /kind "Widget" not found/), BY_ACCOUNT);
      await indexed(
        (db) => service(db).summarizeHealth!(create(SummarizeHealthRequestSchema, { account: '' }), undefined as never),
        BY_ACCOUNT,
      );
    });

    test('the generic plans of prepared statements (postgres-js prepares each) prune at their start to one partition', async () => {
      const generic = { generic: true };
      await onePartition((db) => list(db, { account: A, kind: 'Pod' }), BY_ACCOUNT, generic);
      await onePartition(
        (db) => list(db, { account: A, labelSelector: 'app=web1' }),
        /^objects_(account_kind_api_version_namespace_name_pk|account_ns_idx|labels_idx)$/,
        generic,
      );
      await onePartition(
        (db) => createInfrastructureStore(db).linkedToApp([A], 'web1', ['ReplicaSet']),
        /^objects_spinnaker_app_idx$/,
        generic,
      );
      await onePartition(
        (db) => createInfrastructureStore(db).ownedBy([A], [uidOf(A, 'ReplicaSet', 'web1-v001')], ['Pod']),
        /^objects_(owner_uid_idx|account_kind_api_version_namespace_name_pk)$/, // planned without the uids, by the account's primary key
        generic,
      );
      await onePartition((db) => createCacheReads(db).namespacesOf(A), BY_ACCOUNT, generic);
    });

    test('account views count objects of the named accounts only', async () => {
      await onePartition((db) => accountViews(db.db, [A], { staleAfterSeconds: 30 }), BY_ACCOUNT);
      await indexed((db) => accountViews(db.db, [A, B], { staleAfterSeconds: 30 }), BY_ACCOUNT, 2);
    });

    test("Clouddriver's cache reads and infrastructure views: the accounts' partitions through their indexes", async () => {
      const reads = (db: Database) => createCacheReads(db);
      await onePartition((db) => reads(db).namespacesOf(A), BY_ACCOUNT);
      await onePartition((db) => reads(db).byMoniker(A, 'Deployment', 'web', 'web1'), BY_ACCOUNT);
      await onePartition((db) => reads(db).customKindNamespaced(A, 'example.com', 'Widget'), BY_ACCOUNT);
      const store = (db: Database) => createInfrastructureStore(db);
      await onePartition((db) => store(db).clusterKeys([A], 'web1'), /^objects_spinnaker_app_idx$/);
      await onePartition((db) => store(db).clusterKeys([A]), /^objects_spinnaker_app_idx$/);
      await onePartition((db) => store(db).applicationNames([A]), /^objects_spinnaker_app_idx$/);
      await onePartition((db) => store(db).linkedToApp([A], 'web1', ['ReplicaSet', 'Deployment']), /^objects_spinnaker_app_idx$/);
      await onePartition((db) => store(db).linkedToApp([A], 'web1', ['ReplicaSet'], 'summary'), /^objects_spinnaker_app_idx$/);
      const rs = [uidOf(A, 'ReplicaSet', 'web1-v001'), uidOf(A, 'Job', 'b')];
      await onePartition((db) => store(db).ownedBy([A], rs, ['Pod']), /^objects_owner_uid_idx$/);
      await onePartition((db) => store(db).ownedBy([A], rs, ['Pod'], 'instance'), /^objects_owner_uid_idx$/);
      await onePartition((db) => store(db).ofKinds([A], ['Service'], ['web']), BY_ACCOUNT);
      await onePartition((db) => store(db).one(A, 'Service', 'web', 'web1'), BY_ACCOUNT);
      // two accounts: at most their two partitions
      await indexed((db) => store(db).linkedToApp([A, B], 'web1', ['ReplicaSet']), /^objects_spinnaker_app_idx$/, 2);
      await indexed((db) => store(db).ownedBy([A, B], rs, ['Pod']), /^objects_owner_uid_idx$/, 2);
    });

    test("the writer's fenced upsert and delete, a list END's prune, an account's removal: one partition, by the primary key", async () => {
      const changed: ObjectRow[] = seedRows(ACCOUNTS)
        .filter((r) => r.account === A && r.kind === 'ConfigMap')
        .map((r) => ({ ...r, resource_version: '900000', labels: { ...r.labels, changed: 'yes' } }));
      const fence = { sessionId: 'session-1', leases: [{ name: A, epoch: 1 }] };
      const batch = {
        ...emptyDecodedBatch(),
        upserts: changed,
        deletes: [{ account: A, api_version: 'v1', kind: 'Service', namespace: 'web', name: 'web0', resource_version: '900001' }],
        accounts: [A],
        eventCounts: { [A]: changed.length + 1 },
      };
      for (const { query, facts } of await plansOf((db) => createObjectWriter(db).write(batch, fence))) {
        const detail = `${query.text}\n${JSON.stringify({ ...facts, scanned: [...facts.scanned], indexes: [...facts.indexes] })}`;
        assert.deepEqual(facts.seqScans, [], detail);
        assert.ok(
          facts.arbiters.some((a) => /^objects_account_kind_api_version_namespace_name_pk(_p\d+)?$/.test(a)),
          `upsert on the primary key: ${detail}`,
        );
        assert.ok(facts.indexes.has('objects_account_kind_api_version_namespace_name_pk'), `delete through the primary key: ${detail}`);
        assert.ok(facts.scanned.size <= 1, `at most the account's partition is scanned: ${detail}`);
      }
      const sync = (db: Database) => createSyncState(db);
      const scope = { account: A, apiVersion: 'v1', kind: 'ConfigMap', watchNamespace: '' };
      const generation = await sync(database).startList(scope);
      const listed = changed.slice(0, 2).map((r) => ({ ...r, resource_version: '900002', sync_gen: generation }));
      await createObjectWriter(database).write({ ...emptyDecodedBatch(), upserts: listed });
      await onePartition((db) => sync(db).endList(scope, generation, '900003', listed.length), BY_ACCOUNT);
      await onePartition(
        (db) =>
          db.db
            .transaction(async (tx) => {
              await removeAccountCaches(tx, [B]);
              tx.rollback();
            })
            .catch((err: Error) => assert.match(err.message, /Rollback/)),
        BY_ACCOUNT,
      );
      const [kept] = await createRawQuery(database)('select count(*)::int as n from objects where account = $1', [B]);
      assert.ok(Number(kept!.n) > 0, 'the removal was rolled back');
    });
  });
}
