/**
 * cleanupArtifacts and Run Job planning: which older versions a deploy's max-version-history deletes (the deployed
 * object counts among those kept, order is by creation time), and how a Run Job is turned into a deploy.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { versionsToDelete } from '../../src/gateway/spinnaker/deploy/cleanup-artifacts.js';
import type { KubeObject } from '../../src/gateway/spinnaker/deploy/deploy-types.js';
import { planRunJob } from '../../src/gateway/spinnaker/deploy/run-job.js';
import { ACCOUNT, configMap, fakeContext, liveVersion } from './deploy-helpers.js';

function versions(count: number, max?: string): KubeObject[] {
  return Array.from({ length: count }, (_, i) => {
    const v = `v${String(i).padStart(3, '0')}`;
    const extra: Record<string, string> = max ? { 'strategy.spinnaker.io/max-version-history': max } : {};
    return liveVersion(configMap('cfg'), 'cfg', v, `2025-01-01T00:00:${String(i).padStart(2, '0')}Z`, extra);
  });
}

const namesOf = (objects: KubeObject[]) => objects.map((o) => o.metadata.name).sort();

describe('versionsToDelete', () => {
  const cases: [string, number, string | undefined, string[]][] = [
    ['keeps the 2 newest of 5, the deployed one included', 5, '2', ['cfg-v000', 'cfg-v001', 'cfg-v002']],
    ['keeps all when N equals the count', 3, '3', []],
    ['keeps all when N exceeds the count', 2, '10', []],
    ['deletes nothing without the annotation', 5, undefined, []],
    ['deletes nothing for an unreadable N', 5, 'many', []],
    ['deletes every version for N = 0, as Clouddriver does', 2, '0', ['cfg-v000', 'cfg-v001']],
  ];
  for (const [what, count, max, expected] of cases) {
    test(what, async () => {
      const live = versions(count, max);
      const deployed = live[live.length - 1]!;
      const calls: string[] = [];
      const result = await versionsToDelete([deployed], async (kind, ns, base) => {
        calls.push(`${kind}/${ns}/${base}`);
        return live;
      });
      assert.deepEqual(namesOf(result), expected);
      assert.deepEqual(calls, max === undefined || max === 'many' ? [] : ['ConfigMap/prod/cfg']);
    });
  }

  test('order is by creation time, not by version or list order; other artifacts are not counted', async () => {
    const live = [
      liveVersion(configMap('cfg'), 'cfg', 'v007', '2025-03-01T00:00:00Z'),
      liveVersion(configMap('cfg'), 'cfg', 'v009', '2025-01-01T00:00:00Z'),
      liveVersion(configMap('cfg'), 'cfg', 'v008', '2025-02-01T00:00:00Z'),
      liveVersion(configMap('other'), 'other', 'v000', '2024-01-01T00:00:00Z'),
    ];
    const deployed = structuredClone(live[0]!);
    deployed.metadata.annotations!['strategy.spinnaker.io/max-version-history'] = '1';
    const result = await versionsToDelete([deployed, deployed], async () => live);
    assert.deepEqual(namesOf(result), ['cfg-v008', 'cfg-v009']);
  });

  test('the artifact location annotation chooses the namespace searched; objects without artifact type are skipped', async () => {
    const deployed = liveVersion(configMap('cfg'), 'cfg', 'v001', '2025-01-01T00:00:00Z', {
      'strategy.spinnaker.io/max-version-history': '1',
      'artifact.spinnaker.io/location': 'prod',
    });
    deployed.metadata.namespace = undefined;
    const seen: string[] = [];
    await versionsToDelete([deployed], async (_k, ns) => {
      seen.push(ns);
      return [];
    });
    assert.deepEqual(seen, ['prod']);
    const untyped = structuredClone(deployed);
    delete untyped.metadata.annotations!['artifact.spinnaker.io/type'];
    assert.deepEqual(await versionsToDelete([untyped], async () => assert.fail('no lookup expected')), []);
  });
});

describe('planRunJob', () => {
  const job = (metadata: KubeObject['metadata']): KubeObject => ({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata,
    spec: { template: { metadata: {}, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'migrate:1' }] } } },
  });

  test('forces recreate, uses the application as moniker, moves to the namespace and binds artifacts', async () => {
    const plan = await planRunJob(
      {
        account: ACCOUNT,
        application: 'shop',
        namespace: 'jobs',
        manifest: job({
          name: 'migrate',
          namespace: 'prod',
          annotations: { 'strategy.spinnaker.io/replace': 'true', 'strategy.spinnaker.io/server-side-apply': 'true' },
        }),
        requiredArtifacts: [{ type: 'docker/image', name: 'migrate', reference: 'migrate:2' }],
      },
      fakeContext(),
    );
    const p = plan.manifests[0]!;
    assert.deepEqual(p.strategy, { serverSideApply: 'off', replace: false, recreate: true, useSourceCapacity: false });
    assert.equal(p.manifest.metadata.namespace, 'jobs');
    assert.equal(p.manifest.metadata.name, 'migrate');
    assert.equal(p.manifest.metadata.annotations!['strategy.spinnaker.io/recreate'], 'true');
    assert.equal(p.manifest.metadata.annotations!['strategy.spinnaker.io/replace'], undefined);
    assert.equal(p.manifest.metadata.annotations!['moniker.spinnaker.io/application'], 'shop');
    assert.equal(p.manifest.metadata.annotations!['moniker.spinnaker.io/cluster'], 'job migrate');
    assert.deepEqual(p.artifact, {
      type: 'kubernetes/job',
      name: 'migrate',
      location: 'jobs',
      version: '',
      reference: 'migrate',
      customKind: false,
      metadata: { account: ACCOUNT },
    });
    const spec = p.manifest.spec as { template: { spec: { containers: { image: string }[] } } };
    assert.equal(spec.template.spec.containers[0]!.image, 'migrate:2');
  });

  test('a Job with only generateName keeps it and has no name or artifact reference', async () => {
    const plan = await planRunJob({ application: 'shop', manifest: job({ generateName: 'migrate-', namespace: 'prod' }) }, fakeContext());
    const p = plan.manifests[0]!;
    assert.equal(p.manifest.metadata.name, undefined);
    assert.equal(p.manifest.metadata.generateName, 'migrate-');
    assert.equal(p.strategy.recreate, true);
    assert.equal(p.artifact.name, undefined);
    assert.equal(p.artifact.reference, undefined);
    assert.equal(p.manifest.metadata.annotations!['moniker.spinnaker.io/cluster'], 'job migrate-');
    assert.equal(p.manifest.metadata.annotations!['artifact.spinnaker.io/name'], undefined);
  });

  test('anything but a Job is refused', async () => {
    await assert.rejects(planRunJob({ application: 'shop', manifest: configMap('c') }, fakeContext()), /Only kind of Job is accepted/);
    await assert.rejects(planRunJob({ application: 'shop' }, fakeContext()), /has no manifest/);
  });
});
