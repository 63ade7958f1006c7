/**
 * "The reference agent passes the same suite": the positive paths of the page, run once with the conformance mini
 * agent and once with Outpost's own agent, each behind the HTTP/2 recorder so one set of transcript rules
 * (transcript-rules.ts) judges what crossed the wire, plus end-state checks through the gateway's APIs: the cache
 * equals the sandbox cluster. Each agent caches 500 ConfigMaps, a Secret and a Deployment of its own sandbox; the steps
 * run in order (each builds on the last) and the two agents run side by side.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startH2Recorder, type H2Recorder, type RecordedStream } from './h2-recorder.js';
import {
  cachedVersions,
  clusterVersions,
  objectClient,
  operationClient,
  SCENARIO_KINDS,
  startReferenceAgent,
  startScenarioCluster,
  versionDiff,
  type ScenarioCluster,
} from './harness.js';
import { createMiniAgent, type MiniAgent } from './mini-agent.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { checkTranscript, countEvents, unacknowledged } from './transcript-rules.js';
import { eventually } from '../../testkit/eventually.js';

const OBJECTS = 500;

describe('both agents follow the page on the positive paths (sections 2–8)', { concurrency: true }, () => {
  let t: TestGateway;
  before(async () => {
    t = await startTestGateway('pglite', {
      agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 15 },
      operations: { agentWaitSeconds: 10, sweepIntervalMs: 100, defaultTimeoutSeconds: 20 },
    });
  });
  after(async () => {
    await t?.close();
  });

  for (const kind of ['mini', 'reference'] as const) {
    describe(`the ${kind} agent`, { concurrency: false }, () => {
      const account = `conf-${kind}`;
      let cluster: ScenarioCluster;
      let recorder: H2Recorder;
      let mini: MiniAgent | undefined;
      let stop: () => Promise<void> = async () => {};
      /** Streams that got a Welcome, in order. */
      const welcomed = (): RecordedStream[] =>
        recorder.streams.filter((s) => s.entries.some((e) => e.dir === 'gateway' && e.message.message.case === 'welcome'));
      const current = () => welcomed().at(-1)!;
      const converged = async () =>
        versionDiff(await cachedVersions(t.gateway.grpcUrl, account), clusterVersions(cluster.sandbox, SCENARIO_KINDS)).length === 0;
      const eventsTotal = async () =>
        Number((await t.query<{ n: string | number }>(`select events_total as n from accounts where name = '${account}'`))[0]?.n ?? 0);
      /** Waits until everything the agent sent on its current stream is acknowledged. */
      const settled = () => eventually('every data message acknowledged', () => unacknowledged(current()) === 0n);
      const ops = () => operationClient(t.gateway.grpcUrl);
      let bumpedRv = 0;

      before(async () => {
        cluster = await startScenarioCluster(OBJECTS);
        recorder = await startH2Recorder(t.gateway.grpcUrl);
        if (kind === 'mini') {
          mini = createMiniAgent({
            grpcUrl: recorder.url,
            agentId: `${kind}-agent`,
            accounts: [{ name: account, kube: cluster.kube, kinds: SCENARIO_KINDS }],
          });
          await mini.start();
          stop = () => mini!.close();
        } else {
          const agent = await startReferenceAgent(cluster, recorder.address, {
            id: `${kind}-agent`,
            account,
            kinds: ['ConfigMap', 'Secret', 'Deployment.apps'],
          });
          stop = () => agent.close();
        }
      });
      after(async () => {
        await stop();
        await recorder?.close();
        await cluster?.close();
      });

      test(`lists every scope (START, ${OBJECTS} ConfigMaps, a Secret and a Deployment as ADDED, END with the count): the cache equals the cluster`, async () => {
        await eventually('the cache equals the cluster', converged, { timeoutMs: 30_000 });
        const first = checkTranscript([welcomed()[0]!]).summary;
        assert.deepEqual([...first.listed[0]!].sort(), [
          `${account}/apps/v1/Deployment/`,
          `${account}/v1/ConfigMap/`,
          `${account}/v1/Secret/`,
        ]);
        const cached = await cachedVersions(t.gateway.grpcUrl, account);
        assert.equal([...cached.keys()].filter((k) => k.startsWith('v1/ConfigMap/')).length, OBJECTS);
      });

      test('never sends Secret data: the cached Secret has neither data nor the last-applied annotation', async () => {
        const got = await objectClient(t.gateway.grpcUrl).getObject({ account, kind: 'Secret', namespace: 'conf', name: 'creds' });
        const obj = got.object!.object as Record<string, any>;
        assert.equal(obj.data, undefined);
        assert.deepEqual(obj.metadata.annotations, { keep: 'me' });
        for (const s of recorder.streams) {
          for (const e of s.entries)
            if (e.dir === 'agent')
              assert.ok(
                !JSON.stringify(e.message, (_k, v) =>
                  v instanceof Uint8Array ? Buffer.from(v).toString() : typeof v === 'bigint' ? String(v) : v,
                ).includes(Buffer.from('hunter2').toString('base64')),
              );
        }
      });

      test('forwards watch events (created, modified, deleted objects): the cache follows the cluster', async () => {
        cluster.sandbox.store.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'created-later', namespace: 'conf' },
          data: { a: '1' },
        });
        const one = cluster.sandbox.store.get('v1', 'ConfigMap', 'conf', 'cm-0001')!;
        cluster.sandbox.store.update({ ...one, data: { changed: 'yes' } });
        cluster.sandbox.store.remove('v1', 'ConfigMap', 'conf', 'cm-0002');
        await eventually('the cache follows the cluster', converged);
      });

      test('forwards bookmarks: they move the resume point and are not counted as events', async () => {
        // Let the Deployment's controllers finish, so that only bookmarks flow.
        await eventually(
          'the Deployment is ready',
          () => Number((cluster.sandbox.store.get('apps/v1', 'Deployment', 'conf', 'web')?.status as any)?.readyReplicas ?? 0) === 1,
        );
        await eventually('the cache equals the cluster', converged);
        await settled();
        const before = { total: await eventsTotal(), ...countEvents(recorder.streams, account) };
        // Move the cluster's resourceVersion without touching a cached kind: the next bookmarks carry it.
        for (let i = 0; i < 3; i++)
          cluster.sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bump-${kind}-${i}` } });
        bumpedRv = cluster.sandbox.store.resourceVersion;
        await eventually("a ConfigMap BOOKMARK at the new cluster version (forward the API server's bookmarks, section 4)", () =>
          countEvents(recorder.streams, account).bookmarks.some((b) => b.kind === 'ConfigMap' && Number(b.resourceVersion) >= bumpedRv),
        );
        await settled();
        const afterCount = { total: await eventsTotal(), ...countEvents(recorder.streams, account) };
        assert.ok(afterCount.bookmarks.length > before.bookmarks.length, 'bookmarks were sent');
        assert.equal(
          afterCount.total - before.total,
          afterCount.changes - before.changes,
          'events_total counts the changes sent, not the bookmarks',
        );
      });

      test("a cut connection resumes the session (the last Welcome's pair) and watches from the resume points without a list", async () => {
        const before = welcomed().length;
        const lastWelcome = current().entries.find((e) => e.dir === 'gateway' && e.message.message.case === 'welcome')!.message.message
          .value as { sessionId: string; sessionToken: string };
        recorder.cutAll();
        // A change while the agent reconnects: the watch from the resume point must bring it.
        cluster.sandbox.store.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'created-while-away', namespace: 'conf' },
          data: { a: '1' },
        });
        await eventually('a new welcomed stream', () => welcomed().length > before);
        const next = current();
        const hello = next.entries.find((e) => e.dir === 'agent')!.message.message;
        assert.equal(hello.case, 'hello');
        if (hello.case === 'hello') {
          assert.equal(hello.value.resumeSessionId, lastWelcome.sessionId);
          assert.equal(hello.value.resumeSessionToken, lastWelcome.sessionToken);
        }
        const { summary } = checkTranscript([next]);
        const offered = summary.welcomes[0]!.accounts[0]!.resume;
        assert.equal(offered.length, 3, 'every scope is synced and fresh: three resume points');
        const cmPoint = offered.find((p) => p.kind === 'ConfigMap')!;
        assert.ok(
          Number(cmPoint.resourceVersion) >= bumpedRv,
          `the ConfigMap resume point ${cmPoint.resourceVersion} comes from a bookmark (≥ ${bumpedRv})`,
        );
        await eventually('the cache equals the cluster after the resume', converged);
        assert.deepEqual(checkTranscript([current()]).summary.listed[0], [], 'no scope listed again');
      });

      test('answers operations with results shaped per type (get, list, scale via the scale subresource, patch, delete, a failure)', async () => {
        const client = ops();
        const submit = async (spec: Parameters<typeof client.submitOperation>[0]['spec']) =>
          (await client.submitOperation({ account, spec, wait: true, timeout: { seconds: 20n } })).operation!;
        const get = await submit({ case: 'get', value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'cm-0003' } });
        assert.equal(get.state, OperationState.SUCCEEDED, get.error || get.result?.message);
        assert.equal((get.result!.objects[0]!.metadata as any).name, 'cm-0003');

        const list = await submit({
          case: 'list',
          value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', labelSelector: 'shard=1', limit: 10 },
        });
        assert.equal(list.state, OperationState.SUCCEEDED, list.error || list.result?.message);
        assert.ok(list.result!.objects.length > 0 && list.result!.objects.length <= 10);
        assert.ok(list.result!.objects.every((o) => o.apiVersion === 'v1' && o.kind === 'ConfigMap'));

        const scale = await submit({
          case: 'scale',
          value: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'conf', name: 'web', replicas: 3 },
        });
        assert.equal(scale.state, OperationState.SUCCEEDED, scale.error || scale.result?.message);
        assert.equal(scale.result!.objects[0]!.kind, 'Scale');
        assert.equal((cluster.sandbox.store.get('apps/v1', 'Deployment', 'conf', 'web')!.spec as any).replicas, 3);

        const patch = await submit({
          case: 'patch',
          value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'cm-0004', type: 2, patch: '{"data":{"patched":"yes"}}' },
        });
        assert.equal(patch.state, OperationState.SUCCEEDED, patch.error || patch.result?.message);
        assert.equal((cluster.sandbox.store.get('v1', 'ConfigMap', 'conf', 'cm-0004')!.data as any).patched, 'yes');

        const del = await submit({ case: 'delete', value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'cm-0005' } });
        assert.equal(del.state, OperationState.SUCCEEDED, del.error || del.result?.message);
        assert.deepEqual(del.result!.deleted, ['ConfigMap/conf/cm-0005']);
        assert.equal(cluster.sandbox.store.get('v1', 'ConfigMap', 'conf', 'cm-0005'), undefined);

        const secret = await submit({ case: 'get', value: { apiVersion: 'v1', kind: 'Secret', namespace: 'conf', name: 'creds' } });
        assert.equal(secret.state, OperationState.SUCCEEDED);
        assert.equal((secret.result!.objects[0] as any).data, undefined);

        const missing = await submit({
          case: 'get',
          value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'no-such-thing' },
        });
        assert.equal(missing.state, OperationState.FAILED);
        assert.equal(missing.result?.reason, 'NotFound');
        assert.equal(missing.result?.statusCode, 404);
        await eventually('the operations show in the cache', converged);
      });

      test('a result that waits while the stream is down goes out on the resumed session, and the operation runs once', async () => {
        const client = ops();
        // A stored operation (reads are not stored, so not redelivered): a merge patch of one ConfigMap.
        const resumedPatch = {
          case: 'patch' as const,
          value: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'conf', name: 'cm-0006', type: 2, patch: '{"data":{"resumed":"yes"}}' },
        };
        const before = welcomed().length;
        cluster.sandbox.faults.pause();
        let paused = true;
        try {
          const { operation } = await client.submitOperation({
            account,
            spec: resumedPatch,
            timeout: { seconds: 20n },
          });
          const id = operation!.id;
          await eventually('the operation reached the agent', () =>
            current().entries.some(
              (e) => e.dir === 'gateway' && e.message.message.case === 'operation' && e.message.message.value.id === id,
            ),
          );
          recorder.cutAll();
          await eventually('a new welcomed stream', () => welcomed().length > before);
          cluster.sandbox.faults.resume();
          paused = false;
          const done = (
            await client.submitOperation({
              account,
              id,
              spec: resumedPatch,
              timeout: { seconds: 20n },
              wait: true,
            })
          ).operation!;
          assert.equal(done.state, OperationState.SUCCEEDED, done.error || done.result?.message);
          const answeredOn = welcomed().findIndex((s) =>
            s.entries.some((e) => e.dir === 'agent' && e.message.message.case === 'operationResult' && e.message.message.value.id === id),
          );
          assert.ok(answeredOn >= before, 'answered on the resumed session');
          if (mini) assert.equal(mini.runs.get(id), 1, 'ran once');
        } finally {
          if (paused) cluster.sandbox.faults.resume();
        }
      });

      test('the whole transcript follows the page (sequences, accounts, lists, events, bookmarks, results, no Secret data, heartbeats) and the cache equals the cluster', async () => {
        await eventually('the cache equals the cluster', converged);
        // Heartbeats go out once a second: on a fast run every session so far may have been shorter than that.
        const beats = (side: 'agentHeartbeats' | 'gatewayHeartbeats') =>
          checkTranscript(welcomed()).summary[side].reduce((a, b) => a + b, 0);
        await eventually('a heartbeat each way', () => beats('agentHeartbeats') > 0 && beats('gatewayHeartbeats') > 0);
        const { violations, summary } = checkTranscript(welcomed(), { resumeWithoutList: true });
        assert.deepEqual(violations, []);
        assert.ok(summary.agentHeartbeats.reduce((a, b) => a + b, 0) > 0, 'the agent sent heartbeats');
        assert.ok(summary.gatewayHeartbeats.reduce((a, b) => a + b, 0) > 0, 'the gateway sent heartbeats');
        assert.ok(summary.results.length >= 7, 'results were recorded');
      });

      test('a watch that answers 410 Gone (the history expired) means a list: the scopes are listed again and the cache converges', async () => {
        const starts = () =>
          checkTranscript(welcomed())
            .summary.listed.flat()
            .filter((k) => k === `${account}/v1/ConfigMap/`).length;
        const before = starts();
        cluster.sandbox.faults.expireHistory();
        cluster.sandbox.store.create({
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: 'created-after-410', namespace: 'conf' },
          data: { a: '1' },
        });
        await eventually('the ConfigMap scope listed again', () => starts() > before);
        await eventually('the cache equals the cluster after the new list', converged);
        await settled();
        assert.deepEqual(checkTranscript(welcomed()).violations, []);
      });
    });
  }
});
