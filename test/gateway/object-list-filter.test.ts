/**
 * The conditions of a ListObjects request, judged on a real PGlite cache by the objects they select (one database
 * for the whole file, refilled by each suite: the module's mutation run repeats this file for every mutant):
 * - label-selector-sql.ts: each operator as in Kubernetes (NotEquals and NotIn also match objects without the label,
 *   an empty In matches nothing, an empty NotIn everything), requirements joined with "and", keys and values with
 *   quotes and SQL metacharacters compared as data;
 * - uid-filters.ts: owner_uid selects the objects any of whose ownerReferences name the uid, involved_object_uid the
 *   Events about it (core involvedObject, events.k8s.io regarding), never another kind; a value that cannot be a uid
 *   is refused with INVALID_ARGUMENT before any SQL is built, an empty one is no filter;
 * - object-list-filter.ts: account, kind, namespace, labels, owner and involved object each narrow the list, an empty
 *   field (or a blank selector) leaves it out, and refusals come in the documented order: involved-object uid, label
 *   selector, owner uid.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Code, ConnectError } from '@connectrpc/connect';
import { and, asc, type SQL } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/database.js';
import { objects } from '../../src/db/schema.js';
import { labelSelectorToSql } from '../../src/gateway/cache/label-selector-sql.js';
import { type ObjectListFilter, objectListConditions } from '../../src/gateway/cache/object-list-filter.js';
import { involvedObjectSql, ownerUidSql } from '../../src/gateway/cache/uid-filters.js';
import type { LabelRequirement } from '../../src/shared/label-selector.js';

/** One cached object; `name` is what the tests compare, the rest defaults to a ConfigMap in prod/ns-a. */
interface Row {
  name: string;
  account?: string;
  kind?: string;
  namespace?: string;
  labels?: Record<string, string>;
  /** Merged into the stored object (metadata with ownerReferences, involvedObject, regarding…). */
  object?: Record<string, unknown>;
}

let database: Database;
before(async () => {
  database = await openDatabase('memory://');
});
after(async () => {
  await database?.close();
});

/** Makes `rows` the whole cache. */
async function fill(rows: Row[]): Promise<void> {
  await database.db.delete(objects);
  await database.db.insert(objects).values(
    rows.map((r, i) => ({
      account: r.account ?? 'prod',
      apiVersion: 'v1',
      kind: r.kind ?? 'ConfigMap',
      namespace: r.namespace ?? 'ns-a',
      name: r.name,
      uid: `uid-${r.name}`,
      resourceVersion: String(i + 1),
      labels: r.labels ?? {},
      object: { metadata: { name: r.name }, ...r.object },
    })),
  );
}

/** The sorted names of the objects all `conditions` select (undefined ones match everything). */
async function names(conditions: (SQL | undefined)[]): Promise<string[]> {
  const found = await database.db
    .select({ name: objects.name })
    .from(objects)
    .where(and(...conditions))
    .orderBy(asc(objects.name));
  return found.map((f) => f.name);
}

function refusal(message: string) {
  return (err: unknown) => {
    assert.ok(err instanceof ConnectError, `not a ConnectError: ${err}`);
    assert.equal(err.code, Code.InvalidArgument);
    assert.equal(err.rawMessage, message);
    return true;
  };
}

const UID_RULE = 'must be an object uid (letters, digits, ".", "_", "-"; at most 128 characters)';

describe('label selector as SQL (label-selector-sql.ts)', () => {
  const QUOTED_KEY = `it's "odd"\\key?`;
  const QUOTED_VALUE = `o'clock"; drop table objects; --`;
  const ROWS: Row[] = [
    { name: 'web-front', labels: { app: 'web', tier: 'front' } },
    { name: 'api', labels: { app: 'api' } },
    { name: 'bare', labels: {} },
    { name: 'empty-app', labels: { app: '' } },
    { name: 'back', labels: { tier: 'back' } },
    { name: 'quoted', labels: { [QUOTED_KEY]: QUOTED_VALUE } },
  ];
  const ALL = ROWS.map((r) => r.name).sort();
  const without = (...excluded: string[]) => ALL.filter((n) => !excluded.includes(n));
  const req = (key: string, operator: LabelRequirement['operator'], values: string[] = []): LabelRequirement => ({ key, operator, values });
  const select = (requirements: LabelRequirement[]) => names([labelSelectorToSql(objects.labels, requirements)]);
  before(() => fill(ROWS));

  test('no requirement is no condition: every object matches', async () => {
    assert.equal(labelSelectorToSql(objects.labels, []), undefined);
    assert.deepEqual(await select([]), ALL);
  });

  test('Equals matches only objects with that label at that value; the empty value is not a missing label', async () => {
    assert.deepEqual(await select([req('app', 'Equals', ['web'])]), ['web-front']);
    assert.deepEqual(await select([req('app', 'Equals', ['API'])]), []);
    assert.deepEqual(await select([req('app', 'Equals', [''])]), ['empty-app']);
    // an Equals without a value asks for the empty value, as "app=" does
    assert.deepEqual(await select([req('app', 'Equals')]), ['empty-app']);
  });

  test('NotEquals matches every other object, those without the label too', async () => {
    assert.deepEqual(await select([req('app', 'NotEquals', ['web'])]), without('web-front'));
    assert.deepEqual(await select([req('app', 'NotEquals', [''])]), without('empty-app'));
    assert.deepEqual(await select([req('app', 'NotEquals')]), without('empty-app'));
  });

  test('In matches objects whose label is one of the values; an empty set matches nothing', async () => {
    assert.deepEqual(await select([req('app', 'In', ['api', 'web'])]), ['api', 'web-front']);
    assert.deepEqual(await select([req('app', 'In', ['web'])]), ['web-front']);
    assert.deepEqual(await select([req('app', 'In', [''])]), ['empty-app']);
    assert.deepEqual(await select([req('app', 'In', [])]), []);
  });

  test('NotIn matches objects whose label is none of the values, and those without it; an empty set matches all', async () => {
    assert.deepEqual(await select([req('app', 'NotIn', ['api', 'web'])]), without('api', 'web-front'));
    assert.deepEqual(await select([req('app', 'NotIn', ['', 'web'])]), without('empty-app', 'web-front'));
    assert.deepEqual(await select([req('app', 'NotIn', [])]), ALL);
  });

  test('Exists matches objects with the label whatever its value; DoesNotExist the others', async () => {
    assert.deepEqual(await select([req('app', 'Exists')]), ['api', 'empty-app', 'web-front']);
    assert.deepEqual(await select([req('app', 'DoesNotExist')]), without('api', 'empty-app', 'web-front'));
    assert.deepEqual(await select([req('tier', 'Exists')]), ['back', 'web-front']);
  });

  test('every requirement must hold', async () => {
    assert.deepEqual(await select([req('app', 'Equals', ['web']), req('tier', 'Equals', ['front'])]), ['web-front']);
    assert.deepEqual(await select([req('app', 'Equals', ['web']), req('tier', 'Equals', ['back'])]), []);
    assert.deepEqual(await select([req('app', 'Exists'), req('tier', 'NotEquals', ['front'])]), ['api', 'empty-app']);
    assert.deepEqual(await select([req('tier', 'Exists'), req('app', 'DoesNotExist'), req('tier', 'NotIn', ['front'])]), ['back']);
  });

  test('keys and values with quotes and SQL metacharacters are compared as data', async () => {
    assert.deepEqual(await select([req(QUOTED_KEY, 'Equals', [QUOTED_VALUE])]), ['quoted']);
    assert.deepEqual(await select([req(QUOTED_KEY, 'NotEquals', [QUOTED_VALUE])]), without('quoted'));
    assert.deepEqual(await select([req(QUOTED_KEY, 'In', ['x', QUOTED_VALUE])]), ['quoted']);
    assert.deepEqual(await select([req(QUOTED_KEY, 'NotIn', ['x', QUOTED_VALUE])]), without('quoted'));
    assert.deepEqual(await select([req(QUOTED_KEY, 'Exists')]), ['quoted']);
    assert.deepEqual(await select([req(QUOTED_KEY, 'DoesNotExist')]), without('quoted'));
    // text that would widen the condition if it reached the SQL matches nothing
    const widening = `web') or ('1'='1`;
    assert.deepEqual(await select([req('app', 'Equals', [widening])]), []);
    assert.deepEqual(await select([req('app', 'In', [widening])]), []);
    assert.deepEqual(await select([req(`app' or '1'='1`, 'Exists')]), []);
    assert.deepEqual(await select([req(`app" : "web`, 'Exists')]), []);
    assert.deepEqual(await select([req('app', 'NotIn', [`web') or false or ('`])]), ALL);
    // and the table is still there, whole
    assert.deepEqual(await select([]), ALL);
  });
});

describe('uid filters (uid-filters.ts)', () => {
  const LONGEST = `a${'b'.repeat(127)}`;
  const ACCEPTED = [
    'a',
    'z',
    'A',
    'Z',
    '0',
    '9',
    'a.b',
    'a_b',
    'a-b',
    'a.',
    'a_',
    'a-',
    'xaAzZ09',
    '0b1d4f6e-2c3a-4e5f-8a9b-0c1d2e3f4a5b',
    LONGEST,
  ];
  const REFUSED = [
    `${LONGEST}c`,
    '.a',
    '_a',
    '-a',
    'a b',
    ' a',
    'a ',
    "a'b",
    "'a",
    "a'",
    'a"b',
    'a;b',
    'a/b',
    'a:b',
    'a\nb',
    'a\n',
    'é',
    'aé',
    '*',
    "x' or '1'='1",
  ];
  const owned = (uid: string, ...more: string[]) => ({
    metadata: { ownerReferences: [uid, ...more].map((u) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: u, uid: u })) },
  });
  before(() =>
    fill([
      { name: 'pod-1', kind: 'Pod', object: owned('rs-1') },
      { name: 'pod-2', kind: 'Pod', object: owned('rs-2', 'rs-1') },
      { name: 'pod-3', kind: 'Pod', object: owned('rs-2') },
      { name: 'orphan', kind: 'Pod' },
      { name: 'longest', kind: 'Pod', object: owned(LONGEST) },
      { name: 'ev-core', kind: 'Event', object: { involvedObject: { kind: 'Deployment', uid: 'web-uid' } } },
      { name: 'ev-new', kind: 'Event', object: { regarding: { kind: 'Deployment', uid: 'web-uid' } } },
      { name: 'ev-other', kind: 'Event', object: { involvedObject: { uid: 'api-uid' }, regarding: { uid: 'api-uid' } } },
      { name: 'ev-none', kind: 'Event' },
      { name: 'not-event', kind: 'Report', object: { involvedObject: { uid: 'web-uid' }, regarding: { uid: 'web-uid' } } },
    ]),
  );

  test('owner_uid selects the objects any of whose ownerReferences name the uid, nothing else', async () => {
    assert.deepEqual(await names([ownerUidSql('rs-1')]), ['pod-1', 'pod-2']);
    assert.deepEqual(await names([ownerUidSql('rs-2')]), ['pod-2', 'pod-3']);
    assert.deepEqual(await names([ownerUidSql('rs')]), []);
    assert.deepEqual(await names([ownerUidSql(LONGEST)]), ['longest']);
  });

  test('an empty owner_uid is no filter', () => {
    assert.equal(ownerUidSql(''), undefined);
  });

  test('owner_uid accepts every uid spelling and refuses the rest, naming the field', () => {
    for (const uid of ACCEPTED) assert.doesNotThrow(() => ownerUidSql(uid), uid);
    for (const uid of REFUSED) assert.throws(() => ownerUidSql(uid), refusal(`owner_uid ${UID_RULE}`), JSON.stringify(uid));
  });

  test('involved_object_uid selects the Events about the uid, core and events.k8s.io alike, with or without kind Event', async () => {
    assert.deepEqual(await names([involvedObjectSql('', 'web-uid')]), ['ev-core', 'ev-new']);
    assert.deepEqual(await names([involvedObjectSql('Event', 'web-uid')]), ['ev-core', 'ev-new']);
    assert.deepEqual(await names([involvedObjectSql('', 'api-uid')]), ['ev-other']);
    assert.deepEqual(await names([involvedObjectSql('', 'web')]), []);
  });

  test('an empty involved_object_uid is no filter, whatever the kind', () => {
    assert.equal(involvedObjectSql('', ''), undefined);
    assert.equal(involvedObjectSql('Pod', ''), undefined);
  });

  test('involved_object_uid refuses a value that cannot be a uid before it looks at the kind', () => {
    for (const uid of ACCEPTED) assert.doesNotThrow(() => involvedObjectSql('Event', uid), uid);
    for (const uid of REFUSED) {
      assert.throws(() => involvedObjectSql('', uid), refusal(`involved_object_uid ${UID_RULE}`), JSON.stringify(uid));
      assert.throws(() => involvedObjectSql('Pod', uid), refusal(`involved_object_uid ${UID_RULE}`), JSON.stringify(uid));
    }
  });

  test('involved_object_uid with another kind is refused: only Events are about an object', () => {
    for (const kind of ['Pod', 'Report', 'event', 'Events', ' Event'])
      assert.throws(
        () => involvedObjectSql(kind, 'web-uid'),
        refusal(`involved_object_uid selects Events; kind must be empty or Event, not ${kind}`),
        kind,
      );
  });
});

describe('ListObjects filter conditions (object-list-filter.ts)', () => {
  const NONE: ObjectListFilter = { account: '', kind: '', namespace: '', labelSelector: '', ownerUid: '', involvedObjectUid: '' };
  const ownedBy = (uid: string) => ({ metadata: { ownerReferences: [{ kind: 'ReplicaSet', name: 'rs', uid }] } });
  const ROWS: Row[] = [
    { name: 'prod-web', kind: 'Pod', labels: { app: 'web', tier: 'front' }, object: ownedBy('rs-web') },
    { name: 'prod-api', kind: 'Pod', namespace: 'ns-b', labels: { app: 'api' }, object: ownedBy('rs-api') },
    { name: 'prod-cm', labels: { app: 'web' } },
    { name: 'prod-ev', kind: 'Event', object: { involvedObject: { uid: 'web-uid' } } },
    { name: 'dev-web', account: 'dev', kind: 'Pod', labels: { app: 'web' }, object: ownedBy('rs-web') },
    { name: 'dev-ev', account: 'dev', kind: 'Event', namespace: 'ns-b', object: { regarding: { uid: 'web-uid' } } },
  ];
  const ALL = ROWS.map((r) => r.name).sort();
  const BAD_SELECTOR = 'app in ()';
  const BAD_SELECTOR_MESSAGE = `label_selector: unable to parse label selector "${BAD_SELECTOR}": for 'in', 'notin' operators, values set can't be empty`;
  const BAD_UID = "x' or '1'='1";
  const conditions = (fields: Partial<ObjectListFilter>) => objectListConditions({ ...NONE, ...fields });
  const list = (fields: Partial<ObjectListFilter>) => names(conditions(fields));
  before(() => fill(ROWS));

  test('no field set lists every object; a blank label selector is no selector', async () => {
    assert.deepEqual(await list({}), ALL);
    assert.deepEqual(await list({ labelSelector: '   ' }), ALL);
  });

  test('account, kind and namespace each narrow the list, and combine', async () => {
    assert.deepEqual(await list({ account: 'dev' }), ['dev-ev', 'dev-web']);
    assert.deepEqual(await list({ kind: 'Pod' }), ['dev-web', 'prod-api', 'prod-web']);
    assert.deepEqual(await list({ namespace: 'ns-b' }), ['dev-ev', 'prod-api']);
    assert.deepEqual(await list({ account: 'prod', kind: 'Pod', namespace: 'ns-a' }), ['prod-web']);
    assert.deepEqual(await list({ account: 'staging' }), []);
  });

  test('the label selector selects by labels, in Kubernetes syntax', async () => {
    assert.deepEqual(await list({ labelSelector: 'app=web' }), ['dev-web', 'prod-cm', 'prod-web']);
    assert.deepEqual(await list({ labelSelector: 'app in (api,web),tier!=front', account: 'prod' }), ['prod-api', 'prod-cm']);
    assert.deepEqual(await list({ labelSelector: '!app' }), ['dev-ev', 'prod-ev']);
  });

  test('owner_uid lists the dependents of the owner; involved_object_uid the Events about the object', async () => {
    assert.deepEqual(await list({ ownerUid: 'rs-web' }), ['dev-web', 'prod-web']);
    assert.deepEqual(await list({ ownerUid: 'rs-web', account: 'prod' }), ['prod-web']);
    assert.deepEqual(await list({ involvedObjectUid: 'web-uid' }), ['dev-ev', 'prod-ev']);
    assert.deepEqual(await list({ involvedObjectUid: 'web-uid', kind: 'Event', account: 'dev' }), ['dev-ev']);
  });

  test('a malformed label selector is INVALID_ARGUMENT, saying what is wrong with it', () => {
    assert.throws(() => conditions({ labelSelector: BAD_SELECTOR }), refusal(BAD_SELECTOR_MESSAGE));
    assert.throws(
      () => conditions({ labelSelector: `app=${'x'.repeat(64)}` }),
      refusal(`label_selector: invalid label value "${'x'.repeat(64)}" for key "app": must be no more than 63 characters`),
    );
  });

  test('refusals come in order: involved-object uid, then label selector, then owner uid', () => {
    const all = { involvedObjectUid: BAD_UID, labelSelector: BAD_SELECTOR, ownerUid: BAD_UID };
    assert.throws(() => conditions(all), refusal(`involved_object_uid ${UID_RULE}`));
    assert.throws(
      () => conditions({ ...all, kind: 'Pod', involvedObjectUid: 'web-uid' }),
      refusal('involved_object_uid selects Events; kind must be empty or Event, not Pod'),
    );
    assert.throws(() => conditions({ ...all, involvedObjectUid: '' }), refusal(BAD_SELECTOR_MESSAGE));
    assert.throws(() => conditions({ ...all, involvedObjectUid: '', labelSelector: '' }), refusal(`owner_uid ${UID_RULE}`));
  });
});
