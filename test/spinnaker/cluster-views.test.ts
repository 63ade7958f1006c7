/**
 * One application's clusters in one account (route #21 of the Deck contract, Clouddriver's `ClusterController`):
 * Gate's `/applications/{app}/clusters/{account}[/{cluster}[/{type}]]`, the cluster's server groups, and the dynamic
 * targets Orca asks for (current, previous, oldest, largest, fail and their aliases), against a gateway, the sandbox
 * and an agent. Fixture: Deployment `hello` deployed twice through Outpost's Deploy (Manifest) with Service `hello`
 * (cluster `deployment hello`, two ReplicaSets); ReplicaSets `canary-v000` (1 pod), `canary-v001` (3 pods) and
 * `canary-v002` (2 pods, its selector label removed: disabled) created a second apart, with Service `canary`; and
 * `solo-v000` alone in cluster `solo`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDrivers } from '../../testkit/databases.js';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';
import { tokenGateway } from '../../testkit/token-gateway.js';

const TOKENS = {
  agent: 'cluster-agent-token-0123456789abcdef',
  deck: 'cluster-deck-token-0123456789abcdefg',
  other: 'cluster-other-token-0123456789abcdef',
};
const CLUSTER_KEYS = ['name', 'moniker', 'type', 'accountName', 'application', 'serverGroups', 'loadBalancers'];
const MONIKER = (app: string, cluster: string) => ({ app, cluster, detail: null, stack: null, sequence: null });

for (const driver of testDrivers()) {
  describe(`a cluster's views and dynamic targets (${driver})`, { concurrency: false }, () => {
    let stack: Stack;
    let deck: OrcaClient;
    let other: OrcaClient;
    const store = () => stack.sandbox.store;
    const get = (path: string, client = deck) => client.get(path);
    const until = (path: string, ready: (body: Obj) => boolean) => deck.until(path, ready);
    /** Waits until the sandbox clock shows a later second (creation times have second precision). */
    const nextSecond = async () => {
      const start = new Date().toISOString().slice(0, 19);
      while (new Date().toISOString().slice(0, 19) === start) await sleep(20);
    };
    const replicaSet = (name: string, replicas: number, labels: Record<string, string>) =>
      store().create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name, namespace: 'default', annotations: { 'traffic.spinnaker.io/load-balancers': '["service canary"]' } },
        spec: {
          replicas,
          selector: { matchLabels: { rs: name } },
          template: { metadata: { labels: { rs: name, ...labels } }, spec: { containers: [{ name: 'c', image: `${name}:1` }] } },
        },
      });
    const hello = (image: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'hello' } },
        template: { metadata: { labels: { app: 'hello' } }, spec: { containers: [{ name: 'nginx', image }] } },
      },
    });
    const service = (name: string, selector: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { selector, ports: [{ port: 80, protocol: 'TCP' }] },
    });

    before(async () => {
      stack = await startStack({
        driver,
        gateway: {
          ...tokenGateway([
            { subject: 'agent', token: TOKENS.agent, roles: ['agent'], accounts: ['*'] },
            { subject: 'deck', token: TOKENS.deck, roles: ['spinnaker'], accounts: ['*'] },
            { subject: 'other', token: TOKENS.other, roles: ['spinnaker'], accounts: ['k8s-other'] },
          ]),
        },
        agents: [{ accounts: [{ name: 'k8s-dev', namespaces: ['default'] }], config: { clouddriver: { auth: { token: TOKENS.agent } } } }],
      });
      deck = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.deck}` });
      other = createOrcaClient(stack.gateway.httpUrl, { authorization: `Bearer ${TOKENS.other}` });
      for (const image of ['nginx:1.25', 'nginx:1.27']) {
        const manifests = image === 'nginx:1.25' ? [hello(image), service('hello', { app: 'hello' })] : [hello(image)];
        const outcome = await deck.run(
          'deployManifest',
          {
            account: 'k8s-dev',
            cloudProvider: 'kubernetes',
            source: 'text',
            moniker: { app: 'hello' },
            skipExpressionEvaluation: true,
            manifests,
          },
          true,
        );
        assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      }
      store().create(service('canary', { app: 'canary' }));
      replicaSet('canary-v000', 1, { app: 'canary' });
      await nextSecond();
      replicaSet('canary-v001', 3, { app: 'canary' });
      await nextSecond();
      replicaSet('canary-v002', 2, {});
      replicaSet('solo-v000', 1, {});
      await until(
        '/applications/canary/serverGroups',
        (b) => b.length === 3 && b.every((sg: Obj) => sg.instances.length === sg.capacity.desired),
      );
      await until('/applications/solo/serverGroups', (b) => b.length === 1);
      await until(
        '/applications/hello/serverGroups',
        (b) => b.length === 2 && b.some((sg: Obj) => sg.capacity.desired === 2 && sg.instanceCounts.up === 2),
      );
    });
    after(async () => {
      await stack?.close();
    });

    test('the clusters of an application in an account: names of their server groups and load balancers', async () => {
      const res = await get('/applications/canary/clusters/k8s-dev');
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, [
        {
          name: 'canary',
          account: 'k8s-dev',
          moniker: MONIKER('canary', 'canary'),
          loadBalancers: ['service canary'],
          serverGroups: ['replicaSet canary-v000', 'replicaSet canary-v001', 'replicaSet canary-v002'],
        },
      ]);
      const helloClusters = (await get('/applications/hello/clusters/k8s-dev')).body as Obj[];
      assert.deepEqual(
        helloClusters.map((c) => [c.name, c.loadBalancers, c.serverGroups.length]),
        [['deployment hello', ['service hello'], 2]],
      );
      const none = await get('/applications/nobody/clusters/k8s-dev');
      assert.equal(none.status, 404);
      assert.equal(none.body.message, 'No clusters found (application: nobody, account: k8s-dev)');
      assert.equal(none.body.path, '/applications/nobody/clusters/k8s-dev');
    });

    test('one cluster: its server groups in full and the load balancers linked to them; expand=false leaves both out', async () => {
      const list = (await get('/applications/hello/clusters/k8s-dev/deployment%20hello')).body as Obj[];
      assert.equal(list.length, 1, 'a set of one cluster');
      const cluster = list[0]!;
      assert.deepEqual(Object.keys(cluster).sort(), [...CLUSTER_KEYS].sort());
      assert.equal(cluster.name, 'deployment hello');
      assert.deepEqual(cluster.moniker, MONIKER('hello', 'deployment hello'));
      assert.equal(cluster.type, 'kubernetes');
      assert.equal(cluster.accountName, 'k8s-dev');
      assert.equal(cluster.application, 'hello');
      assert.equal(cluster.serverGroups.length, 2);
      for (const sg of cluster.serverGroups) {
        assert.ok(sg.name.startsWith('replicaSet hello-'), sg.name);
        assert.equal(sg.accountName, 'k8s-dev');
        assert.ok(Array.isArray(sg.instances));
        assert.equal(sg.moniker.cluster, 'deployment hello');
      }
      assert.deepEqual(
        cluster.loadBalancers.map((lb: Obj) => [lb.name, lb.serverGroups.length]),
        [['service hello', 2]],
      );
      const byType = await get('/applications/hello/clusters/k8s-dev/deployment%20hello/kubernetes');
      assert.equal(byType.status, 200);
      assert.deepEqual(byType.body, cluster, 'the same cluster, not in a list');
      const summary = (await get('/applications/hello/clusters/k8s-dev/deployment%20hello/kubernetes?expand=false')).body;
      assert.deepEqual([summary.serverGroups, summary.loadBalancers], [[], []]);
      const aws = await get('/applications/hello/clusters/k8s-dev/deployment%20hello/aws');
      assert.equal(aws.status, 404);
      assert.match(aws.body.message, /No cluster provider of type: aws/);
      const missing = await get('/applications/hello/clusters/k8s-dev/deployment%20nope');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.message, 'Cluster not found (application: hello, account: k8s-dev, name: deployment nope)');
      const bad = await get('/applications/hello/clusters/k8s-dev/deployment%20hello?expand=maybe');
      assert.equal(bad.status, 400);
    });

    test("a cluster's server groups, by region, and one of them", async () => {
      const all = (await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/serverGroups')).body as Obj[];
      assert.deepEqual(
        all.map((sg) => [sg.name, sg.capacity.desired, sg.disabled]),
        [
          ['replicaSet canary-v000', 1, false],
          ['replicaSet canary-v001', 3, false],
          ['replicaSet canary-v002', 2, true],
        ],
      );
      assert.deepEqual((await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/serverGroups?region=prod')).body, []);
      const one = await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/serverGroups/replicaSet%20canary-v001');
      assert.deepEqual(
        (one.body as Obj[]).map((sg) => sg.name),
        ['replicaSet canary-v001'],
      );
      const inRegion = await get(
        '/applications/canary/clusters/k8s-dev/canary/kubernetes/serverGroups/replicaSet%20canary-v001?region=default',
      );
      assert.equal(inRegion.body.name, 'replicaSet canary-v001', 'with a region: the server group itself');
      const missing = await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/serverGroups/replicaSet%20canary-v009');
      assert.equal(missing.status, 404);
      assert.equal(missing.body.message, 'Server group not found (account: k8s-dev, name: replicaSet canary-v009, type: kubernetes)');
    });

    test('dynamic targets: current, previous, oldest, largest, fail, their aliases and legacy suffixes, onlyEnabled', async () => {
      const target = async (t: string, query = '', cluster = 'canary', app = 'canary', scope = 'default') => {
        const res = await get(`/applications/${app}/clusters/k8s-dev/${cluster}/kubernetes/${scope}/serverGroups/target/${t}${query}`);
        return { status: res.status, name: res.body.name as string, message: res.body.message as string };
      };
      assert.equal((await target('current')).name, 'replicaSet canary-v002');
      assert.equal((await target('NEWEST')).name, 'replicaSet canary-v002');
      assert.equal((await target('current_asg_dynamic')).name, 'replicaSet canary-v002');
      assert.equal((await target('current', '?onlyEnabled=true')).name, 'replicaSet canary-v001', 'the disabled one is left out');
      assert.equal((await target('previous')).name, 'replicaSet canary-v001');
      assert.equal((await target('ancestor_asg')).name, 'replicaSet canary-v001');
      assert.equal((await target('oldest')).name, 'replicaSet canary-v000');
      assert.equal((await target('largest')).name, 'replicaSet canary-v001', 'three pods');
      const details = await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/default/serverGroups/target/largest');
      assert.equal(details.body.instances.length, 3, 'the full server group');
      const fail = await target('fail');
      assert.equal(fail.status, 404);
      assert.equal(
        fail.message,
        'More than one target found (scope: default, serverGroups: replicaSet canary-v000, replicaSet canary-v001, replicaSet canary-v002)',
      );
      assert.equal((await target('fail', '', 'solo', 'solo')).name, 'replicaSet solo-v000');
      assert.equal((await target('previous', '', 'solo', 'solo')).message, 'Target not found (target: previous)');
      assert.equal((await target('oldest', '', 'solo', 'solo')).status, 404, 'oldest needs two unless validateOldest=false');
      assert.equal((await target('oldest', '?validateOldest=false', 'solo', 'solo')).name, 'replicaSet solo-v000');
      assert.equal((await target('bogus')).message, 'Target not found (target: bogus)');
      const elsewhere = await target('current', '', 'canary', 'canary', 'prod');
      assert.equal(elsewhere.status, 404);
      assert.equal(elsewhere.message, 'No server groups found (account: k8s-dev, location: prod, cluster: canary, type: KUBERNETES)');
    });

    test('READ on the account is needed (403), an unknown account is a 404', async () => {
      const refused = await get('/applications/canary/clusters/k8s-dev', other);
      assert.equal(refused.status, 403);
      const refusedTarget = await get('/applications/canary/clusters/k8s-dev/canary/kubernetes/default/serverGroups/target/current', other);
      assert.equal(refusedTarget.status, 403);
      const unknown = await get('/applications/canary/clusters/k8s-nowhere');
      assert.equal(unknown.status, 404);
    });
  });
}
