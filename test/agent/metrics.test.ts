import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { create, toBinary } from '@bufbuild/protobuf';
import { durationFromMs } from '@bufbuild/protobuf/wkt';
import { Code } from '@connectrpc/connect';
import { register as globalRegistry } from 'prom-client';
import {
  AccountInfoSchema,
  AckSchema,
  ConnectRequestSchema,
  ConnectResponseSchema,
  EventBatchSchema,
  EventSchema,
  EventType,
  HelloSchema,
  SyncMarkerSchema,
  SyncPhase,
} from '../../src/gen/outpost/agent/v1/agent_pb.js';
import { OperationResultSchema, OperationSchema } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { kubeVerb } from '../../src/agent/kube/request-verb.js';
import { createAgentMetrics } from '../../src/agent/metrics/agent-metrics.js';
import { wireSize } from '../../src/agent/stream/wire-size.js';
import { dataMessages } from './helpers/fake-gateway.js';
import { endMarkers, eventsOf, startHarness, type Harness } from './helpers/harness.js';
import { eventually } from '../../testkit/eventually.js';

/** Scrapes the agent's /metrics: every sample by its series (`name{label="v",…}`). */
async function scrape(h: Harness): Promise<Map<string, number>> {
  const res = await fetch(`http://127.0.0.1:${h.agent.metricsPort}/metrics`);
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
  const samples = new Map<string, number>();
  for (const line of (await res.text()).split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

/** Scrapes the metrics until `predicate` holds (testkit's `eventually`). */
function scrapeUntil(
  h: Harness,
  predicate: (m: Map<string, number>) => boolean,
  what: string,
  timeoutMs?: number,
): Promise<Map<string, number>> {
  return eventually(
    what,
    async () => {
      const metrics = await scrape(h);
      return predicate(metrics) && metrics;
    },
    { timeoutMs },
  );
}

const m = (metrics: Map<string, number>, series: string) => metrics.get(`outpost_agent_${series}`) ?? 0;
const requests = (metrics: Map<string, number>, verb: string, code: string) =>
  m(metrics, `kubernetes_requests_total{verb="${verb}",code="${code}"}`);
/** Bytes of the data messages the fake gateway received, encoded. */
const bytesReceived = (h: Harness) =>
  dataMessages(h.gateway.messages).reduce((sum, msg) => sum + toBinary(ConnectRequestSchema, msg).length, 0);
const configMap = (name: string) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'demo' },
  data: { payload: 'é'.repeat(50) },
});

describe('agent metrics: pieces', () => {
  test('Kubernetes verbs are named as the API server names them', () => {
    const cases: Array<[string, string, Record<string, string | boolean>?, string?, string?]> = [
      ['GET', '/api/v1/namespaces/demo/configmaps', {}, undefined, 'list'],
      ['GET', '/api/v1/configmaps', { limit: '500' }, undefined, 'list'],
      ['GET', '/api/v1/namespaces/demo/configmaps', { watch: true }, undefined, 'watch'],
      ['GET', '/apis/apps/v1/deployments', { watch: 'true' }, undefined, 'watch'],
      ['GET', '/apis/apps/v1/namespaces/demo/deployments/web', {}, undefined, 'get'],
      ['GET', '/api/v1/namespaces/demo/pods/web-1/log', {}, undefined, 'get'],
      ['GET', '/api/v1/namespaces', {}, undefined, 'list'],
      ['GET', '/api/v1/namespaces/demo', {}, undefined, 'get'],
      ['GET', '/version', {}, undefined, 'get'],
      ['GET', '/apis/apps/v1', {}, undefined, 'get'],
      ['GET', '/apis', {}, undefined, 'get'],
      ['POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {}, 'application/json', 'create'],
      ['PUT', '/apis/apps/v1/namespaces/demo/deployments/web/scale', {}, 'application/json', 'update'],
      ['PATCH', '/apis/apps/v1/namespaces/demo/deployments/web', {}, 'application/strategic-merge-patch+json', 'patch'],
      ['PATCH', '/apis/apps/v1/namespaces/demo/deployments/web', { fieldManager: 'outpost' }, 'application/apply-patch+yaml', 'apply'],
      ['DELETE', '/api/v1/namespaces/demo/configmaps/x', {}, undefined, 'delete'],
      ['DELETE', '/api/v1/namespaces/demo/configmaps', {}, undefined, 'deletecollection'],
    ];
    for (const [method, path, query, contentType, verb] of cases)
      assert.equal(kubeVerb(method, path, query, contentType), verb, `${method} ${path}`);
  });

  test('wire size equals the encoded size of real messages (events with multi-byte text, markers, maps, nested results)', () => {
    const event = (i: number) =>
      create(EventSchema, {
        account: 'a',
        type: i % 2 ? EventType.MODIFIED : EventType.ADDED,
        apiVersion: 'v1',
        kind: i % 3 ? 'ConfigMap' : 'Secret',
        namespace: 'démo',
        name: `n-${i}`,
        uid: 'u'.repeat(36),
        resourceVersion: String(1e9 + i),
        objectJson: Buffer.from(JSON.stringify({ data: 'ü'.repeat(i * 40) })),
        watchNamespace: i % 2 ? '' : 'démo',
      });
    const messages = [
      create(ConnectRequestSchema, {
        message: {
          case: 'events',
          value: create(EventBatchSchema, { sequence: 2n ** 40n, events: Array.from({ length: 30 }, (_, i) => event(i)) }),
        },
      }),
      create(ConnectRequestSchema, { message: { case: 'events', value: create(EventBatchSchema, { sequence: 1n, events: [] }) } }),
      create(ConnectRequestSchema, {
        message: {
          case: 'sync',
          value: create(SyncMarkerSchema, { sequence: 7n, account: 'a', kind: 'K', phase: SyncPhase.END, count: 123_456_789n }),
        },
      }),
      create(ConnectRequestSchema, { message: { case: 'sync', value: create(SyncMarkerSchema, {}) } }),
      create(ConnectRequestSchema, {
        message: {
          case: 'hello',
          value: create(HelloSchema, {
            agentId: 'x',
            replicas: 3,
            accounts: [create(AccountInfoSchema, { name: 'a', properties: { team: 'web' } })],
          }),
        },
      }),
      create(ConnectRequestSchema, {
        message: {
          case: 'operationResult',
          value: create(OperationResultSchema, {
            id: 'op',
            success: true,
            statusCode: 200,
            duration: durationFromMs(1234.5),
            kubernetesDuration: durationFromMs(0),
          }),
        },
      }),
    ];
    for (const message of messages)
      assert.equal(wireSize(ConnectRequestSchema, message), toBinary(ConnectRequestSchema, message).length, message.message.case);
  });

  test('events_sent_total counts changes only: bookmarks are not events', async () => {
    const metrics = createAgentMetrics({ connected: () => true, watchesOpen: () => 1, unackedBatches: () => 0 });
    const ev = (type: EventType, kind: string) => create(EventSchema, { account: 'a', type, apiVersion: 'v1', kind, resourceVersion: '5' });
    const batch = [
      ev(EventType.BOOKMARK, 'ConfigMap'),
      ev(EventType.ADDED, 'ConfigMap'),
      ev(EventType.BOOKMARK, 'Pod'),
      ev(EventType.DELETED, 'ConfigMap'),
      ev(EventType.BOOKMARK, 'ConfigMap'),
    ];
    metrics.dataSent(
      create(ConnectRequestSchema, { message: { case: 'events', value: create(EventBatchSchema, { sequence: 1n, events: batch }) } }),
    );
    const { body } = await metrics.scrape();
    assert.match(body, /^outpost_agent_events_sent_total\{kind="ConfigMap"\} 2$/m);
    assert.doesNotMatch(body, /events_sent_total\{kind="Pod"\}/, 'a kind with only bookmarks has no changes');
  });

  test('each agent has its own registry: two agents never collide, and nothing lands in the global one', async () => {
    const sources = { connected: () => true, watchesOpen: () => 3, unackedBatches: () => 2 };
    const one = createAgentMetrics(sources);
    const two = createAgentMetrics({ ...sources, connected: () => false });
    one.kubeRequest('list', '200');
    const [a, b] = await Promise.all([one.scrape(), two.scrape()]);
    assert.match(a.body, /^outpost_agent_connected 1$/m);
    assert.match(b.body, /^outpost_agent_connected 0$/m);
    assert.match(a.body, /^outpost_agent_kubernetes_requests_total\{verb="list",code="200"\} 1$/m);
    assert.doesNotMatch(b.body, /verb="list"/);
    assert.match(a.body, /^outpost_agent_watches_open 3$/m);
    assert.match(a.body, /^outpost_agent_unacked_batches 2$/m);
    assert.doesNotMatch(await globalRegistry.metrics(), /outpost_agent_/);
  });
});

describe('agent metrics against the sandbox and the fake gateway', () => {
  test('events, bytes and Kubernetes requests grow with traffic; unacked batches follow the window; connected 1 → 0 → 1 and disconnections count on a dropped stream', async () => {
    // While set, the fake gateway refuses new streams (so "not connected" lasts long enough to be scraped).
    let refuseStreams = false;
    const h = await startHarness({
      seed: 'demo',
      account: { kinds: ['ConfigMap', 'Deployment'] },
      gateway: { welcome: () => (refuseStreams ? { refuse: { code: Code.Unavailable, message: 'not now' } } : {}) },
    });
    try {
      assert.ok(
        h.agent.metricsPort !== undefined && h.agent.metricsPort !== 8008,
        'an ephemeral metrics port next to an ephemeral admin port',
      );
      await eventually(
        'initial lists',
        () => endMarkers(h.gateway.messages, 'ConfigMap').length === 1 && endMarkers(h.gateway.messages, 'Deployment').length === 1,
        { timeoutMs: 30_000 },
      );
      // Every data message received and acknowledged (the fake gateway's acks travel back after it received them).
      const before = await scrapeUntil(
        h,
        (x) => m(x, 'watches_open') === 2 && m(x, 'bytes_sent_total') === bytesReceived(h) && m(x, 'unacked_batches') === 0,
        'watches open and every data message received and acknowledged',
      );
      assert.equal(m(before, 'connected'), 1);
      assert.equal(m(before, 'disconnections_total'), 0);
      assert.equal(m(before, 'unacked_batches'), 0);
      const listedConfigMaps = eventsOf(h.gateway.messages).filter((e) => e.kind === 'ConfigMap' && e.type !== EventType.BOOKMARK).length;
      assert.ok(listedConfigMaps > 0);
      assert.equal(m(before, 'events_sent_total{kind="ConfigMap"}'), listedConfigMaps);
      assert.equal(
        m(before, 'events_sent_total{kind="Deployment"}'),
        eventsOf(h.gateway.messages).filter((e) => e.kind === 'Deployment' && e.type !== EventType.BOOKMARK).length,
      );
      // Preparation and the watch pipeline: /version and discovery (get), access reviews (create), lists and watches.
      assert.ok(requests(before, 'get', '200') > 0, 'discovery');
      assert.ok(requests(before, 'create', '201') >= 2, 'one access review per scope');
      assert.ok(requests(before, 'list', '200') >= 2, 'one list per scope');
      assert.ok(requests(before, 'watch', '200') >= 2, 'one watch per scope');
      assert.ok(m(before, 'process_cpu_user_seconds_total') > 0, 'default process metrics on the same registry');
      assert.ok(before.has('outpost_agent_nodejs_heap_size_used_bytes'));

      // Traffic: five ConfigMaps, a get operation that finds its object and one that does not.
      for (let i = 0; i < 5; i++) h.sandbox.store.create(configMap(`metrics-${i}`));
      await eventually('the five events', () => eventsOf(h.gateway.messages).filter((e) => e.name.startsWith('metrics-')).length === 5, {
        timeoutMs: 30_000,
      });
      const get = (id: string, name: string) =>
        h.gateway.sendOperation(
          create(OperationSchema, {
            id,
            account: 'sandbox',
            timeout: durationFromMs(30_000),
            spec: { case: 'get', value: { kind: 'ConfigMap', namespace: 'demo', name } as never },
          }),
        );
      get('found', 'metrics-0');
      get('missing', 'no-such-map');
      await h.gateway.waitForResult('found');
      await h.gateway.waitForResult('missing');
      const after = await scrapeUntil(h, (x) => m(x, 'bytes_sent_total') === bytesReceived(h), 'bytes of every data message');
      // Exactly what crossed the wire (a watch restarted under load may have sent some objects again).
      const receivedConfigMaps = eventsOf(h.gateway.messages).filter((e) => e.kind === 'ConfigMap' && e.type !== EventType.BOOKMARK).length;
      assert.ok(receivedConfigMaps >= listedConfigMaps + 5);
      assert.equal(m(after, 'events_sent_total{kind="ConfigMap"}'), receivedConfigMaps);
      assert.ok(m(after, 'bytes_sent_total') > m(before, 'bytes_sent_total'));
      assert.ok(requests(after, 'get', '200') > requests(before, 'get', '200'), 'the get operation');
      assert.equal(requests(after, 'get', '404') - requests(before, 'get', '404'), 1, 'the missing object');

      // Withheld acks: the window fills and unacked_batches shows it; an ack empties it.
      h.gateway.autoAck = false;
      h.sandbox.store.create(configMap('unacked'));
      await scrapeUntil(h, (x) => m(x, 'unacked_batches') >= 1, 'an unacknowledged batch');
      h.gateway.autoAck = true;
      h.gateway.streams[0]!.send(
        create(ConnectResponseSchema, { message: { case: 'ack', value: create(AckSchema, { sequence: 1_000_000n }) } }),
      );
      await scrapeUntil(h, (x) => m(x, 'unacked_batches') === 0, 'the window emptied by the ack');

      // The gateway drops the stream and refuses new ones for a while: connected 0 and one disconnection (refused
      // attempts were never connected, so they are not disconnections); then the agent is welcomed again.
      refuseStreams = true;
      h.gateway.streams[0]!.drop();
      await scrapeUntil(h, (x) => m(x, 'connected') === 0 && m(x, 'disconnections_total') === 1, 'connected 0 after the drop');
      await eventually('refused reconnection attempts', () => h.gateway.streams.length >= 3, { timeoutMs: 30_000 });
      refuseStreams = false;
      const reconnected = await scrapeUntil(h, (x) => m(x, 'connected') === 1, 'connected again');
      assert.equal(m(reconnected, 'disconnections_total'), 1);

      const notMetrics = await fetch(`http://127.0.0.1:${h.agent.metricsPort}/status`);
      assert.equal(notMetrics.status, 404);
      assert.equal(((await notMetrics.json()) as { error: string }).error, 'not_found');
      assert.equal((await fetch(`http://127.0.0.1:${h.agent.metricsPort}/metrics`, { method: 'POST' })).status, 405);
    } finally {
      await h.close();
    }
  });

  test('prometheus.enabled false: no metrics port', async () => {
    const h = await startHarness({ seed: 'none', account: { kinds: ['Namespace'] }, config: { prometheus: { enabled: false } } });
    try {
      assert.equal(h.agent.metricsPort, undefined);
    } finally {
      await h.close();
    }
  });
});
