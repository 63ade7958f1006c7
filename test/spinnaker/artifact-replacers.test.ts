/**
 * Where artifacts live in manifests: the artifacts a live object reports on the Manifest read API, image names
 * without tags or digests, and the namespace and account rules of binding.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { imageName, replaceArtifacts } from '../../src/gateway/spinnaker/deploy/artifact-replacers.js';
import type { KubeObject } from '../../src/gateway/spinnaker/deploy/deploy-types.js';
import { listArtifacts } from '../../src/gateway/spinnaker/deploy/list-artifacts.js';
import { ACCOUNT, deployment } from './deploy-helpers.js';

describe('image names', () => {
  const cases: [string, string][] = [
    ['nginx', 'nginx'],
    ['nginx:1.25', 'nginx'],
    ['gcr.io/shop/web:1.0', 'gcr.io/shop/web'],
    ['gcr.io/shop/web@sha256:abc', 'gcr.io/shop/web'],
    ['gcr.io/shop/web:1.0@sha256:abc', 'gcr.io/shop/web:1.0'],
    ['registry:5000/app', 'registry:5000/app'],
    ['registry:5000/app:2', 'registry:5000/app'],
  ];
  for (const [reference, name] of cases) test(`${reference} → ${name}`, () => assert.equal(imageName(reference), name));
});

describe('listArtifacts', () => {
  test('a Deployment reports its images, ConfigMaps and Secrets once each, in replacer order', () => {
    const d = deployment('web', {
      initContainers: [
        { name: 'i', image: 'busybox:1', env: [{ name: 'S', valueFrom: { secretKeyRef: { name: 'creds-v001', key: 'k' } } }] },
      ],
      containers: [
        { name: 'a', image: 'nginx:1.25', envFrom: [{ configMapRef: { name: 'cfg-v002' } }] },
        { name: 'b', image: 'nginx:1.25' },
      ],
      volumes: [
        { name: 'v', configMap: { name: 'cfg-v002' } },
        { name: 's', secret: { secretName: 'tls' } },
      ],
    });
    assert.deepEqual(listArtifacts(d, ACCOUNT), [
      { type: 'docker/image', name: 'nginx', reference: 'nginx:1.25' },
      { type: 'docker/image', name: 'busybox', reference: 'busybox:1' },
      { type: 'kubernetes/configMap', name: 'cfg-v002', reference: 'cfg-v002' },
      { type: 'kubernetes/secret', name: 'tls', reference: 'tls' },
      { type: 'kubernetes/secret', name: 'creds-v001', reference: 'creds-v001' },
    ]);
  });

  test("a CronJob's images are found under its job template", () => {
    const cron: KubeObject = {
      apiVersion: 'batch/v1',
      kind: 'CronJob',
      metadata: { name: 'c' },
      spec: { jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'alpine:3' }] } } } } },
    };
    assert.deepEqual(listArtifacts(cron, ACCOUNT), [{ type: 'docker/image', name: 'alpine', reference: 'alpine:3' }]);
  });

  test("a bare Pod reports its containers' images with the whole reference as name, not its init containers", () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { initContainers: [{ name: 'i', image: 'busybox:1' }], containers: [{ name: 'c', image: 'nginx:1.25' }] },
    };
    assert.deepEqual(listArtifacts(pod, ACCOUNT), [{ type: 'docker/image', name: 'nginx:1.25', reference: 'nginx:1.25' }]);
  });

  test('an HPA reports its Deployment or ReplicaSet target; kinds without references report nothing', () => {
    const hpa = (kind: string): KubeObject => ({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind, name: 'web' } },
    });
    assert.deepEqual(listArtifacts(hpa('Deployment'), ACCOUNT), [{ type: 'kubernetes/deployment', name: 'web', reference: 'web' }]);
    assert.deepEqual(listArtifacts(hpa('ReplicaSet'), ACCOUNT), [{ type: 'kubernetes/replicaSet', name: 'web', reference: 'web' }]);
    assert.deepEqual(listArtifacts(hpa('StatefulSet'), ACCOUNT), []);
    assert.deepEqual(listArtifacts({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: {} }, ACCOUNT), []);
    assert.deepEqual(listArtifacts({ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' } }, ACCOUNT), []);
  });
});

describe('replaceArtifacts', () => {
  const volumeOf = (d: KubeObject) =>
    (d.spec as { template: { spec: { volumes: { configMap: { name: string } }[] } } }).template.spec.volumes[0]!.configMap.name;
  const withVolume = () => deployment('web', { containers: [], volumes: [{ name: 'v', configMap: { name: 'cfg' } }] });
  const cm = (location: string | undefined, account?: string) => ({
    type: 'kubernetes/configMap',
    name: 'cfg',
    reference: 'cfg-v001',
    location,
    ...(account ? { metadata: { account } } : {}),
  });

  const cases: [string, ReturnType<typeof cm>, string][] = [
    ['same namespace and account', cm('prod', ACCOUNT), 'cfg-v001'],
    ['same namespace, no account', cm('prod'), 'cfg-v001'],
    ['another account', cm('prod', 'other'), 'cfg'],
    ['another namespace', cm('dev', ACCOUNT), 'cfg'],
    ['no location', cm(undefined, ACCOUNT), 'cfg'],
  ];
  for (const [what, artifact, expected] of cases) {
    test(`a ConfigMap artifact from ${what} → ${expected}`, () => {
      const d = withVolume();
      const bound = replaceArtifacts(d, 'podTemplate', [artifact], 'prod', ACCOUNT);
      assert.equal(volumeOf(d), expected);
      assert.deepEqual(bound, expected === 'cfg' ? [] : [artifact]);
    });
  }

  test('docker images bind whatever their namespace; artifacts without a reference or type never bind', () => {
    const d = deployment('web', { containers: [{ name: 'c', image: 'nginx:1' }] });
    assert.deepEqual(
      replaceArtifacts(
        d,
        'podTemplate',
        [
          { type: 'docker/image', name: 'nginx' },
          { type: '', name: 'nginx', reference: 'x' },
        ],
        'prod',
        ACCOUNT,
      ),
      [],
    );
    const image = { type: 'docker/image', name: 'nginx', reference: 'nginx:2', location: 'elsewhere' };
    assert.deepEqual(replaceArtifacts(d, 'podTemplate', [image], 'prod', ACCOUNT), [image]);
    assert.equal((d.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image, 'nginx:2');
  });

  test('an HPA targeting a Deployment of this deploy binds it', () => {
    const hpa: KubeObject = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'h' },
      spec: { scaleTargetRef: { kind: 'ReplicaSet', name: 'web' } },
    };
    const rs = { type: 'kubernetes/replicaSet', name: 'web', reference: 'web-v003', location: 'prod' };
    assert.deepEqual(replaceArtifacts(hpa, 'hpa', [rs], 'prod', ACCOUNT), [rs]);
    assert.equal((hpa.spec as { scaleTargetRef: { name: string } }).scaleTargetRef.name, 'web-v003');
  });
});
