/**
 * Deploy (Manifest) as Orca runs it, end to end over real sockets against the sandbox: deploy → monitor the task →
 * promote outputs → wait for stable (reading manifests as WaitForManifestStableTask does) → cleanupArtifacts. A plain
 * Deployment; a versioned ConfigMap bound into a Deployment (identical content reuses its version, new content gets
 * the next one, max-version-history cleans up); red/black with a Service (traffic attached at deploy, the old version
 * disabled, versions found through the dynamic cluster lookup); Find Artifacts From Resource; the manifest read's
 * kind spellings and 404s.
 * Runs on PGlite only: the database side of the Clouddriver API runs on both drivers in task-lifecycle.test.ts and
 * on Postgres in orca-forwarded.test.ts; these suites add the cluster path, the same on either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startStack, type Stack } from '../../testkit/stack.js';
import { createOrcaClient, type Obj, type OrcaClient } from './orca-client.js';

const deployment = (name: string, image: string, extra: Obj = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'demo' },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'main', image }], ...extra } },
  },
});

/** What Orca's DeployManifestTask sends: the stage context plus source and enableTraffic. */
const deployStage = (manifests: Obj[], extra: Obj = {}) => ({
  account: 'sandbox',
  cloudProvider: 'kubernetes',
  source: 'text',
  manifests,
  moniker: { app: 'orca' },
  skipExpressionEvaluation: false,
  trafficManagement: { enabled: false, options: { enableTraffic: false, services: [] } },
  enableTraffic: true,
  type: 'deployManifest',
  name: 'Deploy (Manifest)',
  refId: '1',
  requisiteStageRefIds: [],
  ...extra,
});

for (const driver of ['pglite'] as const) {
  describe(`Deploy (Manifest) through the Clouddriver API (${driver})`, { concurrency: false }, () => {
    let system: Stack;
    let orca: OrcaClient;
    const get = (apiVersion: string, kind: string, name: string) =>
      system.sandbox.store.get(apiVersion, kind, 'demo', name) as Obj | undefined;

    /** Deploy → monitor → promote → wait for stable → cleanup, as the stage's task graph runs. */
    const deployAndWait = async (manifests: Obj[], extra: Obj = {}) => {
      const outcome = await orca.run('deployManifest', deployStage(manifests, extra), true);
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      const outputs = outcome.outputs;
      assert.ok(outputs.manifestNamesByNamespace, 'the first result object carries the outputs');
      const stable = await orca.waitStable('sandbox', outputs.manifestNamesByNamespace!);
      assert.equal(stable.status, 'SUCCEEDED', stable.messages.join('; '));
      const cleanup = await orca.run(
        'cleanupArtifacts',
        { manifests: outputs.manifests, account: 'sandbox', cloudProvider: 'kubernetes' },
        false,
      );
      assert.equal(cleanup.status, 'SUCCEEDED', JSON.stringify(cleanup.task));
      return { outcome, cleanup };
    };

    before(async () => {
      system = await startStack({ driver, agents: [{ id: 'agent-1', account: { name: 'sandbox' } }] });
      orca = createOrcaClient(system.gateway.httpUrl, { 'X-SPINNAKER-USER': 'alice@example.com' });
    });
    after(async () => {
      await system?.close();
    });

    test('a plain Deployment: annotated and labelled as Clouddriver does, its outputs promoted, stable, cleanup does nothing', async () => {
      const { outcome, cleanup } = await deployAndWait([deployment('orca-web', 'nginx:1.25')]);
      const result = outcome.outputs;
      assert.deepEqual(result.manifestNamesByNamespace, { demo: ['deployment orca-web'] });
      assert.deepEqual(result.createdArtifacts, [
        {
          type: 'kubernetes/deployment',
          name: 'orca-web',
          location: 'demo',
          version: '',
          reference: 'orca-web',
          customKind: false,
          metadata: { account: 'sandbox' },
        },
      ]);
      assert.equal(result.manifests?.[0]?.metadata.name, 'orca-web');
      const live = get('apps/v1', 'Deployment', 'orca-web')!;
      const a = live.metadata.annotations;
      assert.equal(a['moniker.spinnaker.io/application'], 'orca');
      assert.equal(a['moniker.spinnaker.io/cluster'], 'deployment orca-web');
      assert.equal(a['artifact.spinnaker.io/type'], 'kubernetes/deployment');
      assert.equal(a['artifact.spinnaker.io/name'], 'orca-web');
      assert.equal(a['artifact.spinnaker.io/location'], 'demo');
      assert.equal(live.metadata.labels['app.kubernetes.io/managed-by'], 'spinnaker');
      assert.equal(live.metadata.labels['app.kubernetes.io/name'], 'orca');
      assert.equal(live.spec.template.metadata.annotations['moniker.spinnaker.io/application'], 'orca');
      assert.deepEqual(cleanup.task.resultObjects, [
        { manifestNamesByNamespace: {}, manifests: null, createdArtifacts: [], boundArtifacts: [] },
      ]);
    });

    test('Find Artifacts From Resource and the manifest read: kind spellings, status, artifacts, warnings, 404s', async () => {
      for (const name of ['deployment orca-web', 'Deployment orca-web', 'deploy orca-web', 'deployment.apps orca-web']) {
        const res = await orca.manifest('sandbox', 'demo', name);
        assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.name, 'deployment orca-web');
        assert.equal(res.body.location, 'demo');
        assert.equal(res.body.account, 'sandbox');
        assert.deepEqual(res.body.warnings, []);
        assert.deepEqual(res.body.moniker, { app: 'orca', cluster: 'deployment orca-web' });
        assert.deepEqual(
          res.body.artifacts.find((x: Obj) => x.type === 'docker/image'),
          { type: 'docker/image', name: 'nginx', reference: 'nginx:1.25' },
        );
        assert.equal(typeof res.body.status.stable.state, 'boolean');
        assert.equal(res.body.manifest.kind, 'Deployment');
      }
      const ns = await orca.get('/manifests/sandbox/_/namespace%20demo?includeEvents=false');
      assert.equal(ns.status, 200, JSON.stringify(ns.body));
      assert.equal(ns.body.status.stable.state, true);
      const short = await orca.get('/manifests/sandbox/namespace%20demo');
      assert.equal(short.status, 200);
      for (const [path, what] of [
        ['/manifests/sandbox/demo/deployment%20missing', 'a missing object'],
        ['/manifests/sandbox/demo/orca-web', 'a name without a kind'],
        ['/manifests/nope/demo/deployment%20orca-web', 'an unknown account'],
      ]) {
        const res = await orca.get(path!);
        assert.equal(res.status, 404, what);
        assert.equal(res.body.error, 'Not Found', what);
      }
    });

    test('a versioned ConfigMap bound into a Deployment: v000, reused when identical, v001 when changed, old versions cleaned up', async () => {
      const cm = (data: Obj) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'orca-cfg', namespace: 'demo', annotations: { 'strategy.spinnaker.io/max-version-history': '1' } },
        data,
      });
      const dep = deployment('orca-app', 'nginx:1', { volumes: [{ name: 'cfg', configMap: { name: 'orca-cfg' } }] });
      let { outcome } = await deployAndWait([dep, cm({ a: '1' })]);
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace?.demo?.sort(), ['configMap orca-cfg-v000', 'deployment orca-app']);
      assert.equal(get('apps/v1', 'Deployment', 'orca-app')!.spec.template.spec.volumes[0].configMap.name, 'orca-cfg-v000');
      assert.ok(
        outcome.outputs.boundArtifacts?.some((b) => b.type === 'kubernetes/configMap' && b.reference === 'orca-cfg-v000'),
        JSON.stringify(outcome.outputs.boundArtifacts),
      );
      assert.equal(get('v1', 'ConfigMap', 'orca-cfg-v000')!.metadata.labels['moniker.spinnaker.io/sequence'], '0');

      ({ outcome } = await deployAndWait([dep, cm({ a: '1' })]));
      assert.ok(outcome.outputs.manifestNamesByNamespace?.demo?.includes('configMap orca-cfg-v000'), 'identical content reuses v000');
      assert.equal(get('v1', 'ConfigMap', 'orca-cfg-v001'), undefined);

      const { cleanup } = await deployAndWait([dep, cm({ a: '2' })]);
      assert.ok(get('v1', 'ConfigMap', 'orca-cfg-v001'));
      assert.equal(get('apps/v1', 'Deployment', 'orca-app')!.spec.template.spec.volumes[0].configMap.name, 'orca-cfg-v001');
      assert.deepEqual(
        cleanup.task.resultObjects[0].manifestNamesByNamespace,
        { demo: ['configMap orca-cfg-v000'] },
        'max-version-history 1 keeps only the newest',
      );
      assert.equal(get('v1', 'ConfigMap', 'orca-cfg-v000'), undefined);
    });

    test('red/black with a Service: traffic attached at deploy, the previous version disabled, versions found by the dynamic lookup; highlander disables and deletes every older version', async () => {
      const svc = {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'orca-rb', namespace: 'demo' },
        spec: { selector: { lb: 'orca-rb' }, ports: [{ port: 80 }] },
      };
      await deployAndWait([svc]);
      const rs = (image: string) => ({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'orca-rb', namespace: 'demo' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'orca-rb' } },
          template: { metadata: { labels: { app: 'orca-rb' } }, spec: { containers: [{ name: 'main', image }] } },
        },
      });
      const traffic = {
        services: ['service orca-rb'],
        strategy: 'RED_BLACK',
        enableTraffic: true,
        trafficManagement: { enabled: true, options: { enableTraffic: true, services: ['service orca-rb'], strategy: 'redblack' } },
      };
      let { outcome } = await deployAndWait([rs('nginx:1')], traffic);
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: ['replicaSet orca-rb-v000'] });
      const v0 = get('apps/v1', 'ReplicaSet', 'orca-rb-v000')!;
      assert.equal(v0.spec.template.metadata.labels.lb, 'orca-rb', 'enableTraffic adds the Service selector to the template');
      assert.equal(v0.metadata.annotations['traffic.spinnaker.io/load-balancers'], '["service orca-rb"]');
      ({ outcome } = await deployAndWait([rs('nginx:2')], traffic));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: ['replicaSet orca-rb-v001'] });

      // Orca finds the older versions of the cluster (through the cache, once the agent reported v001), then disables them.
      let versions: Obj[] = [];
      for (const deadline = Date.now() + 60_000; versions.length < 2; ) {
        assert.ok(Date.now() < deadline, `the cache lists both versions (have ${JSON.stringify(versions)})`);
        const res = await orca.get(`/manifests/sandbox/demo/replicaSet/cluster/orca/${encodeURIComponent('replicaSet orca-rb')}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        versions = res.body as unknown as Obj[];
        if (versions.length < 2) await new Promise((r) => setTimeout(r, 25));
      }
      assert.deepEqual(versions, [
        { kind: 'replicaSet', namespace: 'demo', name: 'orca-rb-v000' },
        { kind: 'replicaSet', namespace: 'demo', name: 'orca-rb-v001' },
      ]);
      const newest = await orca.get(
        `/manifests/sandbox/demo/replicaSet/cluster/orca/${encodeURIComponent('replicaSet orca-rb')}/dynamic/newest`,
      );
      assert.deepEqual(newest.body, { kind: 'replicaSet', namespace: 'demo', name: 'orca-rb-v001' });
      const secondNewest = await orca.get(
        `/manifests/sandbox/demo/replicaSet/cluster/orca/${encodeURIComponent('replicaSet orca-rb')}/dynamic/second_newest`,
      );
      assert.equal(secondNewest.body.name, 'orca-rb-v000');
      const disable = await orca.run(
        'disableManifest',
        { account: 'sandbox', manifestName: `replicaSet ${secondNewest.body.name}`, location: 'demo' },
        false,
      );
      assert.equal(disable.status, 'SUCCEEDED', JSON.stringify(disable.task));
      assert.equal(get('apps/v1', 'ReplicaSet', 'orca-rb-v000')!.spec.template.metadata.labels.lb, undefined);
      assert.equal(get('apps/v1', 'ReplicaSet', 'orca-rb-v001')!.spec.template.metadata.labels.lb, 'orca-rb');
      const none = await orca.get(
        `/manifests/sandbox/demo/replicaSet/cluster/orca/${encodeURIComponent('replicaSet nothing')}/dynamic/oldest`,
      );
      assert.equal(none.status, 404);

      // Highlander: Orca's afterStages disable, then delete, every other version of the cluster it reads
      // (OldManifestActionAppender: the cluster list without the manifest just deployed).
      const highlander = {
        ...traffic,
        strategy: 'HIGHLANDER',
        trafficManagement: { enabled: true, options: { enableTraffic: true, services: ['service orca-rb'], strategy: 'highlander' } },
      };
      ({ outcome } = await deployAndWait([rs('nginx:3')], highlander));
      const deployed = outcome.outputs.manifestNamesByNamespace!.demo![0]!;
      assert.equal(deployed, 'replicaSet orca-rb-v002');
      let old: string[] = [];
      for (const deadline = Date.now() + 60_000; old.length < 2; ) {
        assert.ok(Date.now() < deadline, `the cache lists the two older versions (have ${JSON.stringify(old)})`);
        const res = await orca.get(`/manifests/sandbox/demo/replicaSet/cluster/orca/${encodeURIComponent('replicaSet orca-rb')}`);
        old = (res.body as unknown as Obj[]).map((m) => `${m.kind} ${m.name}`).filter((name) => name !== deployed);
        if (old.length < 2) await new Promise((r) => setTimeout(r, 25));
      }
      for (const stage of ['disableManifest', 'deleteManifest'] as const) {
        for (const name of old) {
          const ran = await orca.run(
            stage,
            { account: 'sandbox', app: 'orca', cloudProvider: 'kubernetes', manifestName: name, location: 'demo' },
            stage === 'deleteManifest',
          );
          assert.equal(ran.status, 'SUCCEEDED', `${stage} ${name}: ${JSON.stringify(ran.task)}`);
        }
      }
      for (const gone of ['orca-rb-v000', 'orca-rb-v001']) {
        for (const deadline = Date.now() + 60_000; get('apps/v1', 'ReplicaSet', gone); await new Promise((r) => setTimeout(r, 25))) {
          assert.ok(Date.now() < deadline, `${gone} deleted`);
        }
      }
      assert.equal(
        get('apps/v1', 'ReplicaSet', 'orca-rb-v002')!.spec.template.metadata.labels.lb,
        'orca-rb',
        'the survivor keeps its traffic',
      );
    });

    test('scale then wait for stable sees the new replica count, never the object before the write', async () => {
      const scale = await orca.run(
        'scaleManifest',
        { account: 'sandbox', manifestName: 'deployment orca-web', location: 'demo', replicas: 4 },
        false,
      );
      assert.equal(scale.status, 'SUCCEEDED');
      // Orca polls straight after the task: the read goes through the agent, so it already has the new spec.
      const first = await orca.manifest('sandbox', 'demo', 'deployment orca-web');
      assert.equal(first.body.manifest.spec.replicas, 4);
      const stable = await orca.waitStable('sandbox', { demo: ['deployment orca-web'] });
      assert.equal(stable.status, 'SUCCEEDED');
      const after = await orca.manifest('sandbox', 'demo', 'deployment orca-web');
      assert.equal(after.body.manifest.status.readyReplicas, 4);
    });

    test('deploy strategies from annotations: replace drops fields the manifest leaves out, server-side apply, recreate gives a new object', async () => {
      const cm = (name: string, annotations: Record<string, string>, data: Obj) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'demo', annotations: { 'strategy.spinnaker.io/versioned': 'false', ...annotations } },
        data,
      });
      await deployAndWait([cm('orca-replace', { 'strategy.spinnaker.io/replace': 'true' }, { a: '1', b: '2' })]);
      // Someone adds a key out of band; a replace puts back exactly the manifest.
      const current = get('v1', 'ConfigMap', 'orca-replace')!;
      system.sandbox.store.update({ ...current, data: { ...current.data, extra: 'x' } });
      await deployAndWait([cm('orca-replace', { 'strategy.spinnaker.io/replace': 'true' }, { a: '1' })]);
      assert.deepEqual(get('v1', 'ConfigMap', 'orca-replace')!.data, { a: '1' });

      await deployAndWait([cm('orca-ssa', { 'strategy.spinnaker.io/server-side-apply': 'true' }, { a: '1' })]);
      const ssa = get('v1', 'ConfigMap', 'orca-ssa')!;
      assert.ok(
        (ssa.metadata.managedFields ?? []).some((f: Obj) => f.operation === 'Apply'),
        JSON.stringify(ssa.metadata.managedFields),
      );

      await deployAndWait([cm('orca-recreate', { 'strategy.spinnaker.io/recreate': 'true' }, { a: '1' })]);
      const uid = get('v1', 'ConfigMap', 'orca-recreate')!.metadata.uid;
      await deployAndWait([cm('orca-recreate', { 'strategy.spinnaker.io/recreate': 'true' }, { a: '1' })]);
      assert.notEqual(get('v1', 'ConfigMap', 'orca-recreate')!.metadata.uid, uid, 'deleted and created again');
    });

    test('the manifest read includes the events about the object unless includeEvents=false', async () => {
      const withEvents = await orca.manifest('sandbox', 'demo', 'deployment orca-web', true);
      assert.equal(withEvents.status, 200);
      const events = withEvents.body.events as Obj[];
      assert.ok(events.length > 0, 'the sandbox controllers wrote events about the Deployment');
      assert.ok(events.every((e) => e.kind === 'Event' && e.involvedObject.name === 'orca-web' && e.involvedObject.kind === 'Deployment'));
      assert.ok(events.some((e) => e.reason === 'ScalingReplicaSet'));
      const defaulted = await orca.get('/manifests/sandbox/demo/deployment%20orca-web');
      assert.ok((defaulted.body.events as Obj[]).length > 0, 'includeEvents defaults to true');
      assert.deepEqual((await orca.manifest('sandbox', 'demo', 'deployment orca-web', false)).body.events, []);
    });

    test('credentials: the summary, the expanded list and one account; unknown is 404; X-SPINNAKER-ACCOUNTS hides the others', async () => {
      const list = await orca.get('/credentials');
      assert.equal(list.status, 200);
      const entry = (list.body as unknown as Obj[]).find((a) => a.name === 'sandbox')!;
      assert.deepEqual(entry, {
        name: 'sandbox',
        environment: 'sandbox',
        accountType: 'sandbox',
        cloudProvider: 'kubernetes',
        type: 'kubernetes',
        requiredGroupMembership: [],
        permissions: {},
        accountId: null,
        challengeDestructiveActions: false,
        primaryAccount: false,
      });
      const one = await orca.get('/credentials/sandbox');
      assert.equal(one.status, 200);
      assert.ok(one.body.namespaces.includes('demo'));
      assert.equal(one.body.spinnakerKindMap.replicaSet, 'serverGroups');
      assert.equal((await orca.get('/credentials/nope')).status, 404);
      const hidden = createOrcaClient(system.gateway.httpUrl, { 'X-SPINNAKER-ACCOUNTS': 'other-account' });
      assert.deepEqual((await hidden.get('/credentials')).body, []);
      assert.equal((await hidden.get('/credentials/sandbox')).status, 404);
      assert.equal((await hidden.manifest('sandbox', 'demo', 'deployment orca-web')).status, 403);
    });

    test('label selectors: only the selected manifests are applied and reported; nothing selected fails unless allowNothingSelected; malformed is a 400', async () => {
      const cm = (name: string, labels: Record<string, string>) => ({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: 'demo', labels, annotations: { 'strategy.spinnaker.io/versioned': 'false' } },
        data: { a: '1' },
      });
      const canary = { labelSelectors: { selectors: [{ kind: 'EQUALS', key: 'track', values: ['canary'] }] } };
      const outcome = await orca.run(
        'deployManifest',
        deployStage([cm('orca-sel-canary', { track: 'canary' }), cm('orca-sel-stable', { track: 'stable' })], canary),
        true,
      );
      assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
      assert.deepEqual(outcome.outputs.manifestNamesByNamespace, { demo: ['configMap orca-sel-canary'] });
      assert.equal(outcome.task.resultObjects[0].createdArtifacts.length, 2, 'as Clouddriver, every planned manifest has its artifact');
      assert.ok(
        outcome.task.history.some((h: Obj) => /Skipping configMap orca-sel-stable in demo: its labels are not selected/.test(h.status)),
      );
      assert.ok(get('v1', 'ConfigMap', 'orca-sel-canary'));
      assert.equal(get('v1', 'ConfigMap', 'orca-sel-stable'), undefined, 'not selected, not applied');

      const none = { labelSelectors: { selectors: [{ kind: 'EQUALS', key: 'track', values: ['none'] }] } };
      const nothing = await orca.run('deployManifest', deployStage([cm('orca-sel-other', { track: 'x' })], none), true);
      assert.equal(nothing.status, 'TERMINAL');
      assert.equal(nothing.exception!.message, 'nothing deployed to account sandbox with label selector(s) track=none');
      const allowed = await orca.run(
        'deployManifest',
        deployStage([cm('orca-sel-other', { track: 'x' })], { ...none, allowNothingSelected: true }),
        true,
      );
      assert.equal(allowed.status, 'SUCCEEDED', JSON.stringify(allowed.task));
      assert.deepEqual(allowed.task.resultObjects[0].manifests, []);
      assert.equal(get('v1', 'ConfigMap', 'orca-sel-other'), undefined);

      const malformed = await orca.post([
        { deployManifest: deployStage([cm('orca-sel-bad', {})], { labelSelectors: { selectors: [{ kind: 'SOMETIMES', key: 'a' }] } }) },
      ]);
      assert.equal(malformed.status, 400);
      assert.match(malformed.body.message, /labelSelectors\.selectors\[0\]\.kind must be one of/);
    });

    test('a deploy without manifests is a 400; a required artifact that binds nowhere fails the task', async () => {
      const empty = await orca.post([{ deployManifest: deployStage([]) }]);
      assert.equal(empty.status, 400);
      assert.match(empty.body.message, /No manifests/);
      const missing = await orca.post([{ deployManifest: { ...deployStage([deployment('x', 'nginx:1')]), manifests: undefined } }]);
      assert.equal(missing.status, 400);
      const unbound = await orca.run(
        'deployManifest',
        deployStage([deployment('orca-unbound', 'nginx:1')], {
          requiredArtifacts: [{ type: 'docker/image', name: 'redis', reference: 'redis:7' }],
        }),
        true,
      );
      assert.equal(unbound.status, 'TERMINAL');
      assert.match(unbound.exception!.message, /required artifacts could not be bound/);
      assert.equal(get('apps/v1', 'Deployment', 'orca-unbound'), undefined, 'nothing was applied');
    });
  });
}
