/**
 * The sandbox negotiates a read's representation as kube-apiserver does: the first `Accept` alternative it can
 * produce — a Table (whose rows carry `PartialObjectMetadata` by default, nothing with `includeObject=None`, the
 * object with `Object`; any other value is 400), `PartialObjectMetadata` for one object or a watch's events,
 * `PartialObjectMetadataList` for a list — falling back to later alternatives, 406 when none fits; a watch asked for
 * a `PartialObjectMetadataList` cannot convert its objects and sends them whole, as kube-apiserver does.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch } from './api-client.js';

const MARKER = 'bWFya2VyLXZhbHVl';
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const PARTIAL = 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io';
const PARTIAL_LIST = 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io';

let sb: Sandbox;
before(async () => {
  sb = await startSandbox({ bookmarkIntervalMs: 50 });
  sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'views' } });
  sb.store.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'token', namespace: 'views', labels: { app: 'x' } },
    type: 'Opaque',
    data: { password: MARKER },
  });
});
after(async () => {
  await sb?.close();
});

const read = (path: string, accept: string) => call(sb, 'GET', path, { headers: { Accept: accept } });

describe('one object and lists', () => {
  test('PartialObjectMetadata of one object, PartialObjectMetadataList of a list: metadata only', async () => {
    const one = await read('/api/v1/namespaces/views/secrets/token', PARTIAL);
    assert.equal(one.status, 200);
    assert.deepEqual(Object.keys(one.json).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.equal(one.json.kind, 'PartialObjectMetadata');
    assert.equal(one.json.apiVersion, 'meta.k8s.io/v1');
    assert.equal(one.json.metadata.labels.app, 'x');
    const list = await read('/api/v1/namespaces/views/secrets', `${PARTIAL_LIST},application/json`);
    assert.equal(list.status, 200);
    assert.equal(list.json.kind, 'PartialObjectMetadataList');
    assert.deepEqual(
      list.json.items.map((i: { kind: string; metadata: { name: string } }) => [i.kind, i.metadata.name]),
      [['PartialObjectMetadata', 'token']],
    );
    assert.ok(list.json.metadata.resourceVersion);
    for (const answer of [one, list]) assert.ok(!answer.text.includes(MARKER));
  });

  test('a view that does not fit the read is 406, unless a later alternative fits', async () => {
    const listAsOne = await read('/api/v1/namespaces/views/secrets', PARTIAL);
    assert.equal(listAsOne.status, 406);
    assert.equal(listAsOne.json.reason, 'NotAcceptable');
    assert.equal((await read('/api/v1/namespaces/views/secrets/token', PARTIAL_LIST)).status, 406);
    const unknown = await read('/api/v1/namespaces/views/secrets/token', 'application/json;as=Secret;v=v1;g=meta.k8s.io');
    assert.equal(unknown.status, 406);
    const fallback = await read('/api/v1/namespaces/views/secrets/token', 'application/json;as=Foo;v=v1;g=example.com,application/json');
    assert.equal(fallback.json.kind, 'Secret', 'an alternative the server cannot produce falls through to the next');
  });

  test('Table rows: PartialObjectMetadata by default and with Metadata, none with None, the object with Object; others 400', async () => {
    const rowObject = async (query: string) => {
      const answer = await read(`/api/v1/namespaces/views/secrets${query}`, `${TABLE},application/json`);
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.kind, 'Table');
      return answer.json.rows[0].object;
    };
    assert.equal((await rowObject('')).kind, 'PartialObjectMetadata');
    assert.equal((await rowObject('?includeObject=Metadata')).kind, 'PartialObjectMetadata');
    assert.equal(await rowObject('?includeObject=None'), undefined);
    const whole = await rowObject('?includeObject=Object');
    assert.equal(whole.kind, 'Secret');
    assert.equal(whole.data.password, MARKER);
    const bad = await read('/api/v1/namespaces/views/secrets?includeObject=Everything', TABLE);
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /Unsupported value: "Everything"/);
  });
});

describe('watches', () => {
  const watchOf = async (accept: string) => {
    const w = await openWatch(sb, '/api/v1/namespaces/views/secrets?watch=1&allowWatchBookmarks=true', undefined, { Accept: accept });
    try {
      await w.waitFor((events) => events.some((e) => e.type === 'ADDED') && events.some((e) => e.type === 'BOOKMARK'));
      return w.events;
    } finally {
      w.close();
    }
  };

  test('as Tables and as PartialObjectMetadata: events and bookmarks carry no values; as a list: whole objects', async () => {
    const tables = await watchOf(TABLE);
    for (const event of tables) assert.equal(event.object.kind, 'Table', event.type);
    assert.equal(tables.find((e) => e.type === 'ADDED').object.rows[0].object.kind, 'PartialObjectMetadata');
    const partials = await watchOf(PARTIAL);
    for (const event of partials) assert.equal(event.object.kind, 'PartialObjectMetadata', event.type);
    assert.ok(!JSON.stringify([tables, partials]).includes(MARKER));
    // kube-apiserver cannot make a PartialObjectMetadataList of one object: the watch sends it whole.
    const lists = await watchOf(PARTIAL_LIST);
    const added = lists.find((e) => e.type === 'ADDED');
    assert.equal(added.object.kind, 'Secret');
    assert.equal(added.object.data.password, MARKER);
  });
});
