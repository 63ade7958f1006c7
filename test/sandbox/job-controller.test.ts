/**
 * The Job controller with the pretend kubelet: pods run to completion, completions and parallelism, failure with a
 * backoff limit, the status fields and conditions Clouddriver's Job status model reads, Events, and a job pod's
 * annotated log read through pods/log (what Run Job's property file parses). Waits only bound a hang.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch, useSandbox } from './api-client.js';
import { eventually } from '../../testkit/eventually.js';

const NS = 'jobs';
let sb: Sandbox;

useSandbox(NS, { podRunMs: 20 }, (started) => (sb = started));

interface JobStatus {
  active?: number;
  succeeded?: number;
  failed?: number;
  startTime?: string;
  completionTime?: string;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

function job(name: string, spec: Record<string, unknown>, annotations: Record<string, string> = {}): KubeObject {
  return sb.store.create({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, namespace: NS },
    spec: {
      ...spec,
      template: { metadata: { annotations }, spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox' }] } },
    },
  });
}

const jobStatus = (name: string) => (sb.store.get('batch/v1', 'Job', NS, name)?.status ?? {}) as JobStatus;
const finished = (name: string) =>
  jobStatus(name).conditions?.find((c) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True');
const podsOf = (name: string) => sb.store.list('v1', 'Pod', NS).filter((p) => p.metadata.labels?.['job-name'] === name);
const phase = (p: KubeObject) => (p.status as { phase?: string } | undefined)?.phase;

describe('job controller', () => {
  test('a job runs its pod to completion: succeeded, Complete, completionTime, Events', async () => {
    job('once', {});
    const done = await eventually('job finished', () => finished('once'), { timeoutMs: 30_000 });
    assert.equal(done.type, 'Complete');
    const st = jobStatus('once');
    assert.equal(st.succeeded, 1);
    assert.equal(st.failed, undefined);
    assert.equal(st.active, undefined);
    assert.ok(st.startTime && st.completionTime);
    const pods = podsOf('once');
    assert.equal(pods.length, 1);
    assert.equal(phase(pods[0]!), 'Succeeded');
    const terminated = (pods[0]!.status as { containerStatuses: { state: { terminated: { exitCode: number; reason: string } } }[] })
      .containerStatuses[0]!.state.terminated;
    assert.deepEqual([terminated.exitCode, terminated.reason], [0, 'Completed']);
    const reasons = sb.store
      .list('v1', 'Event', NS)
      .filter(
        (e) =>
          (e.involvedObject as { kind: string; name: string }).kind === 'Job' && (e.involvedObject as { name: string }).name === 'once',
      )
      .map((e) => e.reason);
    assert.ok(reasons.includes('SuccessfulCreate'), String(reasons));
    assert.ok(reasons.includes('Completed'), String(reasons));
  });

  test('completions 3 with parallelism 2: three pods succeed, never more than two at a time', async () => {
    job('many', { completions: 3, parallelism: 2 });
    let maxActive = 0;
    await eventually(
      'job finished',
      () => {
        maxActive = Math.max(maxActive, podsOf('many').filter((p) => phase(p) !== 'Succeeded' && phase(p) !== 'Failed').length);
        return finished('many');
      },
      { timeoutMs: 30_000 },
    );
    assert.equal(finished('many')!.type, 'Complete');
    assert.equal(jobStatus('many').succeeded, 3);
    assert.equal(podsOf('many').length, 3);
    assert.ok(maxActive <= 2, `at most parallelism pods at once (saw ${maxActive})`);
  });

  test('a failing pod with backoffLimit 0 fails the job: BackoffLimitExceeded', async () => {
    job('doomed', { backoffLimit: 0 }, { 'sandbox.outpost.dev/fail': '2' });
    const done = await eventually('job finished', () => finished('doomed'), { timeoutMs: 30_000 });
    assert.equal(done.type, 'Failed');
    assert.equal(done.reason, 'BackoffLimitExceeded');
    assert.equal(done.message, 'Job has reached the specified backoff limit');
    const st = jobStatus('doomed');
    assert.equal(st.failed, 1);
    assert.equal(st.succeeded, undefined);
    const pods = podsOf('doomed');
    assert.equal(pods.length, 1);
    assert.equal(phase(pods[0]!), 'Failed');
    const exit = (pods[0]!.status as { containerStatuses: { state: { terminated: { exitCode: number } } }[] }).containerStatuses[0]!.state
      .terminated.exitCode;
    assert.equal(exit, 2);
    const ev = await eventually(
      'event',
      () =>
        sb.store
          .list('v1', 'Event', NS)
          .find((e) => e.reason === 'BackoffLimitExceeded' && (e.involvedObject as { name: string }).name === 'doomed'),
      { timeoutMs: 30_000 },
    );
    assert.equal(ev.type, 'Warning');
  });

  test('backoffLimit 2: three failed pods, then the job fails', async () => {
    job('retry', { backoffLimit: 2 }, { 'sandbox.outpost.dev/exit-code': '1' });
    const done = await eventually('job finished', () => finished('retry'), { timeoutMs: 30_000 });
    assert.equal(done.type, 'Failed');
    assert.equal(jobStatus('retry').failed, 3);
    assert.equal(podsOf('retry').length, 3);
  });

  test('run-ms keeps the pod running first; the log annotation is what pods/log returns', async () => {
    const watch = await openWatch(sb, `/api/v1/namespaces/${NS}/pods?watch=true&labelSelector=job-name%3Dreport`);
    try {
      job(
        'report',
        {},
        { 'sandbox.outpost.dev/run-ms': '300', 'sandbox.outpost.dev/log': 'SPINNAKER_PROPERTY_FOO=bar\nSPINNAKER_CONFIG_JSON={"a":1}' },
      );
      await eventually('job finished', () => finished('report'), { timeoutMs: 30_000 });
      const phases = () => watch.events.map((e) => phase(e.object));
      await watch.waitFor(() => phases().includes('Succeeded'), 20000);
      // separate writes: the watch saw the pod Running before it Succeeded
      assert.ok(phases().indexOf('Running') >= 0 && phases().indexOf('Running') < phases().indexOf('Succeeded'), String(phases()));
    } finally {
      watch.close();
    }
    const pod = podsOf('report')[0]!;
    const log = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}/log?container=main`);
    assert.equal(log.status, 200);
    assert.deepEqual(log.text.trim().split('\n'), ['SPINNAKER_PROPERTY_FOO=bar', 'SPINNAKER_CONFIG_JSON={"a":1}']);
  });

  test('suspend starts no pods', async () => {
    job('paused', { suspend: true });
    await eventually('status written', () => jobStatus('paused').startTime, { timeoutMs: 30_000 });
    assert.equal(podsOf('paused').length, 0);
  });
});
