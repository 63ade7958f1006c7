/**
 * Deck's infrastructure views of Outpost accounts, replayed as Gate forwards Deck's calls (§5.3 of the Deck contract),
 * against a gateway, the sandbox and an agent serving two accounts: `k8s-dev` (namespace `default`) and `k8s-prod`
 * (namespace `prod`). The fixture of §5.2 is deployed through Outpost's own Deploy (Manifest) — Deployment `hello` with
 * two ReplicaSets (an image change), Service `hello`, NetworkPolicy `hello-deny` — plus app `hello` in `prod` (so in
 * both accounts), a StatefulSet with its Service, a DaemonSet, a Job owned by a CronJob, a Service whose annotated
 * ReplicaSet lost its selector labels (disabled), an ignored Deployment, and the negative cases. Every answer is
 * checked field by field against §2's shapes, and the account rules of the `spinnaker` role filter every list.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testDrivers } from '../../testkit/databases.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

const TOKENS = {
  agent: 'infra-agent-token-0123456789abcdef',
  deck: 'infra-deck-all-token-0123456789abcd',
  deckDev: 'infra-deck-dev-token-0123456789abcd',
};
const HELLO = { 'moniker.spinnaker.io/application': 'hello', 'moniker.spinnaker.io/cluster': 'deployment hello' };

const helloDeployment = (image: string, namespace = 'default') => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'hello', namespace },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: 'hello' } },
    template: { metadata: { labels: { app: 'hello' } }, spec: { containers: [{ name: 'nginx', image }] } },
  },
});
const service = (name: string, selector: Record<string, string>, namespace = 'default', annotations: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace, annotations },
  spec: { selector, ports: [{ port: 80, protocol: 'TCP' }] },
});
const networkPolicy = {
  apiVersion: 'networking.k8s.io/v1',
  kind: 'NetworkPolicy',
  metadata: { name: 'hello-deny', namespace: 'default' },
  spec: { podSelector: { matchLabels: { app: 'hello' } }, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }] },
};

/** Exactly these keys (§2 lists every field Clouddriver serializes). */
function assertKeys(value: Obj, keys: string[], what: string): void {
  assert.deepEqual(Object.keys(value).sort(), [...keys].sort(), `${what}: ${JSON.stringify(value)}`);
}

const SUMMARY_KEYS = [
  'name',
  'account',
  'region',
  'cluster',
  'type',
  'cloudProvider',
  'application',
  'moniker',
  'isDisabled',
  'createdTime',
  'instances',
  'instanceCounts',
  'capacity',
  'loadBalancers',
  'securityGroups',
  'serverGroupManagers',
  'buildInfo',
  'labels',
  'vpcId',
  'instanceType',
  'providerMetadata',
  'targetGroups',
  'tags',
];
/** The fields every Kubernetes resource view has (Clouddriver's `KubernetesResource`). */
const RESOURCE_KEYS = [
  'name',
  'displayName',
  'kind',
  'apiVersion',
  'account',
  'namespace',
  'region',
  'cloudProvider',
  'createdTime',
  'labels',
  'moniker',
];
const MONIKER_KEYS = ['app', 'cluster', 'detail', 'stack', 'sequence'];
const COUNT_KEYS = ['total', 'up', 'down', 'unknown', 'outOfService', 'starting'];

for (const driver of testDrivers()) {
  describe(`Deck's infrastructure views from the cache (${driver})`, { concurrency: false }, () => {
    let stack: Stack;
    let deck: OrcaClient;
    let deckDev: OrcaClient;
    let orca: OrcaClient;

    const store = () => stack.sandbox.store;
    const create = (obj: Obj) => store().create(obj) as Obj;
    const get = async (path: string, client = deck) => {
      const res = await client.get(path);
      return res;
    };
    const until = (path: string, ready: (body: Obj) => boolean, client = deck) => client.until(path, ready);
    const deploy = async (account: string, manifests: Obj[], app = 'hello') => {
      const outcome = await orca.run(
        'deployManifest',
        { account, cloudProvider: 'kubernetes', source: 'text', moniker: { app }, skipExpressionEvaluation: true, manifests },
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    };
    const newestReplicaSet = () =>
      (store().list('apps/v1', 'ReplicaSet', 'default') as Obj[])
        .filter((rs) => rs.metadata.name.startsWith('hello-'))
        .sort(
          (a, b) =>
            Number(a.metadata.annotations['deployment.kubernetes.io/revision']) -
            Number(b.metadata.annotations['deployment.kubernetes.io/revision']),
        )
        .at(-1)!;

    before(async () => {
      stack = await startStack({
        driver,
        gateway: {
          ...tokenGateway([
            { subject: 'agent', token: TOKENS.agent, roles: ['agent'], accounts: ['*'] },
            { subject: 'deck', token: TOKENS.deck, roles: ['spinnaker'], accounts: ['*'] },
            { subject: 'deck-dev', token: TOKENS.deckDev, roles: ['spinnaker'], accounts: ['k8s-dev'] },
          ]),
        },
        agents: [
          {
            accounts: [
              { name: 'k8s-dev', namespaces: ['default'] },
              { name: 'k8s-prod', namespaces: ['prod'] },
            ],
            config: { clouddriver: { auth: { token: TOKENS.agent } } },
          },
        ],
      });
      deck = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.deck}` });
      deckDev = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.deckDev}` });
      orca = deck;
      create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } });

      // §5.2: the fixture, deployed as Spinnaker deploys it, then a new image (a second ReplicaSet).
      await deploy('k8s-dev', [helloDeployment('nginx:1.25'), service('hello', { app: 'hello' }), networkPolicy]);
      await deploy('k8s-dev', [helloDeployment('nginx:1.27')]);
      await deploy('k8s-prod', [helloDeployment('nginx:1.27', 'prod')]);

      // A StatefulSet with its Service, and a DaemonSet (app "store", by annotation).
      const storeApp = { 'moniker.spinnaker.io/application': 'store' };
      create(service('store-db', { app: 'store-db' }, 'default', storeApp));
      create({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: {
          name: 'store-db',
          namespace: 'default',
          annotations: { ...storeApp, 'moniker.spinnaker.io/cluster': 'statefulSet store-db' },
        },
        spec: {
          replicas: 1,
          serviceName: 'store-db',
          selector: { matchLabels: { app: 'store-db' } },
          template: { metadata: { labels: { app: 'store-db' } }, spec: { containers: [{ name: 'db', image: 'postgres:16' }] } },
        },
      });
      create({
        apiVersion: 'apps/v1',
        kind: 'DaemonSet',
        metadata: {
          name: 'store-agent',
          namespace: 'default',
          annotations: { ...storeApp, 'moniker.spinnaker.io/cluster': 'daemonSet store-agent' },
        },
        spec: {
          selector: { matchLabels: { app: 'store-agent' } },
          template: { metadata: { labels: { app: 'store-agent' } }, spec: { containers: [{ name: 'agent', image: 'busybox:1' }] } },
        },
      });
      // A Job owned by a CronJob (the sandbox runs no CronJob controller: the Job is created as it would create it).
      const cron = create({
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: {
          name: 'nightly',
          namespace: 'default',
          annotations: { 'moniker.spinnaker.io/application': 'batchy', 'moniker.spinnaker.io/cluster': 'cronJob nightly' },
        },
        spec: {
          schedule: '0 3 * * *',
          jobTemplate: { spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] } } } },
        },
      });
      create({
        apiVersion: 'batch/v1',
        kind: 'Job',
        metadata: {
          name: 'nightly-28000000',
          namespace: 'default',
          annotations: { 'moniker.spinnaker.io/application': 'batchy', 'moniker.spinnaker.io/cluster': 'cronJob nightly' },
          ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: cron.metadata.uid, controller: true }],
        },
        spec: {
          template: {
            metadata: { annotations: { 'sandbox.outpost.dev/run-ms': '600000' } },
            spec: { restartPolicy: 'Never', containers: [{ name: 'main', image: 'busybox:1.36' }] },
          },
        },
      });
      // Service "canary" selects app=canary: canary-v000 has the label, canary-v001 lost it (Disable Manifest).
      const canary = (name: string, labels: Record<string, string>) =>
        create({
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          metadata: {
            name,
            namespace: 'default',
            annotations: { 'traffic.spinnaker.io/load-balancers': '["service canary"]' },
          },
          spec: {
            replicas: 1,
            selector: { matchLabels: { rs: name } },
            template: { metadata: { labels: { rs: name, ...labels } }, spec: { containers: [{ name: 'c', image: 'canary:1' }] } },
          },
        });
      create(service('canary', { app: 'canary' }));
      canary('canary-v000', { app: 'canary' });
      canary('canary-v001', {});
      // Ignored by Clouddriver's caching: never shown.
      create({
        ...helloDeployment('nginx:1.25'),
        metadata: { name: 'hidden', namespace: 'default', annotations: { 'caching.spinnaker.io/ignore': 'true', ...HELLO } },
      });
    });
    after(async () => {
      await stack?.close();
    });

    test("Gate's application poller: every application with clusters, by account", async () => {
      const apps = (await until(
        '/applications?restricted=false&expand=true',
        (b) => b.some((a: Obj) => a.name === 'hello' && a.clusterNames['k8s-prod']) && b.some((a: Obj) => a.name === 'batchy'),
      )) as unknown as Obj[];
      assert.deepEqual(
        apps.map((a) => a.name),
        [...apps.map((a) => a.name)].sort(),
        'sorted by name',
      );
      const hello = apps.find((a) => a.name === 'hello')!;
      assertKeys(hello, ['name', 'attributes', 'clusterNames'], 'application');
      assert.deepEqual(hello.attributes, { name: 'hello' });
      assert.deepEqual(hello.clusterNames, { 'k8s-dev': ['deployment hello'], 'k8s-prod': ['deployment hello'] });
      assert.deepEqual(apps.find((a) => a.name === 'store')!.clusterNames, {
        'k8s-dev': ['daemonSet store-agent', 'statefulSet store-db'],
      });
      assert.deepEqual(apps.find((a) => a.name === 'batchy')!.clusterNames, { 'k8s-dev': ['cronJob nightly'] });
      const summary = await get('/applications?expand=false');
      assert.deepEqual(summary.body.find((a: Obj) => a.name === 'hello').clusterNames, {});
    });

    test('one application: its clusters by account (404 in Spring shape when it has none)', async () => {
      const res = await get('/applications/hello');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, {
        name: 'hello',
        attributes: { name: 'hello', cloudProviders: 'kubernetes' },
        clusters: {
          'k8s-dev': [{ name: 'deployment hello', provider: 'kubernetes', loadBalancers: [], serverGroups: [] }],
          'k8s-prod': [{ name: 'deployment hello', provider: 'kubernetes', loadBalancers: [], serverGroups: [] }],
        },
      });
      const missing = await get('/applications/nope');
      assert.equal(missing.status, 404);
      assertKeys(missing.body, ['timestamp', 'status', 'error', 'message', 'path'], 'Spring error');
      assert.equal(missing.body.error, 'Not Found');
      assert.equal(missing.body.path, '/applications/nope');
    });

    test('Clusters tab: cluster names, then server groups with their pods', async () => {
      assert.deepEqual((await get('/applications/hello/clusters')).body, {
        'k8s-dev': ['deployment hello'],
        'k8s-prod': ['deployment hello'],
      });
      const rs = newestReplicaSet();
      const list = (await until(
        '/applications/hello/serverGroups?expand=false',
        (b) =>
          b.some((sg: Obj) => sg.name === `replicaSet ${rs.metadata.name}` && sg.account === 'k8s-dev' && sg.instanceCounts.up === 2) &&
          b.some((sg: Obj) => sg.account === 'k8s-prod' && sg.instanceCounts.up === 2),
      )) as unknown as Obj[];
      const dev = list.filter((sg) => sg.account === 'k8s-dev');
      assert.equal(dev.length, 2, JSON.stringify(dev.map((sg) => sg.name)));
      assert.equal(list.filter((sg) => sg.account === 'k8s-prod').length, 1);
      for (const sg of list) {
        assertKeys(sg, SUMMARY_KEYS, 'server group summary');
        assertKeys(sg.moniker, MONIKER_KEYS, 'moniker');
        assertKeys(sg.instanceCounts, COUNT_KEYS, 'instanceCounts');
        assert.equal(sg.type, 'kubernetes');
        assert.equal(sg.cloudProvider, 'kubernetes');
        assert.equal(sg.cluster, 'deployment hello');
        assert.equal(sg.application, null);
        assert.ok(sg.name.startsWith('replicaSet hello-'));
        assert.deepEqual(sg.serverGroupManagers, [{ account: sg.account, location: sg.region, name: 'hello' }]);
        assert.ok(Array.isArray(sg.instances));
        assert.deepEqual(sg.securityGroups, []);
        for (const key of ['vpcId', 'instanceType', 'providerMetadata', 'targetGroups', 'tags']) assert.equal(sg[key], null, key);
        assert.equal(typeof sg.createdTime, 'number');
      }
      const current = dev.find((sg) => sg.name === `replicaSet ${rs.metadata.name}`)!;
      assert.equal(current.region, 'default');
      assert.deepEqual(current.moniker, { app: 'hello', cluster: 'deployment hello', detail: null, stack: null, sequence: 2 });
      assert.equal(current.isDisabled, false);
      assert.deepEqual(current.capacity, { min: null, max: null, desired: 2, pinned: false });
      assert.deepEqual(current.instanceCounts, { total: 2, up: 2, down: 0, unknown: 0, outOfService: 0, starting: 0 });
      assert.deepEqual(current.loadBalancers, ['service hello']);
      assert.deepEqual(current.buildInfo, { images: ['nginx:1.27'] });
      assert.equal(current.labels.app, 'hello');
      const pods = (store().list('v1', 'Pod', 'default') as Obj[]).filter((p) => p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid);
      assert.deepEqual(current.instances.map((i: Obj) => i.id).sort(), pods.map((p) => p.metadata.uid).sort());
      for (const instance of current.instances) {
        assertKeys(instance, ['id', 'name', 'healthState', 'health', 'launchTime', 'availabilityZone'], 'instance summary');
        assert.ok(instance.name.startsWith(`pod ${rs.metadata.name}-`));
        assert.equal(instance.healthState, 'Up');
        assert.equal(instance.launchTime, null);
        assert.equal(instance.availabilityZone, 'default');
        assert.deepEqual(instance.health, [
          { type: 'kubernetes/pod', state: 'Up', status: null },
          { type: 'kubernetes/container', state: 'Up', status: null },
        ]);
      }
      const old = dev.find((sg) => sg !== current)!;
      assert.equal(old.moniker.sequence, 1);
      assert.equal(old.capacity.desired, 0);
      assert.deepEqual(old.buildInfo, { images: ['nginx:1.25'] });
      // The clusters filter Gate sends for very large applications.
      const filtered = (await get('/applications/hello/serverGroups?expand=false&clusters=k8s-prod:deployment%20hello')).body as Obj[];
      assert.deepEqual(
        filtered.map((sg) => sg.account),
        ['k8s-prod'],
      );
    });

    test('server-group managers: the Deployment with its ReplicaSets', async () => {
      const managers = (await get('/applications/hello/serverGroupManagers')).body as Obj[];
      const dev = managers.find((m) => m.account === 'k8s-dev')!;
      assertKeys(dev, [...RESOURCE_KEYS, 'serverGroups'], 'manager');
      assert.equal(dev.name, 'deployment hello');
      assert.equal(dev.displayName, 'hello');
      assert.equal(dev.kind, 'deployment');
      assert.equal(dev.apiVersion, 'apps/v1');
      assert.equal(dev.region, 'default');
      assert.deepEqual(dev.moniker, { app: 'hello', cluster: 'deployment hello', detail: null, stack: null, sequence: null });
      assert.equal(dev.serverGroups.length, 2);
      for (const sg of dev.serverGroups) {
        assertKeys(sg, ['name', 'account', 'namespace', 'region', 'moniker'], 'manager server group');
        assert.equal(sg.account, 'k8s-dev');
      }
      assert.deepEqual(dev.serverGroups.map((sg: Obj) => sg.moniker.sequence).sort(), [1, 2]);
      assert.ok(managers.some((m) => m.account === 'k8s-prod' && m.region === 'prod'));
      assert.ok(!managers.some((m) => m.displayName === 'hidden'), 'ignored objects are not shown');
    });

    test('Load Balancers tab: the Service with the server groups it selects, every instance with a health object', async () => {
      const lbs = (await get('/applications/hello/loadBalancers')).body as Obj[];
      assert.equal(lbs.length, 1);
      const lb = lbs[0]!;
      assertKeys(lb, [...RESOURCE_KEYS, 'type', 'serverGroups'], 'load balancer');
      assert.equal(lb.name, 'service hello');
      assert.equal(lb.type, 'kubernetes');
      assert.equal(lb.apiVersion, 'v1');
      assert.equal(lb.moniker.app, 'hello');
      assert.equal(lb.serverGroups.length, 2, 'both ReplicaSets carry app=hello');
      for (const sg of lb.serverGroups) {
        assertKeys(sg, ['name', 'account', 'region', 'cloudProvider', 'isDisabled', 'detachedInstances', 'instances'], 'LB server group');
        assert.deepEqual(sg.detachedInstances, []);
        for (const instance of sg.instances) {
          assertKeys(instance, ['id', 'name', 'zone', 'health'], 'LB instance');
          assert.equal(instance.health.state, 'Up');
          assert.equal(instance.health.type, 'kubernetes/container');
          assert.equal(instance.health.source, 'Container nginx');
        }
      }
    });

    test('server-group details (kind case-insensitive), instance details, and their 404s', async () => {
      // Gate reads the account first (for insightActions): it must answer.
      const credentials = await get('/credentials/k8s-dev');
      assert.equal(credentials.status, 200);
      assert.equal(credentials.body.name, 'k8s-dev');
      assert.equal(credentials.body.cloudProvider, 'kubernetes');
      const rs = newestReplicaSet();
      const path = `/applications/hello/serverGroups/k8s-dev/default/replicaset%20${rs.metadata.name}?includeDetails=false`;
      const details = (await get(path)).body;
      for (const key of [
        ...RESOURCE_KEYS,
        'type',
        'disabled',
        'isDisabled',
        'instances',
        'instanceCounts',
        'capacity',
        'loadBalancers',
        'serverGroupManagers',
        'buildInfo',
        'securityGroups',
        'zones',
        'launchConfig',
        'imagesSummary',
        'imageSummary',
        'extraAttributes',
      ]) {
        assert.ok(key in details, `${key} in ${JSON.stringify(details)}`);
      }
      assert.equal(details.kind, 'replicaSet');
      assert.equal(details.name, `replicaSet ${rs.metadata.name}`);
      assert.equal(details.displayName, rs.metadata.name);
      assert.equal(details.apiVersion, 'apps/v1');
      assert.equal(details.disabled, false);
      assert.equal(details.capacity.desired, 2);
      assert.deepEqual(details.zones, []);
      assert.deepEqual(details.imagesSummary, {
        summaries: [
          { serverGroupName: rs.metadata.name, buildInfo: { images: ['nginx:1.27'] }, imageId: null, imageName: null, image: null },
        ],
      });
      assert.equal(details.instances.length, 2);
      const pod = details.instances[0];
      assert.equal(pod.kind, 'pod');
      assert.deepEqual(pod.health[0], { type: 'kubernetes/pod', source: 'Pod', state: 'Up', platform: 'platform' });

      const instance = (await get(`/instances/k8s-dev/default/${encodeURIComponent(pod.humanReadableName)}`)).body;
      assertKeys(
        instance,
        [
          'name',
          'humanReadableName',
          'displayName',
          'kind',
          'apiVersion',
          'account',
          'namespace',
          'zone',
          'labels',
          'moniker',
          'createdTime',
          'launchTime',
          'healthState',
          'health',
          'cloudProvider',
          'providerType',
        ],
        'instance',
      );
      assert.equal(instance.zone, 'default');
      assert.equal(instance.apiVersion, 'v1');
      assert.equal(instance.humanReadableName, `pod ${instance.displayName}`);
      assert.equal(instance.healthState, 'Up');
      assert.deepEqual(instance.health[1], { type: 'kubernetes/container', source: 'Container nginx', state: 'Up', platform: 'platform' });
      assert.equal(instance.moniker.app, 'hello', 'pods carry the template annotations');

      for (const missing of [
        '/applications/hello/serverGroups/k8s-dev/default/replicaSet%20nope',
        '/applications/hello/serverGroups/k8s-dev/default/nokind',
        '/applications/hello/serverGroups/k8s-dev/default/deployment%20hello',
        '/applications/hello/serverGroups/nope/default/replicaSet%20x',
        '/instances/k8s-dev/default/pod%20nope',
        '/securityGroups/k8s-dev/kubernetes/default/networkPolicy%20nope',
      ]) {
        const res = await get(missing);
        assert.equal(res.status, 404, `${missing}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error, 'Not Found');
      }
    });

    test("an instance's console output: every container's log read live, a gone pod's Error entry, READ needed", async () => {
      const groups = (await get('/applications/hello/serverGroups?expand=false')).body as unknown as Obj[];
      const pod = groups.find((g) => g.account === 'k8s-dev' && g.instances.length > 0)!.instances[0];
      const path = `/instances/k8s-dev/default/${encodeURIComponent(pod.name)}/console?provider=kubernetes`;
      const res = await get(path);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['output']);
      assert.deepEqual(
        res.body.output.map((o: Obj) => o.name),
        ['nginx'],
      );
      assert.match(res.body.output[0].output, /starting container from image nginx:1\.2/);
      const gone = await get('/instances/k8s-dev/default/pod%20nope/console?provider=kubernetes');
      assert.equal(gone.status, 200);
      assert.deepEqual(gone.body, { output: [{ name: 'Error', output: 'Failed to retrieve pod data; pod may have been deleted.' }] });
      assert.equal((await get('/instances/k8s-dev/default/nokind/console')).status, 400);
      assert.equal((await get('/instances/k8s-prod/prod/pod%20x/console', deckDev)).status, 403);
    });

    test('StatefulSet with its Service, DaemonSet, and a CronJob and its Job', async () => {
      const sgs = (await until(
        '/applications/store/serverGroups',
        (b) => b.length === 2 && b.every((sg: Obj) => sg.instanceCounts.total === 1),
      )) as unknown as Obj[];
      const db = sgs.find((sg) => sg.name === 'statefulSet store-db')!;
      assert.deepEqual(db.loadBalancers, ['service store-db']);
      assert.equal(db.isDisabled, false);
      assert.deepEqual(db.serverGroupManagers, []);
      const daemon = sgs.find((sg) => sg.name === 'daemonSet store-agent')!;
      assert.deepEqual(daemon.loadBalancers, []);
      assert.equal(daemon.capacity.desired, 0);
      const lbs = (await get('/applications/store/loadBalancers')).body as Obj[];
      assert.deepEqual(
        lbs.map((lb) => [lb.name, lb.serverGroups.map((sg: Obj) => sg.name)]),
        [['service store-db', ['statefulSet store-db']]],
      );
      const batch = (await until('/applications/batchy/serverGroups', (b) =>
        b.some((sg: Obj) => sg.instanceCounts.total === 1),
      )) as unknown as Obj[];
      const job = batch.find((sg) => sg.name === 'job nightly-28000000')!;
      assert.equal(job.instances.length, 1);
      const cron = batch.find((sg) => sg.name === 'cronJob nightly')!;
      assert.deepEqual(cron.instances, [], 'pods point at the Job, not the CronJob');
      assert.deepEqual(cron.buildInfo, { images: ['busybox:1.36'] });
    });

    test('a ReplicaSet whose selector labels were removed is disabled; the Service lists only the enabled one', async () => {
      const sgs = (await until('/applications/canary/serverGroups', (b) => b.length === 2)) as unknown as Obj[];
      const v000 = sgs.find((sg) => sg.name === 'replicaSet canary-v000')!;
      const v001 = sgs.find((sg) => sg.name === 'replicaSet canary-v001')!;
      assert.equal(v000.isDisabled, false);
      assert.equal(v001.isDisabled, true);
      assert.deepEqual(v001.loadBalancers, ['service canary']);
      assert.equal(v001.moniker.sequence, 1, 'Frigga sequence');
      assert.equal(v001.cluster, 'canary');
      const details = (await get('/applications/canary/serverGroups/k8s-dev/default/replicaSet%20canary-v001')).body;
      assert.equal(details.disabled, true);
      const lbs = (await get('/applications/canary/loadBalancers')).body as Obj[];
      assert.deepEqual(
        lbs[0]!.serverGroups.map((sg: Obj) => [sg.name, sg.isDisabled]),
        [['replicaSet canary-v000', false]],
      );
    });

    test('Firewalls tab: the index, the search by application, the details', async () => {
      const index = await until('/securityGroups', (b) => b['k8s-dev'] !== undefined);
      assert.deepEqual(index['k8s-dev'], {
        kubernetes: { default: [{ id: 'networkPolicy hello-deny', name: 'networkPolicy hello-deny' }] },
      });
      const search = (await get('/search?q=hello&type=securityGroups&pageSize=500')).body as Obj[];
      assert.equal(search.length, 1);
      assertKeys(search[0]!, ['totalMatches', 'pageNumber', 'pageSize', 'platform', 'query', 'results'], 'search result set');
      assert.equal(search[0]!.platform, 'kubernetes');
      assert.equal(search[0]!.query, 'hello');
      assert.equal(search[0]!.pageSize, 500);
      const hit = search[0]!.results.find((r: Obj) => r.account === 'k8s-dev')!;
      assert.deepEqual(hit, {
        provider: 'kubernetes',
        type: 'securityGroups',
        group: 'networkPolicy',
        kubernetesKind: 'networkPolicy',
        account: 'k8s-dev',
        namespace: 'default',
        region: 'default',
        name: 'networkPolicy hello-deny',
        id: 'networkPolicy hello-deny',
        application: 'hello',
      });
      const details = (await get('/securityGroups/k8s-dev/kubernetes/default/networkPolicy%20hello-deny?vpcId=')).body;
      assert.equal(details.id, 'networkPolicy hello-deny');
      assert.equal(details.application, 'hello');
      assert.equal(details.accountName, 'k8s-dev');
      assert.deepEqual(details.summary, { id: 'networkPolicy hello-deny', name: 'networkPolicy hello-deny' });
      assert.deepEqual(details.inboundRules, [
        { protocol: 'TCP', portRanges: [{ startPort: 80, endPort: 80, startPortName: null, endPortName: null }] },
      ]);
      assert.deepEqual(details.outboundRules, []);
    });

    test('search over every Kubernetes type, paged; server groups by id', async () => {
      const all = (await get('/search?q=hello&pageSize=500')).body[0];
      const types = new Set(all.results.map((r: Obj) => r.type));
      for (const type of ['applications', 'serverGroups', 'instances', 'loadBalancers', 'securityGroups', 'serverGroupManagers']) {
        assert.ok(types.has(type), `${type} among ${[...types]}`);
      }
      assert.deepEqual(
        all.results.find((r: Obj) => r.type === 'applications'),
        { provider: 'kubernetes', type: 'applications', group: 'applications', name: 'hello', application: 'hello' },
      );
      const pod = all.results.find((r: Obj) => r.type === 'instances');
      assert.equal(pod.instanceId, pod.name);
      assert.equal(pod.application, undefined, 'pods are linked to no application');
      const page1 = (await get('/search?q=hello&type=serverGroups&pageSize=2&page=1')).body[0];
      const page2 = (await get('/search?q=hello&type=serverGroups&pageSize=2&page=2')).body[0];
      assert.equal(page1.totalMatches, 3);
      assert.equal(page1.results.length, 2);
      assert.equal(page2.results.length, 1);
      assert.equal(page2.pageNumber, 2);
      assert.equal((await get('/search?q=hello&type=projects')).body[0].totalMatches, 0);
      // platform chooses the providers: kubernetes is Outpost's; another finds nothing (Clouddriver's merged shape)
      assert.equal((await get('/search?q=hello&type=serverGroups&platform=kubernetes')).body[0].totalMatches, 3);
      assert.deepEqual((await get('/search?q=hello&type=serverGroups&platform=aws&pageSize=5')).body, [
        { totalMatches: 0, pageNumber: 1, pageSize: 5, platform: 'aws', query: 'hello', results: [] },
      ]);
      // other keys are filters, ignored as Clouddriver's Kubernetes search provider ignores them
      assert.equal((await get('/search?q=hello&type=serverGroups&account=nowhere')).body[0].totalMatches, 3);

      const rs = newestReplicaSet();
      const byId = (await get(`/serverGroups?ids=k8s-dev:default:replicaSet%20${rs.metadata.name},k8s-dev:default:replicaSet%20nope`))
        .body as Obj[];
      assert.deepEqual(
        byId.map((sg) => sg.name),
        [`replicaSet ${rs.metadata.name}`],
      );
      assertKeys(byId[0]!, SUMMARY_KEYS, '/serverGroups entry');
      const byApp = (await get('/serverGroups?applications=hello,store')).body as Obj[];
      assert.equal(byApp.length, 5);
      assert.equal((await get('/serverGroups')).status, 400);
    });

    test('unknown applications answer empty lists, not errors', async () => {
      assert.deepEqual((await get('/applications/nope/clusters')).body, {});
      assert.deepEqual((await get('/applications/nope/serverGroups?expand=false')).body, []);
      assert.deepEqual((await get('/applications/nope/serverGroupManagers')).body, []);
      assert.deepEqual((await get('/applications/nope/loadBalancers')).body, []);
    });

    test("the spinnaker rule's accounts (and X-SPINNAKER-ACCOUNTS) filter every list; other accounts' objects are refused", async () => {
      const apps = (await get('/applications', deckDev)).body as Obj[];
      assert.deepEqual(apps.find((a) => a.name === 'hello')!.clusterNames, { 'k8s-dev': ['deployment hello'] });
      assert.deepEqual((await get('/applications/hello/clusters', deckDev)).body, { 'k8s-dev': ['deployment hello'] });
      const sgs = (await get('/applications/hello/serverGroups', deckDev)).body as Obj[];
      assert.ok(sgs.length === 2 && sgs.every((sg) => sg.account === 'k8s-dev'));
      const managers = (await get('/applications/hello/serverGroupManagers', deckDev)).body as Obj[];
      assert.ok(managers.every((m) => m.account === 'k8s-dev'));
      const search = (await get('/search?q=hello&pageSize=500', deckDev)).body[0];
      assert.ok(search.results.every((r: Obj) => r.account === undefined || r.account === 'k8s-dev'));
      const prodRs = (store().list('apps/v1', 'ReplicaSet', 'prod') as Obj[])[0]!;
      const refused = await get(`/applications/hello/serverGroups/k8s-prod/prod/replicaSet%20${prodRs.metadata.name}`, deckDev);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal((await get(`/applications/hello/serverGroups/k8s-prod/prod/replicaSet%20${prodRs.metadata.name}`)).status, 200);
      assert.equal((await get('/instances/k8s-prod/prod/pod%20x', deckDev)).status, 403);
      assert.equal((await get(`/serverGroups?ids=k8s-prod:prod:replicaSet%20${prodRs.metadata.name}`, deckDev)).body.length, 0);
      // The header narrows what the wide rule allows.
      const narrowed = createOrcaClient(stack.gateway.httpUrl, {
        authorization: `Bearer ${TOKENS.deck}`,
        'x-spinnaker-accounts': 'k8s-prod',
      });
      assert.deepEqual((await narrowed.get('/applications/hello/clusters')).body, { 'k8s-prod': ['deployment hello'] });
      assert.deepEqual((await narrowed.get('/securityGroups')).body, {});
    });
  });
}
