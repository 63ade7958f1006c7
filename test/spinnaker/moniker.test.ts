/**
 * Monikers of live objects (annotations, else Clouddriver's parse of the name) and Frigga's name parse.
 *
 * Differences from the contract (Clouddriver HEAD 2f5e98f and Frigga HEAD win):
 * - Without the moniker.spinnaker.io/cluster annotation the cluster of a live object is Frigga's cluster of its name
 *   (`web` for `web-v002`), not the full resource name: "deployment web" is only what Clouddriver's deploy writes
 *   into the annotation when the stage gives no cluster (KubernetesManifestAnnotater.getMoniker via
 *   KubernetesManifestNamer.deriveMoniker; the deploy default is in KubernetesDeployManifestOperation).
 * - Only app, cluster and sequence fall back to the name; stack and detail come from their annotations alone
 *   (KubernetesManifestAnnotater.getMoniker).
 * - Names starting with `system:` are parsed specially: app `system`, cluster the name without `-vNNN`
 *   (KubernetesResourceAwareNames).
 * - A present but unreadable annotation (sequence `abc`, `007`) gives no value rather than the fallback; values
 *   written as JSON strings (`"web"`) are unquoted (KubernetesManifestAnnotater.getAnnotation).
 * - The version suffix is `-v` with 3 to 6 digits (Frigga NameConstants.PUSH_FORMAT).
 * - Where Clouddriver returns a null app/cluster (a name Frigga cannot parse) Outpost returns ''.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { monikerOf, parseFriggaName } from '../../src/gateway/spinnaker/moniker.js';

describe('parseFriggaName', () => {
  const cases: [string, ReturnType<typeof parseFriggaName>][] = [
    ['web', { app: 'web', cluster: 'web' }],
    ['web-v003', { app: 'web', cluster: 'web', sequence: 3 }],
    ['web-prod-canary-v003', { app: 'web', stack: 'prod', detail: 'canary', cluster: 'web-prod-canary', sequence: 3 }],
    ['web-prod', { app: 'web', stack: 'prod', cluster: 'web-prod' }],
    ['web--canary', { app: 'web', detail: 'canary', cluster: 'web--canary' }],
    ['web-prod-canary-east-1', { app: 'web', stack: 'prod', detail: 'canary-east-1', cluster: 'web-prod-canary-east-1' }],
    ['testapp-abc', { app: 'testapp', stack: 'abc', cluster: 'testapp-abc' }],
    ['chukwa.collector_1-v889', { app: 'chukwa.collector_1', cluster: 'chukwa.collector_1', sequence: 889 }],
    ['actiondrainer--v003', { app: 'actiondrainer', cluster: 'actiondrainer-', sequence: 3 }],
    ['foo-v1', { app: 'foo', stack: 'v1', cluster: 'foo-v1' }],
    ['foo-v01', { app: 'foo', stack: 'v01', cluster: 'foo-v01' }],
    ['foo-v0001', { app: 'foo', cluster: 'foo', sequence: 1 }],
    ['foo-v000001', { app: 'foo', cluster: 'foo', sequence: 1 }],
    ['foo-v0000001', { app: 'foo', stack: 'v0000001', cluster: 'foo-v0000001' }],
    ['web-v1000', { app: 'web', cluster: 'web', sequence: 1000 }],
    ['web-prod-v000', { app: 'web', stack: 'prod', cluster: 'web-prod', sequence: 0 }],
    ['a-b-c~d^e', { app: 'a', stack: 'b', detail: 'c~d^e', cluster: 'a-b-c~d^e' }],
    ['', { app: '', cluster: '' }],
    ['   ', { app: '', cluster: '' }],
    ['-v003', { app: '', cluster: '' }],
    ['nccp-moviecontrol%27', { app: '', cluster: '' }],
    ['kubeadm:get-nodes', { app: '', cluster: '' }],
  ];
  for (const [name, want] of cases) {
    test(JSON.stringify(name), () => assert.deepEqual(parseFriggaName(name), want));
  }
});

const object = (kind: string, name: string, annotations?: Record<string, string>, apiVersion = 'apps/v1') => ({
  apiVersion,
  kind,
  metadata: { name, namespace: 'prod', ...(annotations ? { annotations } : {}) },
});

describe('monikerOf', () => {
  test('annotations win over the name', () => {
    const moniker = monikerOf(
      object('Deployment', 'other-name-v002', {
        'moniker.spinnaker.io/application': 'web',
        'moniker.spinnaker.io/cluster': 'deployment web',
        'moniker.spinnaker.io/stack': 'prod',
        'moniker.spinnaker.io/detail': 'canary',
        'moniker.spinnaker.io/sequence': '7',
      }),
    );
    assert.deepEqual(moniker, { app: 'web', cluster: 'deployment web', stack: 'prod', detail: 'canary', sequence: 7 });
  });

  test('without annotations: app, cluster and sequence from the name; stack and detail are not', () => {
    assert.deepEqual(monikerOf(object('Deployment', 'web-prod-canary-v003')), { app: 'web', cluster: 'web-prod-canary', sequence: 3 });
    assert.deepEqual(monikerOf(object('Deployment', 'web')), { app: 'web', cluster: 'web' });
  });

  test('a cluster annotation alone keeps the app from the name', () => {
    assert.deepEqual(monikerOf(object('Service', 'web-svc', { 'moniker.spinnaker.io/cluster': 'service web-svc' }, 'v1')), {
      app: 'web',
      cluster: 'service web-svc',
    });
  });

  test('ReplicaSets fall back to deployment.kubernetes.io/revision before the name', () => {
    assert.equal(monikerOf(object('ReplicaSet', 'web-5d9f7c', { 'deployment.kubernetes.io/revision': '4' })).sequence, 4);
    assert.equal(monikerOf(object('ReplicaSet', 'web-v002', { 'deployment.kubernetes.io/revision': '4' })).sequence, 4);
    assert.equal(monikerOf(object('ReplicaSet', 'web-v002')).sequence, 2);
    assert.equal(
      monikerOf(object('ReplicaSet', 'web-v002', { 'deployment.kubernetes.io/revision': '4', 'moniker.spinnaker.io/sequence': '1' }))
        .sequence,
      1,
    );
    assert.equal(
      monikerOf(object('ReplicaSet', 'web-v002', { 'deployment.kubernetes.io/revision': '4' }, 'extensions/v1beta1')).sequence,
      4,
    );
  });

  test('other kinds ignore the revision annotation', () => {
    assert.equal(monikerOf(object('Deployment', 'web', { 'deployment.kubernetes.io/revision': '4' })).sequence, undefined);
    assert.equal(
      monikerOf(object('ReplicaSet', 'web', { 'deployment.kubernetes.io/revision': '4' }, 'example.com/v1')).sequence,
      undefined,
    );
  });

  test('system: names', () => {
    assert.deepEqual(monikerOf(object('ClusterRole', 'system:coredns', undefined, 'rbac.authorization.k8s.io/v1')), {
      app: 'system',
      cluster: 'system:coredns',
    });
    assert.deepEqual(monikerOf(object('ClusterRole', 'system:coredns-v003', undefined, 'rbac.authorization.k8s.io/v1')), {
      app: 'system',
      cluster: 'system:coredns',
      sequence: 3,
    });
    assert.deepEqual(
      monikerOf(
        object(
          'ClusterRole',
          'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
          undefined,
          'rbac.authorization.k8s.io/v1',
        ),
      ),
      {
        app: 'system',
        cluster: 'system:certificates.k8s.io:certificatesigningrequests:nodeclient',
      },
    );
  });

  test('annotation values written as JSON strings are unquoted', () => {
    const moniker = monikerOf(
      object('Deployment', 'x', { 'moniker.spinnaker.io/application': '"web"', 'moniker.spinnaker.io/sequence': '"5"' }),
    );
    assert.deepEqual(moniker, { app: 'web', cluster: 'x', sequence: 5 });
  });

  test('unreadable annotations give nothing, not the fallback', () => {
    assert.equal(monikerOf(object('Deployment', 'web-v002', { 'moniker.spinnaker.io/sequence': 'abc' })).sequence, undefined);
    assert.equal(monikerOf(object('Deployment', 'web-v002', { 'moniker.spinnaker.io/sequence': '007' })).sequence, undefined);
    assert.equal(monikerOf(object('Deployment', 'web-v002', { 'moniker.spinnaker.io/sequence': '' })).sequence, undefined);
    assert.equal(monikerOf(object('Deployment', 'web-v002', { 'moniker.spinnaker.io/sequence': '99999999999' })).sequence, undefined);
    assert.equal(monikerOf(object('ReplicaSet', 'web-v002', { 'deployment.kubernetes.io/revision': 'x' })).sequence, undefined);
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/application': '"a\\"' })).app, '');
  });

  test('a quoted value is read up to its closing quote, as Jackson reads it', () => {
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/application': '"a" "b"' })).app, 'a');
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/application': '"w\\u00e9b"' })).app, 'wéb');
  });

  test('integer annotations read as Jackson reads them', () => {
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/sequence': ' 12 ' })).sequence, 12);
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/sequence': '0' })).sequence, 0);
    assert.equal(monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/sequence': '3.7' })).sequence, 3);
  });

  test('empty stack and detail annotations are kept', () => {
    const moniker = monikerOf(object('Deployment', 'web', { 'moniker.spinnaker.io/stack': '', 'moniker.spinnaker.io/detail': '' }));
    assert.deepEqual(moniker, { app: 'web', cluster: 'web', stack: '', detail: '' });
  });

  test('unparseable names and missing metadata give empty app and cluster', () => {
    assert.deepEqual(monikerOf(object('Role', 'kubeadm:get-nodes', undefined, 'rbac.authorization.k8s.io/v1')), { app: '', cluster: '' });
    assert.deepEqual(monikerOf({}), { app: '', cluster: '' });
    assert.deepEqual(monikerOf({ metadata: { name: 'web', annotations: 'nonsense' } }), { app: 'web', cluster: 'web' });
  });
});
