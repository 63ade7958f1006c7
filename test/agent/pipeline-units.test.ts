import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectRequestSchema, EventType, SyncPhase, type ConnectRequest } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { toBinary } from '@bufbuild/protobuf';
import { LAST_APPLIED_ANNOTATION, scrubObject } from '../../src/shared/secret-scrub.js';
import { createVersionTracker, isNewerVersion, storedVersion } from '../../src/agent/watch/version-tracker.js';
import { createOutbox, OutboxClosedError } from '../../src/agent/stream/outbox.js';
import { backoffDelayMs } from '../../src/agent/stream/backoff.js';
import { kindMatches, selectResources } from '../../src/agent/kube/kind-filter.js';
import { mapWithConcurrency } from '../../src/agent/kube/access-review.js';
import { scopesFor } from '../../src/agent/accounts/prepare-account.js';
import type { ResourceType } from '../../src/agent/kube/discovery.js';
import { explainConnectError } from '../../src/agent/stream/transport.js';

describe('scrubObject', () => {
  const secret = () => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 's', annotations: { [LAST_APPLIED_ANNOTATION]: '{"data":{"password":"czNjcjN0"}}', keep: 'me' } },
    type: 'Opaque',
    data: { password: 'czNjcjN0' },
    stringData: { password: 's3cr3t' },
  });

  test('removes data, stringData and the last-applied annotation of a Secret, keeps the rest', () => {
    const scrubbed = scrubObject(secret());
    assert.deepEqual(scrubbed, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', annotations: { keep: 'me' } }, type: 'Opaque' });
    assert.ok(!JSON.stringify(scrubbed).includes('s3cr3t') && !JSON.stringify(scrubbed).includes('czNjcjN0'));
  });

  test('uses the kind hint for list items that carry no kind', () => {
    const { kind: _k, apiVersion: _a, ...item } = secret();
    assert.equal('data' in scrubObject(item, 'Secret'), false);
  });

  test('leaves other kinds untouched', () => {
    const cm = { kind: 'ConfigMap', metadata: { annotations: { [LAST_APPLIED_ANNOTATION]: 'x' } }, data: { a: 'b' } };
    assert.deepEqual(scrubObject(structuredClone(cm), 'ConfigMap'), cm);
  });
});

describe('version tracker', () => {
  test('compares numeric versions by value and opaque ones by equality', () => {
    assert.equal(isNewerVersion('10', '9'), true);
    assert.equal(isNewerVersion('9', '10'), false);
    assert.equal(isNewerVersion('abc', 'abc'), false);
    assert.equal(isNewerVersion('abd', 'abc'), true);
  });

  test('drops duplicate and stale watch events, forgets deleted objects, and a list replaces the state', () => {
    const t = createVersionTracker();
    assert.equal(t.acceptEvent('ns', 'a', '5', false), true);
    assert.equal(t.acceptEvent('ns', 'a', '5', false), false);
    assert.equal(t.acceptEvent('ns', 'a', '4', false), false);
    assert.equal(t.acceptEvent('ns', 'a', '7', true), true);
    assert.equal(t.size, 0);
    t.acceptEvent('ns', 'b', '8', false);
    t.beginList();
    t.recordListed('ns', 'c', '9');
    t.finishList();
    assert.equal(t.size, 1);
    assert.equal(t.acceptEvent('ns', 'c', '9', false), false);
    assert.equal(t.acceptEvent('ns', 'b', '3', false), true, 'b was not in the list: forgotten');
  });

  test('keeps objects of different namespaces apart, including names that would collide as "namespace/name"', () => {
    const t = createVersionTracker();
    assert.equal(t.acceptEvent('a', 'b/c', '5', false), true);
    assert.equal(t.acceptEvent('a/b', 'c', '5', false), true, 'another object');
    assert.equal(t.acceptEvent('', 'a', '5', false), true, 'a cluster-scoped object');
    assert.equal(t.size, 3);
    assert.equal(t.acceptEvent('a', 'b/c', '4', false), false);
    assert.equal(t.acceptEvent('a/b', 'c', '6', true), true);
    assert.equal(t.size, 2);
    assert.equal(t.acceptEvent('a/b', 'c', '1', false), true, 'deleted: forgotten');
  });

  test('compares stored versions as isNewerVersion does, whatever form they are kept in', () => {
    const versions = [
      '0',
      '7',
      '07',
      '10',
      '9',
      '123456789012345',
      '1234567890123456',
      '99999999999999999999',
      '100000000000000000000',
      'abc',
      'abd',
      '',
    ];
    for (const known of versions) {
      for (const candidate of versions) {
        if (known === '') continue;
        const t = createVersionTracker();
        t.acceptEvent('ns', 'o', known, false);
        const expected = candidate === '' || isNewerVersion(candidate, known);
        assert.equal(t.acceptEvent('ns', 'o', candidate, false), expected, `${candidate} after ${known}`);
      }
    }
    // 2^53 + 1 is not exactly a double: it must not compare equal to 2^53.
    const t = createVersionTracker();
    t.recordListed('', 'o', '9007199254740992');
    assert.equal(t.acceptEvent('', 'o', '9007199254740993', false), true);
    assert.equal(storedVersion('42'), 42);
    assert.equal(storedVersion('042'), '042', 'not canonical: kept as text');
    assert.equal(storedVersion('1234567890123456'), '1234567890123456', 'beyond 15 digits: kept as text');
  });
});

describe('outbox', () => {
  const event = (name: string) => ({
    account: 'a',
    type: EventType.ADDED,
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name,
    objectJson: Buffer.from('{}'),
  });
  const setup = (maxUnacked: number, batchMaxEvents = 3) => {
    const sent: ConnectRequest[] = [];
    const outbox = createOutbox({ send: (m) => sent.push(m), maxUnacked, batchMaxEvents, batchMaxBytes: 1 << 20, batchFlushMs: 5 });
    return { sent, outbox };
  };

  test('batches events (size or delay), numbers data messages from 1 and keeps markers in order', async () => {
    const { sent, outbox } = setup(10);
    outbox.pushMarker({ account: 'a', apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.START });
    for (const n of ['a', 'b', 'c', 'd']) outbox.pushEvent(event(n));
    outbox.pushMarker({ account: 'a', apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.END, count: 4n });
    assert.deepEqual(
      sent.map((m) => m.message.case),
      ['sync', 'events', 'events', 'sync'],
    );
    assert.deepEqual(
      sent.map((m) => (m.message.value as { sequence: bigint }).sequence),
      [1n, 2n, 3n, 4n],
    );
    outbox.pushEvent(event('e'));
    assert.equal(sent.length, 4);
    await new Promise((r) => setTimeout(r, 30));
    assert.equal(sent.length, 5, 'flushed after the delay');
    outbox.close();
  });

  test('group commit: with nothing in flight a batch leaves on the next turn, not after the flush delay; while one is in flight, events wait for its ack and leave together', async () => {
    const sent: ConnectRequest[] = [];
    // A flush delay no test waits for: anything sent here was sent without it.
    const outbox = createOutbox({
      send: (m) => sent.push(m),
      maxUnacked: 10,
      batchMaxEvents: 100,
      batchMaxBytes: 1 << 20,
      batchFlushMs: 600_000,
    });
    const turn = () => new Promise((r) => setImmediate(r));
    outbox.pushEvent(event('a'));
    outbox.pushEvent(event('b'));
    assert.equal(sent.length, 0, 'events of one read are not sent one by one');
    await turn();
    assert.equal(sent.length, 1, 'idle: sent without waiting for the timer');
    assert.deepEqual(sent[0]!.message.case === 'events' && sent[0]!.message.value.events.map((e) => e.name), ['a', 'b']);
    outbox.pushEvent(event('c'));
    await turn();
    outbox.pushEvent(event('d'));
    await turn();
    assert.equal(sent.length, 1, 'batch 1 in flight: later events gather');
    outbox.ack(1n);
    assert.equal(sent.length, 2, 'the ack sends what gathered at once');
    assert.deepEqual(sent[1]!.message.case === 'events' && sent[1]!.message.value.events.map((e) => e.name), ['c', 'd']);
    outbox.ack(2n);
    outbox.pushEvent(event('e'));
    await turn();
    assert.equal(sent.length, 3, 'idle again after the ack');
    outbox.close();
  });

  test('never exceeds the window; acks release it and ready() follows', async () => {
    const { sent, outbox } = setup(2, 1);
    for (const n of ['a', 'b', 'c', 'd']) outbox.pushEvent(event(n));
    assert.equal(sent.length, 2);
    assert.equal(outbox.inFlight, 2);
    assert.equal(outbox.isReady(), false);
    let ready = false;
    const waiting = outbox.ready().then(() => (ready = true));
    outbox.ack(1n);
    assert.equal(sent.length, 3, 'the waiting events leave as one batch');
    assert.equal(sent[2]!.message.case === 'events' && sent[2]!.message.value.events.length, 2);
    assert.equal(ready, false, 'window full again');
    outbox.ack(5n); // beyond what was sent: clamps
    await waiting;
    assert.equal(outbox.inFlight, 0);
    const closedWait = (outbox.pushEvent(event('e')), outbox.pushEvent(event('f')), outbox.pushEvent(event('g')), outbox.ready());
    outbox.close();
    await assert.rejects(closedWait, OutboxClosedError);
  });

  test('discardAccount drops the unsent data of one account (no empty batch, no sequence gap), keeps the others', async () => {
    const { sent, outbox } = setup(1, 2);
    const of = (account: string, name: string) => ({ ...event(name), account });
    outbox.pushMarker({ account: 'gone', apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.START }); // sent: window now full
    outbox.pushEvent(of('gone', 'g1'));
    outbox.pushEvent(of('gone', 'g2')); // a full batch of 'gone' queued behind the window
    outbox.pushEvent(of('kept', 'k1'));
    outbox.pushEvent(of('gone', 'g3')); // mixed batch
    outbox.pushMarker({ account: 'gone', apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.END });
    outbox.pushEvent(of('gone', 'g4')); // pending, its flush timer running
    outbox.discardAccount('gone');
    outbox.ack(1n);
    await new Promise((r) => setTimeout(r, 30));
    outbox.ack(2n);
    await new Promise((r) => setTimeout(r, 30));
    assert.deepEqual(
      sent.map((m) => m.message.case),
      ['sync', 'events'],
    );
    assert.deepEqual(
      sent.map((m) => (m.message.value as { sequence: bigint }).sequence),
      [1n, 2n],
    );
    assert.deepEqual(sent[1]!.message.case === 'events' && sent[1]!.message.value.events.map((e) => e.name), ['k1']);
    assert.equal(outbox.isReady(), true);
    outbox.close();
  });

  test('messages serialize', () => {
    const { sent, outbox } = setup(1);
    outbox.pushMarker({ account: 'a', apiVersion: 'v1', kind: 'Pod', watchNamespace: 'demo', phase: SyncPhase.START });
    assert.ok(toBinary(ConnectRequestSchema, sent[0]!).length > 0);
    outbox.close();
  });
});

test('backoff: full jitter under an exponential ceiling capped at max', () => {
  const policy = { baseSeconds: 1, factor: 1.6, maxSeconds: 120 };
  assert.equal(
    backoffDelayMs(policy, 0, () => 1),
    1000,
  );
  assert.equal(
    backoffDelayMs(policy, 2, () => 1),
    2560,
  );
  assert.equal(
    backoffDelayMs(policy, 50, () => 1),
    120_000,
  );
  assert.equal(
    backoffDelayMs(policy, 50, () => 0),
    0,
  );
});

describe('kind selection', () => {
  const r = (group: string, kind: string, namespaced = true): ResourceType => ({
    group,
    version: 'v1',
    apiVersion: group ? `${group}/v1` : 'v1',
    kind,
    resource: `${kind.toLowerCase()}s`,
    namespaced,
    builtin: !group.includes('.'),
    subresources: [],
  });
  const all = [
    r('', 'Pod'),
    r('', 'Secret'),
    r('', 'Namespace', false),
    r('apps', 'Deployment'),
    r('example.com', 'Widget'),
    r('events.k8s.io', 'Event'),
    r('', 'Event'),
  ];
  const base = { kinds: [], omitKinds: [], customResourceDefinitions: [], onlyNamespacedResources: false };

  test('Kind matches any group, Kind.group one group, case-insensitively', () => {
    assert.equal(kindMatches('Deployment', r('apps', 'Deployment')), true);
    assert.equal(kindMatches('deployment.apps', r('apps', 'Deployment')), true);
    assert.equal(kindMatches('Deployment.extensions', r('apps', 'Deployment')), false);
  });

  test('kinds, omitKinds, CRDs and onlyNamespacedResources', () => {
    const names = (s: ResourceType[]) => s.map((t) => `${t.kind}.${t.group}`);
    assert.equal(selectResources(all, base).selected.length, all.length);
    assert.deepEqual(names(selectResources(all, { ...base, omitKinds: ['Event', 'Secret'] }).selected), [
      'Pod.',
      'Namespace.',
      'Deployment.apps',
      'Widget.example.com',
    ]);
    assert.deepEqual(names(selectResources(all, { ...base, onlyNamespacedResources: true }).selected).includes('Namespace.'), false);
    const picked = selectResources(all, {
      ...base,
      kinds: ['Pod', 'Gadget'],
      customResourceDefinitions: [{ kind: 'Widget.example.com', scope: 'Namespaced' }, { kind: 'Thing.example.com' }],
    });
    assert.deepEqual(names(picked.selected), ['Pod.', 'Widget.example.com']);
    assert.deepEqual(
      picked.skipped.map((s) => `${s.kind}.${s.apiVersion}`),
      ['Gadget.', 'Thing.example.com'],
    );
    const wrongScope = selectResources(all, { ...base, customResourceDefinitions: [{ kind: 'Widget.example.com', scope: 'Cluster' }] });
    assert.equal(
      wrongScope.selected.some((t) => t.kind === 'Widget'),
      false,
    );
    assert.match(wrongScope.skipped[0]!.reason, /scope/);
  });

  test('scopes: one per namespace for namespaced kinds when namespaces are set', () => {
    const scopes = scopesFor([r('', 'Pod'), r('', 'Namespace', false)], ['a', 'b']);
    assert.deepEqual(
      scopes.map((s) => `${s.type.kind}@${s.namespace}`),
      ['Pod@a', 'Pod@b', 'Namespace@'],
    );
  });
});

test('mapWithConcurrency keeps order and the limit', async () => {
  let running = 0;
  let peak = 0;
  const out = await mapWithConcurrency([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
    running++;
    peak = Math.max(peak, running);
    await new Promise((r) => setTimeout(r, 5));
    running--;
    return n * 2;
  });
  assert.deepEqual(out, [2, 4, 6, 8, 10, 12, 14]);
  assert.equal(peak, 3);
});

test('connection errors that look like HTTP/1.1 mention proxies', () => {
  assert.match(explainConnectError('[internal] Protocol error'), /HTTP\/1\.1-only proxy/);
  assert.equal(explainConnectError('[unavailable] connect ECONNREFUSED 127.0.0.1:1'), '[unavailable] connect ECONNREFUSED 127.0.0.1:1');
});
