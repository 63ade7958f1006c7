/**
 * The gateway's Prometheus endpoint: scraped before and after traffic over a real agent stream and real operations,
 * the numbers move (agents connected, accounts by state, events ingested by kind, batch and lag histograms,
 * operations by type and state, replicas known).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { EventType, SyncPhase, configMap, connectAgent, event, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

/** The account as the test's Hello describes it (see helpers.hello). */
const accountInfo = () => ({
  name: 'metrics-acct',
  apiHost: 'https://cluster-metrics-acct:6443',
  caFingerprint: 'ab'.repeat(32),
  kubernetesVersion: 'v1.30.0',
  kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
});
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';
import { startOperationAgent } from './operations-helpers.js';
import { eventually } from '../../testkit/eventually.js';
import { MAX_KIND_LABELS } from '../../src/gateway/metrics/kind-label.js';

/** The value of one sample (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels = ''): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels} `) || (labels === '' && l.startsWith(`${name} `)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('gateway metrics', () => {
  let t: TestGateway;
  const scrape = async () => {
    const res = await fetch(`${t.gateway.httpUrl}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/plain/);
    return res.text();
  };
  before(async () => {
    t = await startTestGateway('pglite', { id: 'gw-metrics' });
  });
  after(async () => {
    await t?.close();
  });

  test('agents, accounts, events, batches and operations move with traffic', async () => {
    const before_ = await scrape();
    assert.equal(sample(before_, 'outpost_gateway_connected_agents'), 0);
    assert.match(before_, /# TYPE outpost_gateway_ingest_lag_seconds histogram/);
    assert.ok(before_.includes('outpost_gateway_process_resident_memory_bytes'), 'process metrics');

    const stream = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(stream, 'agent-m', [{ name: 'metrics-acct' }]);
    stream.send({
      case: 'sync',
      value: { sequence: 1n, account: 'metrics-acct', apiVersion: 'v1', kind: 'ConfigMap', phase: SyncPhase.START },
    });
    stream.send({
      case: 'accountReport',
      value: { account: accountInfo(), progress: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: '', listed: 250n, done: false }] },
    });
    await stream.waitForAck(1);
    await eventually('250 listed objects counted', async () => sample(await scrape(), 'outpost_gateway_sync_objects_listed') === 250);
    const listing = await scrape();
    assert.equal(sample(listing, 'outpost_gateway_sync_scopes', '{state="listing"}'), 1);
    stream.send({
      case: 'sync',
      value: {
        sequence: 2n,
        account: 'metrics-acct',
        apiVersion: 'v1',
        kind: 'ConfigMap',
        phase: SyncPhase.END,
        resourceVersion: '1',
        count: 0n,
      },
    });
    await stream.waitForAck(2);
    const synced = await scrape();
    assert.equal(sample(synced, 'outpost_gateway_sync_scopes', '{state="synced"}'), 1);
    assert.equal(sample(synced, 'outpost_gateway_sync_objects_listed'), 0);
    stream.send({
      case: 'events',
      value: {
        sequence: 3n,
        events: [event('metrics-acct', EventType.ADDED, configMap('a', 1)), event('metrics-acct', EventType.ADDED, configMap('b', 2))],
      },
    });
    stream.send({ case: 'events', value: { sequence: 4n, events: [event('metrics-acct', EventType.DELETED, configMap('a', 3))] } });
    await stream.waitForAck(4);
    const mid = await scrape();
    assert.equal(sample(mid, 'outpost_gateway_connected_agents'), 1);
    assert.equal(sample(mid, 'outpost_gateway_accounts', '{state="ACTIVE"}'), 1);
    assert.equal(sample(mid, 'outpost_gateway_events_ingested_total', '{kind="ConfigMap"}'), 3);
    assert.equal(sample(mid, 'outpost_gateway_event_batches_total'), 2);
    assert.equal(sample(mid, 'outpost_gateway_ingest_lag_seconds_count'), 2);
    assert.equal(sample(mid, 'outpost_gateway_db_batch_seconds_count'), 2);
    stream.end();
    await stream.ended;

    const agent = await startOperationAgent(t.gateway.grpcUrl, 'agent-ops', ['metrics-ops']);
    const client = createClient(OperationService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
    for (let i = 0; i < 3; i++) {
      const r = await client.submitOperation({
        account: 'metrics-ops',
        wait: true,
        spec: { case: 'patch', value: { kind: 'ConfigMap', name: `x${i}`, type: PatchType.MERGE, patch: '{"data":{}}' } },
      });
      assert.equal(r.operation?.state, OperationState.SUCCEEDED);
    }
    // A read is counted apart: it is no stored operation.
    const read = await client.submitOperation({ account: 'metrics-ops', spec: { case: 'get', value: { kind: 'ConfigMap', name: 'x0' } } });
    assert.equal(read.operation?.state, OperationState.SUCCEEDED);
    const end = await scrape();
    assert.equal(sample(end, 'outpost_gateway_operations_total', '{type="patch",state="SUCCEEDED"}'), 3);
    assert.equal(sample(end, 'outpost_gateway_operation_seconds_count', '{type="patch"}'), 3);
    assert.equal(sample(end, 'outpost_gateway_reads_total', '{type="get",via="local",state="SUCCEEDED"}'), 1);
    assert.equal(sample(end, 'outpost_gateway_read_seconds_count', '{type="get",via="local"}'), 1);
    assert.equal(sample(end, 'outpost_gateway_accounts', '{state="INACTIVE"}'), 1, 'the first account went INACTIVE when its stream ended');
    assert.equal(sample(end, 'outpost_gateway_replicas_known'), 1);
    await agent.close();
  });

  test('events of ever new kinds keep a bounded number of series (the rest, and no-kind strings, count as "other")', async () => {
    // An agent may send any string as a kind, and every new label value was a series kept until the gateway stopped:
    // events of ever new kinds grew the gateway's memory without bound (found looking for the hostile-input finding's
    // class of bug). The first MAX_KIND_LABELS kind names keep a series of their own, the rest share "other".
    const stream = openAgentStream(t.gateway.grpcUrl);
    await connectAgent(stream, 'agent-kinds', [{ name: 'kinds-acct' }]);
    const kinds = [...Array.from({ length: MAX_KIND_LABELS + 100 }, (_, i) => `Kind${i}`), 'K'.repeat(10_000), 'Not a kind'];
    const perBatch = 100;
    for (let i = 0; i < kinds.length; i += perBatch) {
      const batch = kinds
        .slice(i, i + perBatch)
        .map((kind, j) => event('kinds-acct', EventType.ADDED, { ...configMap(`o${i + j}`, 1), kind }));
      stream.send({ case: 'events', value: { sequence: BigInt(i / perBatch + 1), events: batch } });
    }
    await stream.waitForAck(Math.ceil(kinds.length / perBatch));
    const text = await scrape();
    const series = text.split('\n').filter((l) => l.startsWith('outpost_gateway_events_ingested_total{'));
    // the first test's ConfigMap events took one of the named series
    assert.equal(series.length, MAX_KIND_LABELS + 1, 'MAX_KIND_LABELS named series and "other"');
    const named = MAX_KIND_LABELS - 1;
    assert.equal(sample(text, 'outpost_gateway_events_ingested_total', `{kind="Kind${named - 1}"}`), 1);
    assert.equal(sample(text, 'outpost_gateway_events_ingested_total', `{kind="Kind${named}"}`), 0);
    assert.equal(sample(text, 'outpost_gateway_events_ingested_total', '{kind="other"}'), kinds.length - named);
    assert.ok(!text.includes('K'.repeat(100)), 'a 10 000-character kind is no label');
    stream.end();
    await stream.ended;
  });
});
