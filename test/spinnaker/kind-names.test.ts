/**
 * Kind names as Clouddriver reads and writes them: aliases, case and built-in groups on input, camelCase registered
 * names and `Kind.group` for custom resources on output, `"<kind> <name>"` resource names.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { fullResourceName, parseKind, parseResourceName, spinnakerKindMap, spinnakerKindOf } from '../../src/gateway/status/kind-names.js';

describe('Spinnaker kind names', () => {
  test('registered kinds parse from any case, alias or built-in group to one spelling', () => {
    for (const text of ['deployment', 'Deployment', 'DEPLOYMENT', 'deployment.apps', 'deploy', 'Deployment.apps', 'deploy.extensions']) {
      const parsed = parseKind(text);
      assert.equal(parsed?.spinnakerName, 'deployment', text);
      assert.equal(parsed?.agentKind, 'Deployment', text);
    }
    assert.equal(parseKind('rs')?.spinnakerName, 'replicaSet');
    assert.equal(parseKind('svc')?.agentKind, 'Service');
    assert.equal(parseKind('hpa')?.spinnakerName, 'horizontalpodautoscaler');
    assert.equal(parseKind('StatefulSet')?.spinnakerName, 'statefulSet');
    assert.equal(parseKind(''), undefined);
  });

  test('custom resources keep their spelling and carry their group', () => {
    const parsed = parseKind('CronTab.stable.example.com');
    assert.deepEqual(parsed, {
      spinnakerName: 'CronTab.stable.example.com',
      agentKind: 'CronTab.stable.example.com',
      customGroup: 'stable.example.com',
    });
    assert.equal(parseKind('Widget')?.agentKind, 'Widget');
    // A registered name in a custom group is not the registered kind.
    assert.equal(parseKind('deployment.example.com')?.registered, undefined);
  });

  test('output spelling from apiVersion and kind', () => {
    assert.equal(spinnakerKindOf('apps/v1', 'Deployment'), 'deployment');
    assert.equal(spinnakerKindOf('v1', 'ConfigMap'), 'configMap');
    assert.equal(spinnakerKindOf('autoscaling/v2', 'HorizontalPodAutoscaler'), 'horizontalpodautoscaler');
    assert.equal(spinnakerKindOf('stable.example.com/v1', 'CronTab'), 'CronTab.stable.example.com');
    assert.equal(spinnakerKindOf('batch/v1', 'Job'), 'job');
    assert.equal(fullResourceName({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web-v001' } }), 'replicaSet web-v001');
  });

  test('resource names', () => {
    const parsed = parseResourceName('deployment web');
    assert.equal(parsed?.kind.spinnakerName, 'deployment');
    assert.equal(parsed?.name, 'web');
    assert.equal(parseResourceName('Deployment.apps my.web')?.name, 'my.web');
    assert.equal(parseResourceName('web'), undefined);
    assert.equal(parseResourceName(' web'), undefined);
    assert.equal(parseResourceName('a b c'), undefined);
  });

  test('the credentials kind map classifies kinds as Deck groups them', () => {
    const map = spinnakerKindMap();
    assert.equal(map.deployment, 'serverGroupManagers');
    assert.equal(map.replicaSet, 'serverGroups');
    assert.equal(map.pod, 'instances');
    assert.equal(map.service, 'loadBalancers');
    assert.equal(map.configMap, 'configs');
    assert.equal(map.networkPolicy, 'securityGroups');
    assert.equal(map.role, 'unclassified');
    // Clouddriver's KubernetesJobHandler and KubernetesCronJobHandler class both as server groups
    assert.equal(map.job, 'serverGroups');
    assert.equal(map.cronJob, 'serverGroups');
    assert.equal(map.statefulSet, 'serverGroups');
    assert.equal(map.daemonSet, 'serverGroups');
  });
});
