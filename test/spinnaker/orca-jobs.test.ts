/**
 * Run Job (Manifest) and the stages' failure paths as Orca sees them, against the sandbox's controllers: a Job that
 * prints a property file (WaitOnJobCompletion polls the job endpoint, then reads the properties from the container's
 * log), running the same Job again (recreated), a Job that fails (Failed with the completion details), cancelling a
 * running Job; a Deployment that never becomes ready (Wait for stable fails with the progress-deadline message);
 * StatefulSet and DaemonSet deployed, stable, restarted and rolled back.
 * Runs on PGlite only: the database side of the Clouddriver API runs on both drivers in task-lifecycle.test.ts and
 * on Postgres in orca-forwarded.test.ts; these suites add the cluster path, the same on either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

const job = (name: string, annotations: Record<string, string>, extra: Obj = {}) => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name, namespace: 'demo' },
  spec: {
    backoffLimit: 0,
    template: { metadata: { annotations }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1' }] } },
    ...extra,
  },
});

for (const driver of ['pglite'] as const) {
  describe(`Run Job and failing stages through the Clouddriver API (${driver})`, { concurrency: false }, () => {
    let system: Stack;
    let orca: OrcaClient;

    /** Orca's KubernetesJobRunner: the runJob operation, then WaitOnJobCompletion until the job is no longer Running. */
    const runJob = async (manifest: Obj) => {
      const outcome = await orca.run(
        'runJob',
        { account: 'sandbox', cloudProvider: 'kubernetes', application: 'orcajobs', source: 'text', manifest, type: 'runJob' },
        false,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      const deployed = outcome.task.resultObjects.find((r: Obj) => r.deployedNamesByLocation)?.deployedNamesByLocation as Record<
        string,
        string[]
      >;
      assert.ok(deployed, 'the result names the job by location');
      const [[location, [name]]] = Object.entries(deployed) as [[string, string[]]];
      const path = `/applications/orcajobs/jobs/sandbox/${location}/${encodeURIComponent(name!)}`;
      let status: Obj = {};
      for (const deadline = Date.now() + 120_000; ; ) {
        assert.ok(Date.now() < deadline, `job ${name} finished in time: ${JSON.stringify(status)}`);
        const res = await orca.get(path);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        status = res.body;
        if (status.jobState !== 'Running') break;
        await sleep(50);
      }
      return { name: name!, path, status, outcome };
    };

    before(async () => {
      system = await startStack({ driver, agents: [{ id: 'agent-1', account: { name: 'sandbox' } }] });
      orca = createOrcaClient(system.gateway.httpUrl);
    });
    after(async () => {
      await system?.close();
    });

    test('a job that prints a property file: Succeeded, and its properties read from the container log', async () => {
      const log = ['starting', 'SPINNAKER_PROPERTY_VERSION=1.2.3', 'SPINNAKER_CONFIG_JSON={"image":"nginx:1.27","count":2}', 'done'].join(
        '\n',
      );
      const { name, path, status } = await runJob(
        job('orca-props', { 'sandbox.outpost.dev/log': log, 'sandbox.outpost.dev/run-ms': '50' }),
      );
      assert.equal(name, 'job orca-props');
      assert.equal(status.jobState, 'Succeeded');
      assert.equal(status.provider, 'kubernetes');
      assert.equal(status.location, 'demo');
      assert.ok(status.mostRecentPodName);
      const props = await orca.get(`${path}/main`);
      assert.equal(props.status, 200, JSON.stringify(props.body));
      assert.deepEqual(props.body, { version: '1.2.3', image: 'nginx:1.27', count: 2 });
      const firstUid = (system.sandbox.store.get('batch/v1', 'Job', 'demo', 'orca-props') as Obj).metadata.uid;
      // Running the same Job again recreates it (Clouddriver forces the recreate strategy): it runs again.
      const again = await runJob(job('orca-props', { 'sandbox.outpost.dev/log': log, 'sandbox.outpost.dev/run-ms': '50' }));
      assert.equal(again.status.jobState, 'Succeeded');
      assert.notEqual((system.sandbox.store.get('batch/v1', 'Job', 'demo', 'orca-props') as Obj).metadata.uid, firstUid);
      const missing = await orca.get(`${path}/no-such-container`);
      assert.equal(missing.status, 404);
    });

    test('a job with only generateName is created under a new name each run; the result and artifact carry it', async () => {
      const manifest: Obj = {
        ...job('unused', { 'sandbox.outpost.dev/run-ms': '20' }),
        metadata: { generateName: 'orca-gen-', namespace: 'demo' },
      };
      const first = await runJob(manifest);
      const second = await runJob(manifest);
      assert.match(first.name, /^job orca-gen-\w+$/);
      assert.notEqual(first.name, second.name);
      assert.equal(first.status.jobState, 'Succeeded');
      const created = first.outcome.outputs.createdArtifacts?.[0];
      assert.equal(`job ${created?.reference}`, first.name);
    });

    test('a failing job: Failed with the condition and the container exit code', async () => {
      const { status } = await runJob(job('orca-fail', { 'sandbox.outpost.dev/fail': '3', 'sandbox.outpost.dev/run-ms': '20' }));
      assert.equal(status.jobState, 'Failed');
      assert.equal(status.completionDetails.exitCode, '3');
      assert.equal(status.completionDetails.reason, 'BackoffLimitExceeded');
      assert.match(status.completionDetails.message, /backoff limit/);
    });

    test('cancelling a running job deletes it', async () => {
      const outcome = await orca.run(
        'runJob',
        { account: 'sandbox', application: 'orcajobs', manifest: job('orca-cancel', { 'sandbox.outpost.dev/run-ms': '600000' }) },
        false,
      );
      assert.equal(outcome.status, 'SUCCEEDED');
      const path = '/applications/orcajobs/jobs/sandbox/demo/job%20orca-cancel';
      assert.equal((await orca.get(path)).body.jobState, 'Running');
      const res = await fetch(`${orca.baseUrl}${path}`, { method: 'DELETE' });
      assert.equal(res.status, 200);
      assert.equal(system.sandbox.store.get('batch/v1', 'Job', 'demo', 'orca-cancel'), undefined);
      assert.equal((await orca.get(path)).status, 404);
      const bad = await orca
        .run(
          'runJob',
          { account: 'sandbox', application: 'x', manifest: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x' } } },
          false,
        )
        .catch((e: Error) => e);
      assert.match(String(bad), /Only kind of Job/);
    });

    test('a Deployment that never becomes ready: Wait for stable ends TERMINAL with the progress deadline message', async () => {
      const dep = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'orca-stuck', namespace: 'demo' },
        spec: {
          replicas: 1,
          progressDeadlineSeconds: 1,
          selector: { matchLabels: { app: 'orca-stuck' } },
          template: {
            metadata: { labels: { app: 'orca-stuck' }, annotations: { 'sandbox.outpost.dev/never-ready': 'true' } },
            spec: { containers: [{ name: 'main', image: 'nginx:1' }] },
          },
        },
      };
      const outcome = await orca.run(
        'deployManifest',
        { account: 'sandbox', source: 'text', manifests: [dep], moniker: { app: 'orca' } },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED');
      const wait = await orca.waitStable('sandbox', outcome.outputs.manifestNamesByNamespace!);
      assert.equal(wait.status, 'TERMINAL');
      assert.deepEqual(wait.messages, ["'deployment orca-stuck' in 'demo' for account sandbox: Deployment exceeded its progress deadline"]);
    });

    test('StatefulSet and DaemonSet: deployed, stable, restarted, undone, stable again', async () => {
      const sts = {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'orca-db', namespace: 'demo' },
        spec: {
          replicas: 2,
          serviceName: 'orca-db',
          selector: { matchLabels: { app: 'orca-db' } },
          template: { metadata: { labels: { app: 'orca-db' } }, spec: { containers: [{ name: 'db', image: 'postgres:16' }] } },
        },
      };
      const ds = {
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: { name: 'orca-agent', namespace: 'demo' },
        spec: {
          selector: { matchLabels: { app: 'orca-agent' } },
          template: { metadata: { labels: { app: 'orca-agent' } }, spec: { containers: [{ name: 'a', image: 'busybox:1' }] } },
        },
      };
      const outcome = await orca.run(
        'deployManifest',
        { account: 'sandbox', source: 'text', manifests: [sts, ds], moniker: { app: 'orca' } },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace?.demo?.sort(), ['daemonSet orca-agent', 'statefulSet orca-db']);
      assert.equal((await orca.waitStable('sandbox', outcome.outputs.manifestNamesByNamespace!)).status, 'SUCCEEDED');
      for (const name of ['statefulSet orca-db', 'daemonSet orca-agent']) {
        const restart = await orca.run('rollingRestartManifest', { account: 'sandbox', manifestName: name, location: 'demo' }, false);
        assert.equal(restart.status, 'SUCCEEDED', JSON.stringify(restart.task));
      }
      assert.ok(
        (system.sandbox.store.get('apps/v1', 'StatefulSet', 'demo', 'orca-db') as Obj).spec.template.metadata.annotations[
          'kubectl.kubernetes.io/restartedAt'
        ],
      );
      assert.equal((await orca.waitStable('sandbox', outcome.outputs.manifestNamesByNamespace!)).status, 'SUCCEEDED');
      // Undo Rollout reads their ControllerRevisions: one back is the template before the restart.
      for (const [name, kind] of [
        ['statefulSet orca-db', 'StatefulSet'],
        ['daemonSet orca-agent', 'DaemonSet'],
      ] as const) {
        const undo = await orca.run(
          'undoRolloutManifest',
          { account: 'sandbox', manifestName: name, location: 'demo', numRevisionsBack: 1 },
          false,
        );
        assert.equal(undo.status, 'SUCCEEDED', JSON.stringify(undo.task));
        assert.ok(
          undo.task.history.some((h: Obj) => /Picked revision 1/.test(h.status)),
          JSON.stringify(undo.task.history),
        );
        const template = (system.sandbox.store.get('apps/v1', kind, 'demo', name.split(' ')[1]!) as Obj).spec.template;
        assert.equal(
          template.metadata.annotations?.['kubectl.kubernetes.io/restartedAt'],
          undefined,
          `${name} is back at the template before the restart`,
        );
      }
      assert.equal((await orca.waitStable('sandbox', outcome.outputs.manifestNamesByNamespace!)).status, 'SUCCEEDED');
      const scaled = await orca.run(
        'scaleManifest',
        { account: 'sandbox', manifestName: 'statefulSet orca-db', location: 'demo', replicas: 3 },
        false,
      );
      assert.equal(scaled.status, 'SUCCEEDED');
      assert.equal((await orca.waitStable('sandbox', { demo: ['statefulSet orca-db'] })).status, 'SUCCEEDED');
      assert.equal((system.sandbox.store.get('apps/v1', 'StatefulSet', 'demo', 'orca-db') as Obj).status.readyReplicas, 3);
    });
  });
}
