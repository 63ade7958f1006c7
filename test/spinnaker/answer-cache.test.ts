/**
 * The answer cache of Deck's application routes (src/gateway/spinnaker/infrastructure/answer-cache.ts) and the
 * version it trusts, `accounts.objects_version` (objects-version-queries.ts):
 * - the cache alone, over versions the test moves: a kept answer is served only under the exact versions it was built
 *   under, per key and per set of accounts; misses at once share one build; a failed build is not kept; answers go
 *   least recently used first within the byte budget; a budget of 0 keeps nothing;
 * - the version on each driver: every writer of the object cache moves it in its transaction (a batch of changes, a
 *   prune at a list's END, a removed cache) when it touches a kind the answers read, and only then (a bookmark, an END
 *   that pruned nothing, another account's batch, ConfigMap changes and prunes leave it); a row created again under a
 *   deleted name never gets an old version back;
 * - through a gateway, a sandbox and an agent: a second poll of serverGroups is a hit with the same bytes; a scale in
 *   the cluster shows in the next answer; a caller narrowed to another account right after never gets the kept
 *   answer of a wider one.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { and, eq } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/database.js';
import { objects } from '../../src/db/schema.js';
import { createRawQuery } from '../../src/db/raw-query.js';
import { bumpObjectsVersions, readObjectsVersions } from '../../src/gateway/accounts/objects-version-queries.js';
import { emptyDecodedBatch, type ObjectRow } from '../../src/gateway/cache/event-decoder.js';
import { createObjectWriter } from '../../src/gateway/cache/object-writer.js';
import { createSyncState } from '../../src/gateway/cache/sync-state.js';
import { ANSWER_KINDS, createAnswerCache } from '../../src/gateway/spinnaker/infrastructure/answer-cache.js';
import { createTestDatabase, type TestDatabase, testDrivers } from '../../testkit/databases.js';
import { eventually } from '../../testkit/eventually.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

/** A cache over versions the test sets, counting version reads, builds and lookups. */
function harness(maxBytes = 1_000_000) {
  const versions = new Map<string, number>();
  const counts = { reads: 0, hit: 0, miss: 0 };
  const cache = createAnswerCache({
    versions: async (names) => {
      counts.reads++;
      return new Map(names.filter((n) => versions.has(n)).map((n) => [n, versions.get(n)!]));
    },
    maxBytes,
    metrics: { answerCacheLookup: (result) => counts[result]++ },
  });
  let builds = 0;
  const build = (value: unknown) => async () => {
    builds++;
    return value;
  };
  return { versions, counts, cache, build, builds: () => builds };
}

describe('answer cache', () => {
  test('kept under the exact versions of its accounts, per key and per set of accounts', async () => {
    const h = harness();
    h.versions.set('a', 1).set('b', 1);
    assert.equal(await h.cache.answer('sg\u0000shop', ['a', 'b'], h.build({ n: 1 })), '{"n":1}');
    assert.equal(await h.cache.answer('sg\u0000shop', ['b', 'a', 'a'], h.build({ n: 2 })), '{"n":1}', 'same accounts in any order: a hit');
    assert.deepEqual([h.builds(), h.counts.hit, h.counts.miss], [1, 1, 1]);
    // Another account set, another key: built for each.
    assert.equal(await h.cache.answer('sg\u0000shop', ['a'], h.build({ n: 3 })), '{"n":3}');
    assert.equal(await h.cache.answer('lb\u0000shop', ['a', 'b'], h.build({ n: 4 })), '{"n":4}');
    // One account's version moves: every answer built from it is rebuilt, the others stay.
    h.versions.set('b', 7);
    assert.equal(await h.cache.answer('sg\u0000shop', ['a', 'b'], h.build({ n: 5 })), '{"n":5}');
    assert.equal(await h.cache.answer('sg\u0000shop', ['a'], h.build({ n: 6 })), '{"n":3}');
    // An account whose row is gone counts as a change too, and so does its row coming back.
    h.versions.delete('a');
    assert.equal(await h.cache.answer('sg\u0000shop', ['a'], h.build({ n: 7 })), '{"n":7}');
    h.versions.set('a', 9);
    assert.equal(await h.cache.answer('sg\u0000shop', ['a'], h.build({ n: 8 })), '{"n":8}');
    assert.equal(h.counts.reads, 8, 'every request reads the versions');
  });

  test('misses at once share one build; a failed build is not kept', async () => {
    const h = harness();
    h.versions.set('a', 1);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let builds = 0;
    const slow = async () => {
      builds++;
      await gate;
      return ['x'];
    };
    const answers = [h.cache.answer('k', ['a'], slow), h.cache.answer('k', ['a'], slow), h.cache.answer('k', ['a'], slow)];
    await sleep(10);
    release();
    assert.deepEqual(await Promise.all(answers), ['["x"]', '["x"]', '["x"]']);
    assert.equal(builds, 1);
    await assert.rejects(
      h.cache.answer('broken', ['a'], async () => {
        throw new Error('postgres went away');
      }),
      /postgres went away/,
    );
    assert.equal(await h.cache.answer('broken', ['a'], h.build([1])), '[1]', 'the failure was not kept');
  });

  test('least recently used answers leave first within the budget; 0 keeps nothing', async () => {
    const h = harness(30);
    h.versions.set('a', 1);
    const ten = (c: string) => c.repeat(8); // "cccccccc" is 10 characters of JSON
    await h.cache.answer('one', ['a'], h.build(ten('1')));
    await h.cache.answer('two', ['a'], h.build(ten('2')));
    await h.cache.answer('three', ['a'], h.build(ten('3')));
    assert.equal(h.cache.bytes, 30);
    await h.cache.answer('one', ['a'], h.build('unused')); // a hit: "one" is now the most recent
    await h.cache.answer('four', ['a'], h.build(ten('4'))); // "two" leaves
    assert.equal(h.builds(), 4);
    await h.cache.answer('one', ['a'], h.build('unused'));
    await h.cache.answer('three', ['a'], h.build('unused'));
    assert.equal(h.builds(), 4);
    assert.equal(await h.cache.answer('two', ['a'], h.build(ten('2'))), JSON.stringify(ten('2')));
    assert.equal(h.builds(), 5);
    // An answer larger than the whole budget is served, never kept.
    await h.cache.answer('big', ['a'], h.build('x'.repeat(100)));
    await h.cache.answer('big', ['a'], h.build('x'.repeat(100)));
    assert.equal(h.builds(), 7);
    assert.ok(h.cache.bytes <= 30);

    const off = harness(0);
    off.versions.set('a', 1);
    await off.cache.answer('k', ['a'], off.build(1));
    await off.cache.answer('k', ['a'], off.build(1));
    assert.deepEqual([off.builds(), off.counts.reads, off.cache.bytes], [2, 0, 0]);
  });
});

const objectRow = (kind: string, name: string, version: number): ObjectRow => ({
  account: 'a',
  api_version: 'v1',
  kind,
  namespace: 'default',
  name,
  uid: `uid-${kind}-${name}`,
  resource_version: String(version),
  labels: {},
  object: JSON.stringify({ apiVersion: 'v1', kind, metadata: { name, namespace: 'default', uid: `uid-${kind}-${name}` } }),
  watch_namespace: '',
  sync_gen: 0,
});
const pod = (name: string, version: number) => objectRow('Pod', name, version);
const configMap = (name: string, version: number) => objectRow('ConfigMap', name, version);

for (const driver of testDrivers()) {
  describe(`accounts.objects_version (${driver})`, { concurrency: false }, () => {
    let testDb: TestDatabase;
    let database: Database;
    const versions = async () => Object.fromEntries(await readObjectsVersions(database.db, ['a', 'b', 'gone']));

    before(async () => {
      testDb = await createTestDatabase(driver);
      database = await openDatabase(testDb.url, { maxConnections: 2 });
      await createRawQuery(database)("insert into accounts (name) values ('a'), ('b')", []);
    });
    after(async () => {
      await database?.close();
      await testDb?.drop();
    });

    test('moved by every write of the cache, in its transaction, and by nothing else', async () => {
      // As the gateway creates them: only the kinds the kept answers read are versioned.
      const writer = createObjectWriter(database, { versionedKinds: ANSWER_KINDS });
      const sync = createSyncState(database, { versionedKinds: ANSWER_KINDS });
      const start = await versions();
      assert.deepEqual(Object.keys(start).sort(), ['a', 'b']);
      assert.notEqual(start.a, start.b, 'new rows take fresh values of the sequence');

      const changes = { ...emptyDecodedBatch(), upserts: [pod('p1', 1), pod('p2', 2)], accounts: ['a'], eventCounts: { a: 2 } };
      await writer.write(changes);
      const afterChanges = await versions();
      assert.ok(afterChanges.a! > start.a!, 'a batch of changes moves its account');
      assert.equal(afterChanges.b, start.b, "another account's batch leaves it");

      const scope = { account: 'a', apiVersion: 'v1', kind: 'Pod', resource_version: '3', watch_namespace: '' };
      await writer.write({ ...emptyDecodedBatch(), scopes: [{ ...scope, api_version: 'v1' }], accounts: ['a'], eventCounts: { a: 0 } });
      assert.deepEqual(await versions(), afterChanges, 'a bookmark is not a change');
      await writer.write({
        ...emptyDecodedBatch(),
        upserts: [configMap('c1', 3), configMap('c2', 3)],
        accounts: ['a'],
        eventCounts: { a: 2 },
      });
      await writer.write({ ...emptyDecodedBatch(), deletes: [configMap('c1', 4)], accounts: ['a'], eventCounts: { a: 1 } });
      assert.deepEqual(await versions(), afterChanges, 'changes of kinds no answer reads leave it');
      await writer.write({ ...emptyDecodedBatch(), deletes: [pod('p9', 4)], accounts: ['a'], eventCounts: { a: 1 } });
      const afterDelete = await versions();
      assert.ok(afterDelete.a! > afterChanges.a!, 'a delete of a versioned kind moves it (even of an object not cached)');
      // Without versionedKinds (the writer's default), every kind is versioned.
      await createObjectWriter(database).write({
        ...emptyDecodedBatch(),
        upserts: [configMap('c3', 5)],
        accounts: ['a'],
        eventCounts: { a: 1 },
      });
      assert.ok((await versions()).a! > afterDelete.a!);

      // A new list that holds only p1: its END prunes p2 and moves the version; an END that prunes nothing does not.
      const watch = { account: 'a', apiVersion: 'v1', kind: 'Pod', watchNamespace: '' };
      /** A new full list of `scope` holding only `row` (START, the row, END): the versions before END, and what END pruned. */
      const relist = async (scope: typeof watch, row: ObjectRow) => {
        const generation = await sync.startList(scope);
        await writer.write({ ...emptyDecodedBatch(), upserts: [{ ...row, sync_gen: generation }], accounts: ['a'], eventCounts: { a: 1 } });
        const beforeEnd = await versions();
        return { beforeEnd, pruned: await sync.endList(scope, generation, row.resource_version, 1) };
      };
      const { beforeEnd, pruned } = await relist(watch, pod('p1', 4));
      assert.equal(pruned, 1);
      const afterPrune = await versions();
      assert.ok(afterPrune.a! > beforeEnd.a!, 'the prune moves it');
      const quiet = await relist(watch, pod('p1', 5));
      const beforeQuietEnd = quiet.beforeEnd;
      assert.equal(quiet.pruned, 0);
      assert.deepEqual(await versions(), beforeQuietEnd, 'an END that pruned nothing leaves it');
      const maps = { ...watch, kind: 'ConfigMap' };
      assert.equal((await relist(maps, configMap('c2', 6))).pruned, 1, 'c3 pruned');
      assert.deepEqual(await versions(), beforeQuietEnd, 'a prune of a kind no answer reads leaves it');

      // A removed cache (a released binding) moves it through bumpObjectsVersions in the same transaction.
      await database.db.transaction(async (tx) => bumpObjectsVersions(tx, ['b']));
      assert.ok((await versions()).b! > afterChanges.b!);
    });

    test('a row created again under a deleted name starts at a value never handed out before', async () => {
      const run = createRawQuery(database);
      const seen = new Set(Object.values(await versions()));
      await run("delete from accounts where name = 'b'", []);
      await run("insert into accounts (name) values ('b')", []);
      const fresh = (await versions()).b!;
      assert.ok(!seen.has(fresh) && fresh > Math.max(...seen));
    });
  });
}

describe("Deck's application answers through the answer cache", { concurrency: false }, () => {
  let stack: Stack;
  let deck: OrcaClient;
  const metric = async (result: 'hit' | 'miss') => {
    const text = await (await fetch(`${stack.gateway.httpUrl}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`outpost_gateway_spinnaker_answer_cache_total{result="${result}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  const deployment = (namespace: string, replicas: number): Obj => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: 'shop',
      namespace,
      annotations: { 'moniker.spinnaker.io/application': 'shop', 'moniker.spinnaker.io/cluster': 'deployment shop' },
    },
    spec: {
      replicas,
      selector: { matchLabels: { app: 'shop' } },
      template: { metadata: { labels: { app: 'shop' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } },
    },
  });
  /** Polls until nothing moves for a few polls (pods starting, a rollout finishing), returning the quiet answer. */
  const quiet = async (path: string) => {
    let last = '';
    let same = 0;
    for (const deadline = Date.now() + 30_000; same < 3; await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`${path} kept changing`);
      const body = JSON.stringify((await deck.get(path)).body);
      same = body === last ? same + 1 : 0;
      last = body;
    }
    return last;
  };

  before(async () => {
    stack = await startStack({
      agents: [
        {
          accounts: [
            { name: 'shop-a', namespaces: ['default'] },
            { name: 'shop-b', namespaces: ['other'] },
          ],
        },
      ],
    });
    deck = createOrcaClient(stack.gateway.httpUrl);
    stack.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
    stack.sandbox.store.create(deployment('default', 2));
    stack.sandbox.store.create(deployment('other', 1));
  });
  after(async () => {
    await stack?.close();
  });

  test('a second poll is a hit with the same bytes; a scale shows in the next answer; narrower callers get their own', async () => {
    // Every pod up first (the sandbox starts pods after a delay), then a few identical polls.
    await deck.until('/applications/shop/serverGroups', (b) => {
      const sgs = b as unknown as Obj[];
      return sgs.length === 2 && sgs.every((sg) => sg.instanceCounts.up === sg.capacity.desired && sg.capacity.desired > 0);
    });
    const settled = await quiet('/applications/shop/serverGroups');
    const hits = await metric('hit');
    const res = await fetch(`${stack.gateway.httpUrl}/applications/shop/serverGroups`);
    assert.equal(res.headers.get('content-type'), 'application/json');
    const text = await res.text();
    assert.equal(JSON.stringify(JSON.parse(text)), settled);
    assert.ok((await metric('hit')) > hits, 'the quiet answer was served from the answer cache');

    // A ConfigMap (no answer reads one) reaches the cache: the kept answer stays kept.
    stack.sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'shop-config', namespace: 'default' },
      data: { a: '1' },
    });
    await eventually('the ConfigMap cached', async () => {
      const rows = await stack.gateway.database.db
        .select({ name: objects.name })
        .from(objects)
        .where(and(eq(objects.account, 'shop-a'), eq(objects.kind, 'ConfigMap'), eq(objects.name, 'shop-config')));
      return rows.length === 1;
    });
    const hitsBefore = await metric('hit');
    assert.equal(JSON.stringify((await deck.get('/applications/shop/serverGroups')).body), settled);
    assert.equal(await metric('hit'), hitsBefore + 1, 'still a hit after the ConfigMap');

    // Right after the kept answer of both accounts, a caller narrowed to one gets only that one.
    const narrowed = createOrcaClient(stack.gateway.httpUrl, { 'x-spinnaker-accounts': 'shop-b' });
    const onlyB = (await narrowed.get('/applications/shop/serverGroups')).body as unknown as Obj[];
    assert.deepEqual(
      onlyB.map((sg) => sg.account),
      ['shop-b'],
    );

    // A scale in the cluster: the next answers show it (the version moved), without waiting for anything to expire.
    const misses = await metric('miss');
    const current = stack.sandbox.store.get('apps/v1', 'Deployment', 'default', 'shop') as Obj;
    stack.sandbox.store.update({ ...current, spec: { ...current.spec, replicas: 3 } });
    const scaled = await deck.until('/applications/shop/serverGroups', (b) =>
      (b as unknown as Obj[]).some((sg) => sg.account === 'shop-a' && sg.capacity.desired === 3 && sg.instances.length === 3),
    );
    assert.equal((scaled as unknown as Obj[]).length, 2);
    assert.ok((await metric('miss')) > misses);
  });
});
