/**
 * Orca's manifest stages that change an existing object, end to end over real sockets: Orca's client (this test) →
 * gateway Clouddriver API → Outpost operations → agent → sandbox. Scale, patch (strategic, merge, json), undo rollout
 * (numRevisionsBack and revision), rolling restart, pause/resume, delete by name and by labels, a failing operation
 * (TERMINAL with Clouddriver's EXCEPTION object), a repeated clientRequestId (runs once), and the 400s that create no
 * task.
 * Runs on PGlite only: the database side of the Clouddriver API runs on both drivers in task-lifecycle.test.ts and
 * on Postgres in orca-forwarded.test.ts; these suites add the cluster path, the same on either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOperationClient, type OperationClient } from '../../src/client/operation-client.js';
import { OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

function deployment(name: string, image: string, replicas = 2, labels: Record<string, string> = {}): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: 'demo', labels: { app: name, ...labels } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }] } },
    },
  });
}

for (const driver of ['pglite'] as const) {
  describe(`Orca's update stages through the Clouddriver API (${driver})`, { concurrency: false }, () => {
    let system: Stack;
    let orca: OrcaClient;
    let client: OperationClient;
    const live = (name: string) => system.sandbox.store.get('apps/v1', 'Deployment', 'demo', name) as Obj | undefined;
    const apply = async (manifests: string) => {
      const record = await client.submitAndWait({
        account: 'sandbox',
        id: '',
        timeout: { seconds: 20n },
        spec: { case: 'apply', value: { manifests } },
      });
      assert.equal(record.state, OperationState.SUCCEEDED);
    };

    before(async () => {
      system = await startStack({ driver, agents: [{ id: 'agent-1', account: { name: 'sandbox' } }] });
      orca = createOrcaClient(system.gateway.httpUrl, { 'X-SPINNAKER-USER': 'alice@example.com', 'X-SPINNAKER-EXECUTION-ID': 'exec-1' });
      client = createOperationClient({ gatewayUrl: system.gateway.httpUrl });
    });
    after(async () => {
      await system?.close();
    });

    test('scale: the task completes with progress lines and no result object; the Deployment has the new replica count', async () => {
      await apply(deployment('orca-scale', 'nginx:1.25', 1));
      const outcome = await orca.run(
        'scaleManifest',
        {
          account: 'sandbox',
          cloudProvider: 'kubernetes',
          manifestName: 'deploy orca-scale',
          location: 'demo',
          replicas: '3',
          refId: '1',
          type: 'scaleManifest',
        },
        false,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.task.resultObjects, []);
      const lines = outcome.task.history.map((h: Obj) => h.status);
      assert.equal(lines[0], 'Initializing Orchestration Task');
      assert.ok(lines.includes('Processing op: KubernetesScaleManifestOperation'));
      assert.equal(lines.at(-1), 'Orchestration completed.');
      assert.deepEqual(outcome.task.status, {
        phase: 'ORCHESTRATION',
        status: 'Orchestration completed.',
        complete: true,
        completed: true,
        failed: false,
        retryable: false,
      });
      assert.equal(live('orca-scale')!.spec.replicas, 3);
    });

    test('patch: strategic, merge and json patches change the object; each result names it', async () => {
      await apply(deployment('orca-patch', 'nginx:1.25'));
      const base = { account: 'sandbox', manifestName: 'deployment orca-patch', location: 'demo' };
      let outcome = await orca.run(
        'patchManifest',
        { ...base, patchBody: { metadata: { labels: { tier: 'front' } } }, options: { mergeStrategy: 'strategic', record: true } },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: ['deployment orca-patch'] });
      assert.equal(outcome.outputs.manifests?.[0]?.metadata.labels.tier, 'front');
      outcome = await orca.run(
        'patchManifest',
        { ...base, patchBody: { spec: { replicas: 4 } }, options: { mergeStrategy: 'merge' } },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED');
      outcome = await orca.run(
        'patchManifest',
        {
          ...base,
          patchBody: [{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'nginx:1.27' }],
          options: { mergeStrategy: 'json' },
        },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED');
      const dep = live('orca-patch')!;
      assert.equal(dep.metadata.labels.tier, 'front');
      assert.equal(dep.spec.replicas, 4);
      assert.equal(dep.spec.template.spec.containers[0].image, 'nginx:1.27');
      // A strategic patch binds the stage's artifacts: the image named in the body becomes the artifact's reference.
      const image = { type: 'docker/image', name: 'nginx', reference: 'nginx:1.99' };
      outcome = await orca.run(
        'patchManifest',
        {
          ...base,
          patchBody: { spec: { template: { spec: { containers: [{ name: 'main', image: 'nginx' }] } } } },
          options: { mergeStrategy: 'strategic' },
          requiredArtifacts: [image],
          allArtifacts: [image],
        },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.equal(live('orca-patch')!.spec.template.spec.containers[0].image, 'nginx:1.99');
      assert.deepEqual(outcome.outputs.boundArtifacts, [image]);
    });

    test('undo rollout by numRevisionsBack and by revision; too far back fails the task with a clear message', async () => {
      await apply(deployment('orca-undo', 'nginx:1.0'));
      await apply(deployment('orca-undo', 'nginx:2.0'));
      await apply(deployment('orca-undo', 'nginx:3.0'));
      const image = () => live('orca-undo')!.spec.template.spec.containers[0].image;
      const base = { account: 'sandbox', manifestName: 'deployment orca-undo', location: 'demo' };
      let outcome = await orca.run('undoRolloutManifest', { ...base, numRevisionsBack: 1 }, false);
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.equal(image(), 'nginx:2.0');
      outcome = await orca.run('undoRolloutManifest', { ...base, revision: '1' }, false);
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.equal(image(), 'nginx:1.0');
      outcome = await orca.run('undoRolloutManifest', { ...base, numRevisionsBack: 9 }, false);
      assert.equal(outcome.status, 'TERMINAL');
      assert.match(outcome.exception!.message, /Can't rollback deployment orca-undo 9 revisions back: it has 3 revisions/);
      assert.equal(outcome.exception!.operation, 'KubernetesUndoRolloutManifestOperation');
    });

    test('rolling restart, pause and resume', async () => {
      await apply(deployment('orca-restart', 'nginx:1.25'));
      const base = { account: 'sandbox', manifestName: 'deployment orca-restart', location: 'demo' };
      assert.equal((await orca.run('rollingRestartManifest', base, false)).status, 'SUCCEEDED');
      assert.ok(live('orca-restart')!.spec.template.metadata.annotations['kubectl.kubernetes.io/restartedAt']);
      assert.equal((await orca.run('pauseRolloutManifest', base, false)).status, 'SUCCEEDED');
      assert.equal(live('orca-restart')!.spec.paused, true);
      assert.equal((await orca.run('resumeRolloutManifest', base, false)).status, 'SUCCEEDED');
      assert.ok(!live('orca-restart')!.spec.paused);
    });

    test('delete by name, by labels, and of an object already gone: each returns a result naming what was deleted', async () => {
      await apply(deployment('orca-del-a', 'nginx:1', 1));
      await apply(deployment('orca-del-b', 'nginx:1', 1, { purge: 'yes' }));
      await apply(deployment('orca-del-c', 'nginx:1', 1, { purge: 'yes' }));
      let outcome = await orca.run(
        'deleteManifest',
        { account: 'sandbox', manifestName: 'deployment orca-del-a', location: 'demo', options: { cascading: true } },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: ['deployment orca-del-a'] });
      assert.equal(live('orca-del-a'), undefined);
      outcome = await orca.run(
        'deleteManifest',
        {
          account: 'sandbox',
          manifestName: '',
          location: 'demo',
          kinds: ['deployment'],
          labelSelectors: { selectors: [{ kind: 'EQUALS', key: 'purge', values: ['yes'] }] },
          options: { cascading: 'true' },
        },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace?.demo?.sort(), ['deployment orca-del-b', 'deployment orca-del-c']);
      assert.equal(live('orca-del-b'), undefined);
      outcome = await orca.run('deleteManifest', { account: 'sandbox', manifestName: 'deployment orca-del-a', location: 'demo' }, true);
      assert.equal(outcome.status, 'SUCCEEDED');
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: [] });
    });

    test('disable and enable move a ReplicaSet out of and into a Service: template and running pods lose and regain its labels', async () => {
      const rs = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: {
          name: 'orca-rb-v000',
          namespace: 'demo',
          annotations: { 'traffic.spinnaker.io/load-balancers': '["service orca-rb"]' },
        },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'orca-rb', version: 'v000' } },
          template: {
            metadata: { labels: { app: 'orca-rb', version: 'v000', lb: 'orca-rb' } },
            spec: { containers: [{ name: 'main', image: 'nginx:1' }] },
          },
        },
      };
      const svc = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'orca-rb', namespace: 'demo' },
        spec: { selector: { lb: 'orca-rb' }, ports: [{ port: 80 }] },
      };
      await apply(`${JSON.stringify(rs)}\n---\n${JSON.stringify(svc)}`);
      const pods = () =>
        (system.sandbox.store.list('v1', 'Pod', 'demo') as Obj[]).filter(
          (p) => p.metadata.labels?.app === 'orca-rb' && !p.metadata.deletionTimestamp,
        );
      const liveRs = () => system.sandbox.store.get('apps/v1', 'ReplicaSet', 'demo', 'orca-rb-v000') as Obj;
      for (const deadline = Date.now() + 60_000; pods().length < 2; ) {
        assert.ok(Date.now() < deadline, 'the ReplicaSet starts its pods');
        await new Promise((r) => setTimeout(r, 25));
      }
      const base = { account: 'sandbox', manifestName: 'replicaSet orca-rb-v000', location: 'demo' };
      let outcome = await orca.run('disableManifest', base, false);
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.equal(liveRs().spec.template.metadata.labels.lb, undefined);
      assert.ok(pods().length >= 2 && pods().every((p) => p.metadata.labels.lb === undefined), 'running pods leave the service');
      outcome = await orca.run('enableManifest', { ...base, loadBalancers: ['service orca-rb'] }, false);
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.equal(liveRs().spec.template.metadata.labels.lb, 'orca-rb');
      assert.ok(
        pods().every((p) => p.metadata.labels.lb === 'orca-rb'),
        'running pods rejoin the service',
      );
      outcome = await orca.run('enableManifest', { ...base, loadBalancers: ['service missing'] }, false);
      assert.equal(outcome.status, 'TERMINAL');
      assert.match(outcome.exception!.message, /load balancer service missing does not exist/);
      const bad = await orca.post([{ enableManifest: { ...base, loadBalancers: ['deployment x'] } }]);
      assert.equal(bad.status, 400);
    });

    test('a failing operation ends the task TERMINAL with an EXCEPTION object and a failure line, never retryable', async () => {
      const outcome = await orca.run(
        'scaleManifest',
        { account: 'sandbox', manifestName: 'deployment no-such-thing', location: 'demo', replicas: 2 },
        false,
      );
      assert.equal(outcome.status, 'TERMINAL');
      assert.equal(outcome.exception!.type, 'EXCEPTION');
      assert.match(outcome.exception!.message, /no-such-thing/);
      assert.match(outcome.task.history.at(-1).status, /^Orchestration failed: KubernetesScaleManifestOperation \| /);
      assert.equal(outcome.task.status.retryable, false);
    });

    test('the same clientRequestId returns the same task and runs the operation once', async () => {
      await apply(deployment('orca-idem', 'nginx:1', 1));
      const ops = [{ scaleManifest: { account: 'sandbox', manifestName: 'deployment orca-idem', location: 'demo', replicas: 2 } }];
      const first = await orca.submit(ops, 'req-0123456789abcdef');
      const second = await orca.submit(ops, 'req-0123456789abcdef');
      assert.equal(second, first);
      const outcome = await orca.monitor(first, false);
      assert.equal(outcome.status, 'SUCCEEDED');
      assert.equal(await orca.submit(ops, 'req-0123456789abcdef'), first, 'also once it finished');
      const ran = (await client.raw.listOperations({ account: 'sandbox', pageSize: 500 })).operations.filter((o) =>
        o.id.startsWith(`${first}-`),
      );
      assert.equal(ran.length, 1, 'one Outpost operation ran for the task');
      assert.notEqual(await orca.submit(ops, 'another-request'), first);
    });

    test('bad submissions are 400s in Spring error shape and create no task', async () => {
      const before = (await client.raw.listOperations({ account: 'sandbox', pageSize: 500 })).operations.length;
      const cases: [unknown, RegExp][] = [
        [[{ frobnicateManifest: { account: 'sandbox' } }], /no operation named "frobnicateManifest"/],
        [
          [{ scaleManifest: { account: 'nope', manifestName: 'deployment x', location: 'demo', replicas: 1 } }],
          /account "nope" is not known/,
        ],
        [[{ scaleManifest: { manifestName: 'deployment x', location: 'demo', replicas: 1 } }], /account is required/],
        [[{ scaleManifest: { account: 'sandbox', manifestName: 'x', location: 'demo', replicas: 1 } }], /is not "<kind> <name>"/],
        [
          [{ scaleManifest: { account: 'sandbox', manifestName: 'deployment x', location: 'demo', replicas: 'many' } }],
          /replicas must be an integer/,
        ],
        [{ scaleManifest: {} }, /non-empty JSON array/],
        [[], /non-empty JSON array/],
        [[{ a: {}, b: {} }], /exactly one key/],
      ];
      for (const [body, message] of cases) {
        const res = await fetch(`${orca.baseUrl}/kubernetes/ops?clientRequestId=bad-${Math.random()}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const json = (await res.json()) as Obj;
        assert.equal(res.status, 400, JSON.stringify(json));
        assert.equal(json.status, 400);
        assert.equal(json.error, 'Bad Request');
        assert.equal(json.path, '/kubernetes/ops');
        assert.match(json.message, message);
        assert.ok(!Number.isNaN(Date.parse(json.timestamp)));
      }
      const unknownTask = await orca.get('/task/does-not-exist');
      assert.equal(unknownTask.status, 404);
      assert.equal(unknownTask.body.error, 'Not Found');
      assert.equal((await client.raw.listOperations({ account: 'sandbox', pageSize: 500 })).operations.length, before, 'no operation ran');
    });

    test('the deprecated POST /ops and /kubernetes/task/{id} serve the same API', async () => {
      await apply(deployment('orca-legacy', 'nginx:1', 1));
      const res = await orca.post(
        [{ scaleManifest: { account: 'sandbox', manifestName: 'deployment orca-legacy', location: 'demo', replicas: 2 } }],
        undefined,
        '/ops',
      );
      assert.equal(res.status, 200);
      const outcome = await orca.monitor(res.body.id, false);
      assert.equal(outcome.status, 'SUCCEEDED');
      const again = await orca.get(`/kubernetes/task/${res.body.id}`);
      assert.equal(again.status, 200);
      assert.equal(again.body.id, res.body.id);
    });
  });
}
