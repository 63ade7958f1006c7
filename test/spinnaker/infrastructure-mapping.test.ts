/**
 * The mapping of cached Kubernetes objects to Spinnaker's infrastructure concepts (src/gateway/spinnaker/infrastructure/),
 * on hand-built objects: pod health and instance counts (§3.7 of the Deck contract), monikers with ReplicaSet
 * revisions and ignored objects (§3.3), Service ↔ server-group links and the disabled rule (§3.6), images of every
 * template form (§3.8), and the load-balancer and firewall shapes built from them (§2.8, §2.9).
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadBalancerView, securityGroupDetails } from '../../src/gateway/spinnaker/infrastructure/infrastructure-views.js';
import {
  createdTimeOf,
  imagesOf,
  isIgnored,
  korkMonikerOf,
  spinnakerClassOf,
} from '../../src/gateway/spinnaker/infrastructure/object-facts.js';
import { healthEntriesOf, healthStateOf, instanceCountsOf } from '../../src/gateway/spinnaker/infrastructure/pod-health.js';
import { serviceLinksTo, trafficOf } from '../../src/gateway/spinnaker/infrastructure/traffic-links.js';

type Obj = Record<string, any>;

const pod = (phase: string | undefined, ready: boolean[] = []): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'default', uid: 'u' },
  ...(phase === undefined ? {} : { status: { phase, containerStatuses: ready.map((r, i) => ({ name: `c${i}`, ready: r })) } }),
});
const rs = (name: string, labels: Record<string, string>, annotations: Record<string, string> = {}): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, namespace: 'default', uid: name, annotations },
  spec: { replicas: 1, template: { metadata: { labels }, spec: { containers: [{ name: 'c', image: 'img:1' }] } } },
});
const service = (name: string, selector: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { selector },
});

describe('pod health', () => {
  test('entries: the phase, then each container', () => {
    assert.deepEqual(healthEntriesOf(pod('Running', [true, false])), [
      { type: 'kubernetes/pod', source: 'Pod', state: 'Up' },
      { type: 'kubernetes/container', source: 'Container c0', state: 'Up' },
      { type: 'kubernetes/container', source: 'Container c1', state: 'Down' },
    ]);
    assert.equal(healthEntriesOf(pod('Pending'))[0]!.state, 'Down');
    assert.equal(healthEntriesOf(pod('Succeeded'))[0]!.state, 'Unknown');
    assert.deepEqual(healthEntriesOf(pod(undefined)), [], 'no status, no entries');
  });

  test('state: all known Up → Up; any Down → Down; nothing known → Unknown', () => {
    assert.equal(healthStateOf(healthEntriesOf(pod('Running', [true, true]))), 'Up');
    assert.equal(healthStateOf(healthEntriesOf(pod('Running', [true, false]))), 'Down');
    assert.equal(healthStateOf(healthEntriesOf(pod('Pending', []))), 'Down');
    assert.equal(healthStateOf(healthEntriesOf(pod('Succeeded', []))), 'Unknown');
    assert.equal(healthStateOf(healthEntriesOf(pod('Succeeded', [false]))), 'Down', 'a finished container is not ready');
    assert.equal(healthStateOf([]), 'Unknown');
    assert.equal(healthStateOf([{ type: 'kubernetes/pod', source: 'Pod', state: 'Succeeded' }]), 'Succeeded');
    assert.equal(
      healthStateOf([
        { type: 'kubernetes/pod', source: 'Pod', state: 'Starting' },
        { type: 'kubernetes/container', source: 'Container c', state: 'Down' },
      ]),
      'Starting',
      'Starting wins over Down',
    );
  });

  test('counts by state; Succeeded and Failed only in total', () => {
    assert.deepEqual(instanceCountsOf(['Up', 'Up', 'Down', 'Unknown', 'Succeeded', 'Starting', 'OutOfService']), {
      total: 7,
      up: 2,
      down: 1,
      unknown: 1,
      outOfService: 1,
      starting: 1,
    });
  });
});

describe('monikers and classes', () => {
  test("a ReplicaSet's sequence is its rollout revision; kork's nulls for absent parts (stack and detail only from annotations)", () => {
    const replicaSet = rs(
      'hello-6d4cf56db6',
      {},
      { 'deployment.kubernetes.io/revision': '4', 'moniker.spinnaker.io/cluster': 'deployment hello' },
    );
    assert.deepEqual(korkMonikerOf(replicaSet), { app: 'hello', cluster: 'deployment hello', detail: null, stack: null, sequence: 4 });
    assert.deepEqual(korkMonikerOf(rs('web-prod-v007', {})), { app: 'web', cluster: 'web-prod', detail: null, stack: null, sequence: 7 });
    assert.deepEqual(korkMonikerOf(rs('a~b', {})), { app: null, cluster: null, detail: null, stack: null, sequence: null });
  });

  test('classes of §3.1, by kind and group', () => {
    assert.equal(spinnakerClassOf(rs('x', {})), 'serverGroups');
    assert.equal(spinnakerClassOf({ apiVersion: 'batch/v1', kind: 'CronJob' }), 'serverGroups');
    assert.equal(spinnakerClassOf({ apiVersion: 'apps/v1', kind: 'Deployment' }), 'serverGroupManagers');
    assert.equal(spinnakerClassOf({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' }), 'loadBalancers');
    assert.equal(spinnakerClassOf({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy' }), 'securityGroups');
    assert.equal(spinnakerClassOf({ apiVersion: 'v1', kind: 'Pod' }), 'instances');
    assert.equal(spinnakerClassOf({ apiVersion: 'example.com/v1', kind: 'ReplicaSet' }), 'unclassified');
  });

  test('ignored objects, creation time', () => {
    assert.equal(isIgnored(rs('x', {}, { 'caching.spinnaker.io/ignore': 'true' })), true);
    assert.equal(isIgnored(rs('x', {}, { 'caching.spinnaker.io/ignore': 'false' })), false);
    assert.equal(createdTimeOf({ metadata: { creationTimestamp: '2024-05-06T12:53:20Z' } }), 1715000000000);
    assert.equal(createdTimeOf({ metadata: {} }), null);
  });

  test('images of a pod template, init containers too, and of a CronJob', () => {
    const deployment = {
      spec: {
        template: { spec: { containers: [{ image: 'a:1' }, { image: 'b:1' }], initContainers: [{ image: 'a:1' }, { image: 'init:1' }] } },
      },
    };
    assert.deepEqual(imagesOf(deployment), ['a:1', 'b:1', 'init:1']);
    assert.deepEqual(imagesOf({ spec: { jobTemplate: { spec: { template: { spec: { containers: [{ image: 'cron:1' }] } } } } } }), [
      'cron:1',
    ]);
    assert.deepEqual(imagesOf({}), []);
  });
});

describe('load-balancer links', () => {
  test('a Service selects a ReplicaSet whose template carries every selector label', () => {
    assert.equal(serviceLinksTo(service('s', { app: 'web' }), rs('r', { app: 'web', tier: 'fe' })), true);
    assert.equal(serviceLinksTo(service('s', { app: 'web', tier: 'be' }), rs('r', { app: 'web', tier: 'fe' })), false);
    assert.equal(serviceLinksTo(service('s', {}), rs('r', { app: 'web' })), false, 'an empty selector links to nothing');
    const daemonSet = { ...rs('d', { app: 'web' }), kind: 'DaemonSet' };
    assert.equal(serviceLinksTo(service('s', { app: 'web' }), daemonSet), false, 'DaemonSets get no selector link');
    const statefulSet = { ...rs('db', {}), kind: 'StatefulSet', spec: { serviceName: 'db' } };
    assert.equal(serviceLinksTo(service('db', { other: 'x' }), statefulSet), true, "a StatefulSet's serviceName");
    assert.equal(serviceLinksTo(service('other', {}), statefulSet), false);
  });

  test('disabled: the annotation lists a load balancer and none is linked', () => {
    const annotated = { 'traffic.spinnaker.io/load-balancers': '["service web"]' };
    const services = [service('web', { app: 'web' })];
    assert.deepEqual(trafficOf(rs('on', { app: 'web' }, annotated), services), {
      loadBalancers: ['service web'],
      linked: services,
      disabled: false,
    });
    assert.deepEqual(trafficOf(rs('off', {}, annotated), services), { loadBalancers: ['service web'], linked: [], disabled: true });
    assert.deepEqual(trafficOf(rs('plain', {}), services), { loadBalancers: [], linked: [], disabled: false });
    assert.equal(trafficOf(rs('bad', {}, { 'traffic.spinnaker.io/load-balancers': 'not json' }), services).disabled, false);
  });

  test("a load balancer's instances carry one merged health object, the last entry winning", () => {
    const web = rs('web-1', { app: 'web' });
    const running = { ...pod('Running', [true, false]), metadata: { name: 'web-1-a', namespace: 'default', uid: 'pa' } };
    const view = loadBalancerView({ account: 'acct', object: service('web', { app: 'web' }) }, [
      { account: 'acct', object: web, pods: [running], services: [service('web', { app: 'web' })] },
    ]);
    const [sg] = view.serverGroups as Obj[];
    assert.deepEqual(sg, {
      name: 'replicaSet web-1',
      account: 'acct',
      region: 'default',
      cloudProvider: 'kubernetes',
      isDisabled: false,
      detachedInstances: [],
      instances: [
        {
          id: 'pa',
          name: 'pod web-1-a',
          zone: 'default',
          health: { type: 'kubernetes/container', source: 'Container c1', state: 'Down', platform: 'platform' },
        },
      ],
    });
    const pending = { ...pod(undefined), metadata: { name: 'web-1-b', namespace: 'default', uid: 'pb' } };
    const noStatus = loadBalancerView({ account: 'acct', object: service('web', {}) }, [
      { account: 'acct', object: web, pods: [pending], services: [] },
    ]);
    assert.equal((noStatus.serverGroups as Obj[])[0].instances[0].health.state, 'Unknown', 'a health object even without entries');
  });
});

describe('firewalls', () => {
  test('one rule per port: numbers, names, ranges, and port-less entries', () => {
    const policy = {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: 'deny', namespace: 'ns', annotations: { 'moniker.spinnaker.io/application': 'web' } },
      spec: {
        ingress: [{ ports: [{ port: 80, protocol: 'TCP' }, { port: 'http' }] }, { from: [] }],
        egress: [{ ports: [{ port: 8000, endPort: 8100, protocol: 'UDP' }] }],
      },
    };
    const view = securityGroupDetails({ account: 'acct', object: policy });
    assert.deepEqual(view.inboundRules, [
      { protocol: 'TCP', portRanges: [{ startPort: 80, endPort: 80, startPortName: null, endPortName: null }] },
      { protocol: 'TCP', portRanges: [{ startPort: null, endPort: null, startPortName: 'http', endPortName: 'http' }] },
      { protocol: null, portRanges: null },
    ]);
    assert.deepEqual(view.outboundRules, [
      { protocol: 'UDP', portRanges: [{ startPort: 8000, endPort: 8100, startPortName: null, endPortName: null }] },
    ]);
    assert.equal(view.application, 'web');
    assert.equal(view.id, 'networkPolicy deny');
    assert.deepEqual(view.summary, { id: 'networkPolicy deny', name: 'networkPolicy deny' });
  });
});
