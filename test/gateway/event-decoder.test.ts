/**
 * The pure part of ingest: resourceVersion ordering, collapsing a batch to one operation per object, dropping events
 * of accounts the stream released, refusing those of accounts it may not write, list generations, page tokens.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { create } from '@bufbuild/protobuf';
import { ConnectError, Code } from '@connectrpc/connect';
import { EventBatchSchema, EventType } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { decodeEventBatch } from '../../src/gateway/cache/event-decoder.js';
import { isOlderResourceVersion } from '../../src/gateway/cache/resource-version.js';
import { decodePageToken, encodePageToken } from '../../src/gateway/api/page-token.js';
import { configMap, event } from '../../testkit/test-agent-stream.js';

const ctx = {
  access: (a: string) =>
    a === 'mine' ? ('write' as const) : a === 'other' ? ('drop' as const) : { refused: `account ${a} is not cached by this stream` },
  listGeneration: (_a: string, _v: string, _k: string, ns: string) => (ns === 'listing' ? 7 : 0),
};
const batch = (events: ReturnType<typeof event>[]) => create(EventBatchSchema, { sequence: 1n, events });

describe('event decoding', () => {
  test('resourceVersions compare as integers when both are numeric', () => {
    assert.equal(isOlderResourceVersion('9', '10'), true);
    assert.equal(isOlderResourceVersion('10', '9'), false);
    assert.equal(isOlderResourceVersion('10', '10'), false);
    assert.equal(isOlderResourceVersion('123456789012345678901', '99'), false);
    assert.equal(isOlderResourceVersion('abc', '10'), false, 'opaque versions never count as older');
  });

  test('one operation per object: the newest event wins, in order', () => {
    const d = decodeEventBatch(
      batch([
        event('mine', EventType.ADDED, configMap('a', 1)),
        event('mine', EventType.MODIFIED, configMap('a', 3)),
        event('mine', EventType.MODIFIED, configMap('a', 2)),
        event('mine', EventType.ADDED, configMap('b', 4)),
        event('mine', EventType.DELETED, configMap('b', 5)),
        event('other', EventType.ADDED, configMap('c', 6)),
      ]),
      ctx,
    );
    assert.deepEqual(
      d.upserts.map((u) => [u.name, u.resource_version]),
      [['a', '3']],
    );
    assert.deepEqual(
      d.deletes.map((u) => [u.name, u.resource_version]),
      [['b', '5']],
    );
    assert.equal(d.droppedStale, 1);
    assert.equal(d.droppedReleased, 1);
    assert.deepEqual(d.accounts, ['mine']);
    assert.deepEqual(d.eventCounts, { mine: 5 }, 'changes counted before collapsing');
    assert.deepEqual(d.scopes, [{ account: 'mine', api_version: 'v1', kind: 'ConfigMap', watch_namespace: '', resource_version: '5' }]);
  });

  test('list items get the running list generation, and missing apiVersion/kind are filled in', () => {
    const item = { metadata: { name: 'x', namespace: 'listing', uid: 'u', resourceVersion: '9' } };
    const ev = {
      ...event('mine', EventType.ADDED, { apiVersion: 'v1', kind: 'ConfigMap', ...item }, 'listing'),
      objectJson: new TextEncoder().encode(JSON.stringify(item)),
    };
    const d = decodeEventBatch(batch([ev]), ctx);
    assert.equal(d.upserts[0]!.sync_gen, 7);
    assert.deepEqual(JSON.parse(d.upserts[0]!.object), { ...item, apiVersion: 'v1', kind: 'ConfigMap' });
  });

  test('bookmarks move the scope position only', () => {
    const d = decodeEventBatch(
      batch([{ ...event('mine', EventType.BOOKMARK, configMap('ignored', 50)), name: '', namespace: '', objectJson: new Uint8Array() }]),
      ctx,
    );
    assert.equal(d.upserts.length + d.deletes.length, 0);
    assert.equal(d.scopes[0]!.resource_version, '50');
    assert.deepEqual(d.accounts, ['mine'], 'the account is touched (its lease fences the write)');
    assert.deepEqual(d.eventCounts, { mine: 0 }, 'a bookmark is not a change');
  });

  test('events of released accounts are dropped before validation, of accounts the stream may not write refused; bad events of cached ones fail the batch', () => {
    const bad = { ...event('other', EventType.ADDED, configMap('x', 1)), objectJson: new TextEncoder().encode('nope') };
    assert.equal(decodeEventBatch(batch([bad]), ctx).droppedReleased, 1);
    assert.throws(
      () => decodeEventBatch(batch([event('mine', EventType.ADDED, configMap('ok', 1)), { ...bad, account: 'stranger' }]), ctx),
      (err: unknown) =>
        err instanceof ConnectError &&
        err.code === Code.PermissionDenied &&
        /event 1 of batch 1: account stranger is not cached/.test(err.rawMessage),
    );
    assert.throws(
      () => decodeEventBatch(batch([{ ...bad, account: 'mine' }]), ctx),
      (err: unknown) => err instanceof ConnectError && err.code === Code.InvalidArgument,
    );
    assert.throws(
      () => decodeEventBatch(batch([{ ...event('mine', EventType.UNSPECIFIED, configMap('x', 1)) }]), ctx),
      /unknown event type/,
    );
    assert.throws(
      () =>
        decodeEventBatch(batch([{ ...event('mine', EventType.ADDED, configMap('x', 1, { labels: { a: 1 as unknown as string } })) }]), ctx),
      /label/,
    );
  });

  test('object JSON with an escaped lone surrogate is refused (jsonb cannot store it); an escaped pair is fine', () => {
    const withText = (text: string) => ({
      ...event('mine', EventType.ADDED, configMap('s', 1)),
      objectJson: new TextEncoder().encode(text),
    });
    const obj = (v: string) =>
      `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"s","namespace":"default","uid":"uid-s","resourceVersion":"1"},"data":{"v":"${v}"}}`;
    assert.throws(
      () => decodeEventBatch(batch([withText(obj('a\\ud800b'))]), ctx),
      (err: unknown) =>
        err instanceof ConnectError &&
        err.code === Code.InvalidArgument &&
        /object_json\.data\.v contains a lone UTF-16 surrogate/.test(err.rawMessage),
    );
    assert.throws(() => decodeEventBatch(batch([withText(obj('\\udc00'))]), ctx), /lone UTF-16 surrogate/);
    const pair = decodeEventBatch(batch([withText(obj('\\ud83d\\ude00'))]), ctx);
    assert.equal(JSON.parse(pair.upserts[0]!.object).data.v, '\u{1F600}');
    const literal = decodeEventBatch(batch([withText(obj('\\\\ud800'))]), ctx);
    assert.equal(JSON.parse(literal.upserts[0]!.object).data.v, '\\ud800', 'an escaped backslash before ud800 is plain text');
  });

  test('page tokens round-trip and are bound to their filters', () => {
    const f = { account: 'a', kind: 'K', namespace: '', labelSelector: 'x=y', omitObject: false, ownerUid: '', involvedObjectUid: '' };
    const token = encodePageToken(['a', 'K', 'v1', 'ns', 'n'], f);
    assert.deepEqual(decodePageToken(token, f), ['a', 'K', 'v1', 'ns', 'n']);
    assert.throws(() => decodePageToken(token, { ...f, labelSelector: '' }), /different filters/);
    assert.throws(() => decodePageToken(token, { ...f, ownerUid: 'u-1' }), /different filters/);
    assert.throws(() => decodePageToken(token, { ...f, involvedObjectUid: 'u-1' }), /different filters/);
    const byOwner = encodePageToken(['a', 'K', 'v1', 'ns', 'n'], { ...f, ownerUid: 'u-1' });
    assert.throws(
      () => decodePageToken(byOwner, { ...f, involvedObjectUid: 'u-1' }),
      /different filters/,
      'the two uids are different filters',
    );
    assert.throws(() => decodePageToken('%%%', f), /malformed/);
  });
});
