/**
 * Events recorded by the controllers: shape (involvedObject, source, counts, timestamps), Killing when a running pod
 * is deleted, SuccessfulDelete when a ReplicaSet scales down, the per-namespace cap,
 * deletion with their namespace, and `events: false`. Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const rs = (name: string, ns: string, replicas: number) => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: ns },
  spec: {
    replicas,
    selector: { matchLabels: { rs: name } },
    template: { metadata: { labels: { rs: name } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
  },
});

async function withSandbox(options: Parameters<typeof startSandbox>[0], fn: (sb: Sandbox) => Promise<void>): Promise<void> {
  const sb = await startSandbox(options);
  try {
    await fn(sb);
  } finally {
    await sb.close();
  }
}

describe('events', () => {
  test('ReplicaSet and kubelet events: shape, listable through the API', () =>
    withSandbox({}, async (sb) => {
      sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'ev' } });
      const owner = sb.store.create(rs('web', 'ev', 2));
      const created = await eventually(
        'two SuccessfulCreate',
        () => {
          const list = sb.store.list('v1', 'Event', 'ev').filter((e) => e.reason === 'SuccessfulCreate');
          return list.length === 2 ? list : undefined;
        },
        { timeoutMs: 30_000 },
      );
      const pods = sb.store.list('v1', 'Pod', 'ev').map((p) => p.metadata.name);
      const ev = created[0]!;
      assert.deepEqual(
        { ...(ev.involvedObject as Record<string, unknown>), resourceVersion: undefined },
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', namespace: 'ev', uid: owner.metadata.uid, resourceVersion: undefined },
      );
      assert.equal(ev.type, 'Normal');
      assert.equal((ev.source as { component: string }).component, 'replicaset-controller');
      assert.ok(pods.includes(String(ev.message).replace('Created pod: ', '')));
      assert.equal(ev.count, 1);
      assert.ok(ev.firstTimestamp && ev.lastTimestamp);
      await eventually('kubelet Started', () => sb.store.list('v1', 'Event', 'ev').filter((e) => e.reason === 'Started').length === 2, {
        timeoutMs: 30_000,
      });
      const res = await call(sb, 'GET', `/api/v1/namespaces/ev/events?fieldSelector=involvedObject.name%3Dweb`);
      assert.equal(res.status, 200);
      assert.equal(res.json.items.length, 2);
    }));

  test('a deleted running pod gets a Killing event per container; scaling down records SuccessfulDelete', () =>
    withSandbox({}, async (sb) => {
      sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kill' } });
      const pod = sb.store.create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'two', namespace: 'kill' },
        spec: {
          containers: [
            { name: 'app', image: 'i' },
            { name: 'sidecar', image: 'j' },
          ],
        },
      });
      const running = () => sb.store.list('v1', 'Pod', 'kill').filter((p) => (p.status as { phase?: string }).phase === 'Running');
      await eventually('pod running', () => running().length === 1, { timeoutMs: 30_000 });
      const del = await call(sb, 'DELETE', '/api/v1/namespaces/kill/pods/two');
      assert.equal(del.status, 200);
      const killing = await eventually(
        'two Killing events',
        () => {
          const list = sb.store.list('v1', 'Event', 'kill').filter((e) => e.reason === 'Killing');
          return list.length === 2 ? list : undefined;
        },
        { timeoutMs: 30_000 },
      );
      assert.deepEqual(killing.map((e) => e.message).sort(), ['Stopping container app', 'Stopping container sidecar']);
      for (const e of killing) {
        assert.equal((e.involvedObject as { uid: string }).uid, pod.metadata.uid);
        assert.equal((e.source as { component: string }).component, 'kubelet');
      }

      const owner = sb.store.create(rs('down', 'kill', 2));
      await eventually('two pods running', () => running().length === 2, { timeoutMs: 30_000 });
      const live = sb.store.get('apps/v1', 'ReplicaSet', 'kill', 'down')!;
      sb.store.update({ ...live, spec: { ...(live.spec as object), replicas: 1 } });
      const deleted = await eventually('SuccessfulDelete', () =>
        sb.store
          .list('v1', 'Event', 'kill')
          .find((e) => e.reason === 'SuccessfulDelete' && (e.involvedObject as { uid: string }).uid === owner.metadata.uid),
      );
      const gone = String(deleted.message).replace('Deleted pod: ', '');
      await eventually('Killing for the deleted pod', () =>
        sb.store
          .list('v1', 'Event', 'kill')
          .some(
            (e) => e.reason === 'Killing' && (e.involvedObject as { name: string }).name === gone && e.message === 'Stopping container c',
          ),
      );
    }));

  test('capped per namespace (oldest deleted) and deleted with the namespace', () =>
    withSandbox({ maxEventsPerNamespace: 5 }, async (sb) => {
      sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'cap' } });
      sb.store.create(rs('many', 'cap', 8));
      await eventually(
        'pods running',
        () => sb.store.list('v1', 'Pod', 'cap').filter((p) => (p.status as { phase?: string }).phase === 'Running').length === 8,
        { timeoutMs: 30_000 },
      );
      await eventually('capped at 5', () => sb.store.list('v1', 'Event', 'cap').length === 5, { timeoutMs: 30_000 });
      const del = await call(sb, 'DELETE', '/api/v1/namespaces/cap');
      assert.equal(del.status, 200);
      await eventually('events gone', () => sb.store.list('v1', 'Event').every((e) => e.metadata.namespace !== 'cap'), {
        timeoutMs: 30_000,
      });
    }));

  test('events: false records nothing', () =>
    withSandbox({ events: false }, async (sb) => {
      sb.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'quiet' } });
      sb.store.create(rs('q', 'quiet', 1));
      await eventually(
        'pod running',
        () => sb.store.list('v1', 'Pod', 'quiet').some((p) => (p.status as { phase?: string }).phase === 'Running'),
        { timeoutMs: 30_000 },
      );
      assert.equal(sb.store.list('v1', 'Event', 'quiet').length, 0);
    }));
});
