/**
 * Deploy (Manifest) planning: what Clouddriver's deploy operation does to manifests before they reach the cluster
 * (expansion, order, namespace override, artifact binding, versions, annotations, labels, strategies, traffic) and
 * the artifacts it reports.
 *
 * Differences from the contract (the Clouddriver HTTP contract the Spinnaker work follows, §4 and §6), found in
 * Clouddriver's sources (class names of spinnaker/clouddriver's Kubernetes provider):
 * - Manifests are sorted into deploy order by the kind's priority before anything else (KubernetesHandler
 *   DeployPriority, KubernetesDeployManifestOperation.sortManifests): Namespace 0 … ConfigMap/Secret 50, Service 70,
 *   workloads 100, HPA 110, custom resources 1000. Binding of this deploy's own objects relies on that order.
 * - Every object of the deploy, versioned or not, becomes bindable for the objects after it (the operation puts each
 *   created artifact into the binding map), so an unversioned ConfigMap, or a Deployment named by an HPA, is also
 *   "bound" and reported in boundArtifacts. This happens even with enableArtifactBinding false (only the required
 *   and optional artifacts are left out then).
 * - Kubernetes artifacts bind only within the manifest's namespace and account (ArtifactReplacer.filterArtifacts);
 *   an artifact without metadata.account matches any account.
 * - Binding places (Replacer): images of containers and initContainers under any `spec.template.spec` (not
 *   ephemeralContainers, which pod templates cannot hold); a bare Pod only binds its containers' images and matches
 *   the whole image string (no tag stripping); an HPA's scaleTargetRef binds kubernetes/deployment and
 *   kubernetes/replicaSet artifacts.
 * - Template annotations and labels are written only when `spec.template.metadata` exists
 *   (KubernetesManifest.getSpecTemplateAnnotations), not whenever a pod template exists.
 * - `moniker.spinnaker.io/sequence` label and `app.kubernetes.io/managed-by` are overwritten; the annotation is not
 *   (KubernetesManifestLabeler / KubernetesManifestAnnotater). A sequence in the description's moniker is written
 *   even for unversioned objects.
 * - `traffic.spinnaker.io/load-balancers` is written only on kinds that receive traffic (Pod, ReplicaSet,
 *   Deployment, StatefulSet, DaemonSet, Job, CronJob), on metadata only; a different existing value is an error.
 *   With enableTraffic the Services' selectors are added to the pod template labels (ServiceHandler.attach).
 * - Deploy strategies are exclusive: recreate, then replace, then server-side apply (KubernetesManifestStrategy).
 * - Strategy RED_BLACK/BLUE_GREEN with max-version-history < 2 fails; label selectors with replace fail.
 * - Version matching (ResourceVersioner, ArtifactProvider): existing versions are the live objects whose artifact
 *   annotations name the base, ordered by creation time, the first match wins; the compared manifest is taken after
 *   binding and before annotation. Clouddriver compares against last-applied-configuration, which contains the
 *   pod template annotations it writes, so a ReplicaSet never matches there; the content digest used here is taken
 *   at the same point on both sides, so identical ReplicaSets do reuse their version (deliberate).
 * - createdArtifacts have customKind false for every kind, custom ones included (ArtifactConverter sets none).
 * - Run Job forces recreate even with generateName (KubernetesRunJobOperation); the generateName case is handled
 *   by creating the object (CanDeploy), and its artifact has no name or reference.
 * - cleanupArtifacts counts the deployed object among the N kept, orders by creation time, and N = 0 deletes all
 *   (KubernetesCleanupArtifactsOperation); see cleanup-artifacts.test.ts.
 * Where this code departs from Clouddriver on purpose: the digest (above); an image name keeps a registry port
 * (`registry:5000/app` is not the tag `5000/app`), where Clouddriver cuts at the last colon; versions with equal
 * creation times are ordered by number.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentDigest } from '../../src/gateway/spinnaker/deploy/content-digest.js';
import { planDeploy } from '../../src/gateway/spinnaker/deploy/deploy-plan.js';
import { DeployPlanError, type KubeObject } from '../../src/gateway/spinnaker/deploy/deploy-types.js';
import { ACCOUNT, configMap, deployment, fakeContext, liveVersion, MONIKER } from './deploy-helpers.js';

const names = (plan: { manifests: { manifest: KubeObject }[] }) =>
  plan.manifests.map((p) => `${p.manifest.kind} ${p.manifest.metadata.name}`);

describe('deploy plan: input', () => {
  test('List items are expanded, nulls skipped, and manifests sorted into deploy order', async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        manifests: [
          deployment('web', { containers: [{ name: 'web', image: 'nginx' }] }),
          null,
          {
            apiVersion: 'v1',
            kind: 'List',
            items: [
              configMap('cfg'),
              null,
              { apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'prod' }, spec: { selector: { app: 'web' } } },
            ],
          },
          { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'prod' } },
        ],
        unknownStageKey: { whatever: true },
      },
      fakeContext(),
    );
    assert.deepEqual(names(plan), ['Namespace prod', 'ConfigMap cfg-v000', 'Service web', 'Deployment web']);
  });

  const invalid: [string, unknown[], RegExp][] = [
    ['no manifests', [], /No manifests to deploy/],
    ['only nulls', [null, null], /No manifests to deploy/],
    ['an item that is not an object', ['kind: Deployment'], /manifests\[0\] is not an object \(it is a string\)/],
    ['an item without kind', [{ apiVersion: 'v1', metadata: { name: 'x' } }], /manifests\[0\] has no kind/],
    ['an item without apiVersion', [{ kind: 'ConfigMap', metadata: { name: 'x' } }], /manifests\[0\] \(kind ConfigMap\) has no apiVersion/],
    [
      'an item without name',
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }],
      /manifests\[0\] \(kind ConfigMap\) has no metadata.name/,
    ],
    ['an item without metadata', [{ apiVersion: 'v1', kind: 'ConfigMap' }], /has no metadata/],
    [
      'a List with a non-object item',
      [{ apiVersion: 'v1', kind: 'List', items: [configMap('a'), 7] }],
      /manifests\[0\]\.items\[1\] is not an object \(it is a number\)/,
    ],
    ['a List whose items are not a list', [{ apiVersion: 'v1', kind: 'List', items: {} }], /items are not a list/],
    [
      'a List in a List',
      [{ apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'List', items: [] }] }],
      /List inside a List/,
    ],
    [
      'an Event',
      [{ apiVersion: 'v1', kind: 'Event', metadata: { name: 'e' } }],
      /manifests\[0\]: objects of kind Event cannot be deployed/,
    ],
    [
      'annotations that are not strings',
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', annotations: { a: 1 } } }],
      /metadata.annotations must map names to strings/,
    ],
  ];
  for (const [what, manifests, message] of invalid) {
    test(`${what} is rejected with a message naming the item`, async () => {
      await assert.rejects(planDeploy({ moniker: MONIKER, manifests }, fakeContext()), (e: unknown) => {
        assert.ok(e instanceof DeployPlanError, String(e));
        assert.match(e.message, message);
        return true;
      });
    });
  }

  test('a description without moniker is rejected', async () => {
    await assert.rejects(planDeploy({ manifests: [configMap('a')] }, fakeContext()), /must be assigned a moniker/);
  });

  test('namespaceOverride moves namespaced objects (List items too) and leaves cluster-scoped ones alone', async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        namespaceOverride: 'staging',
        manifests: [
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' }, rules: [] },
          { apiVersion: 'v1', kind: 'List', items: [{ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web', namespace: 'prod' } }] },
        ],
      },
      fakeContext(),
    );
    const byKind = Object.fromEntries(plan.manifests.map((p) => [p.manifest.kind, p]));
    assert.equal(byKind.ClusterRole!.manifest.metadata.namespace, undefined);
    assert.equal(byKind.ClusterRole!.artifact.location, '');
    assert.equal(byKind.Service!.manifest.metadata.namespace, 'staging');
    assert.equal(byKind.Service!.artifact.location, 'staging');
  });

  test('the description is not changed', async () => {
    const description = { moniker: MONIKER, manifests: [deployment('web', { containers: [{ name: 'web', image: 'nginx' }] })] };
    const before = structuredClone(description);
    await planDeploy(description, fakeContext());
    assert.deepEqual(description, before);
  });
});

describe('deploy plan: annotations and labels', () => {
  test('a Deployment gets artifact and moniker annotations and app labels on metadata and pod template', async () => {
    const plan = await planDeploy(
      { moniker: { app: 'shop', stack: 'blue' }, manifests: [deployment('web', { containers: [{ name: 'web', image: 'nginx' }] })] },
      fakeContext(),
    );
    const m = plan.manifests[0]!.manifest;
    const expectedAnnotations = {
      'artifact.spinnaker.io/type': 'kubernetes/deployment',
      'artifact.spinnaker.io/name': 'web',
      'artifact.spinnaker.io/location': 'prod',
      'artifact.spinnaker.io/version': '',
      'moniker.spinnaker.io/cluster': 'deployment web',
      'moniker.spinnaker.io/application': 'shop',
      'moniker.spinnaker.io/stack': 'blue',
    };
    assert.deepEqual(m.metadata.annotations, expectedAnnotations);
    assert.deepEqual(m.metadata.labels, { 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/managed-by': 'spinnaker' });
    const template = (m.spec as { template: { metadata: KubeObject['metadata'] } }).template.metadata;
    assert.deepEqual(template.annotations, expectedAnnotations);
    assert.deepEqual(template.labels, { app: 'web', 'app.kubernetes.io/name': 'shop', 'app.kubernetes.io/managed-by': 'spinnaker' });
    assert.equal(m.metadata.name, 'web');
    assert.equal(
      (m.metadata.annotations as Record<string, string>)['outpost.dev/content-digest'],
      undefined,
      'unversioned objects carry no digest',
    );
  });

  test('existing annotations and the app name label are kept; managed-by and the sequence label are overwritten', async () => {
    const cm = configMap('cfg');
    cm.metadata.annotations = {
      'moniker.spinnaker.io/cluster': 'mine',
      'artifact.spinnaker.io/name': 'other',
      'moniker.spinnaker.io/sequence': '7',
    };
    cm.metadata.labels = {
      'app.kubernetes.io/name': 'legacy',
      'app.kubernetes.io/managed-by': 'helm',
      'moniker.spinnaker.io/sequence': '7',
    };
    const plan = await planDeploy({ moniker: { app: 'shop', cluster: 'from-stage' }, manifests: [cm] }, fakeContext());
    const m = plan.manifests[0]!.manifest;
    assert.equal(m.metadata.annotations!['moniker.spinnaker.io/cluster'], 'mine');
    assert.equal(m.metadata.annotations!['artifact.spinnaker.io/name'], 'other');
    assert.equal(m.metadata.annotations!['moniker.spinnaker.io/sequence'], '7');
    assert.equal(m.metadata.annotations!['artifact.spinnaker.io/version'], 'v000');
    assert.deepEqual(m.metadata.labels, {
      'app.kubernetes.io/name': 'legacy',
      'app.kubernetes.io/managed-by': 'spinnaker',
      'moniker.spinnaker.io/sequence': '0',
    });
  });

  test('the stage cluster is used when given; skipSpecTemplateLabels leaves template labels alone', async () => {
    const plan = await planDeploy(
      { moniker: { app: 'shop', cluster: 'shop-web' }, skipSpecTemplateLabels: true, manifests: [deployment('web', { containers: [] })] },
      fakeContext(),
    );
    const m = plan.manifests[0]!.manifest;
    assert.equal(m.metadata.annotations!['moniker.spinnaker.io/cluster'], 'shop-web');
    const template = (m.spec as { template: { metadata: KubeObject['metadata'] } }).template.metadata;
    assert.deepEqual(template.labels, { app: 'web' });
    assert.equal(template.annotations!['moniker.spinnaker.io/cluster'], 'shop-web');
  });

  test('a pod template without metadata gets no template annotations or labels', async () => {
    const d = deployment('web', { containers: [] });
    delete (d.spec as { template: { metadata?: unknown } }).template.metadata;
    const plan = await planDeploy({ moniker: MONIKER, manifests: [d] }, fakeContext());
    assert.equal((plan.manifests[0]!.manifest.spec as { template: { metadata?: unknown } }).template.metadata, undefined);
  });
});

describe('deploy plan: versions', () => {
  const cm = configMap('cfg', { a: '1' });

  test('a first deploy of a versioned kind is v000, with sequence 0 and a content digest', async () => {
    const context = fakeContext();
    const plan = await planDeploy({ moniker: MONIKER, manifests: [cm] }, context);
    const p = plan.manifests[0]!;
    assert.equal(p.versioned, true);
    assert.equal(p.reusedVersion, undefined);
    assert.equal(p.manifest.metadata.name, 'cfg-v000');
    assert.equal(p.manifest.metadata.annotations!['moniker.spinnaker.io/sequence'], '0');
    assert.equal(p.manifest.metadata.labels!['moniker.spinnaker.io/sequence'], '0');
    assert.equal(p.manifest.metadata.annotations!['outpost.dev/content-digest'], contentDigest(cm));
    assert.deepEqual(context.calls, [{ agentKind: 'ConfigMap', namespace: 'prod', baseName: 'cfg' }]);
  });

  const next: [string[], string][] = [
    [['v000'], 'v001'],
    [['v000', 'v009'], 'v010'],
    [['v999'], 'v1000'],
    [['v1000', 'v003'], 'v1001'],
  ];
  for (const [existing, expected] of next) {
    test(`after ${existing.join(', ')} with other content the next version is ${expected}`, async () => {
      const live = existing.map((v, i) =>
        liveVersion(configMap('cfg', { a: `old-${i}` }), 'cfg', v, `2025-01-0${i + 1}T00:00:00Z`, {
          'outpost.dev/content-digest': contentDigest(configMap('cfg', { a: `old-${i}` })),
        }),
      );
      const plan = await planDeploy({ moniker: MONIKER, manifests: [cm] }, fakeContext(live));
      assert.equal(plan.manifests[0]!.manifest.metadata.name, `cfg-${expected}`);
      assert.equal(plan.manifests[0]!.artifact.version, expected);
      assert.equal(plan.manifests[0]!.manifest.metadata.annotations!['moniker.spinnaker.io/sequence'], String(Number(expected.slice(1))));
    });
  }

  test('identical content reuses the existing version (digest)', async () => {
    const live = [
      liveVersion(configMap('cfg', { a: 'other' }), 'cfg', 'v002', '2025-01-01T00:00:00Z', {
        'outpost.dev/content-digest': 'f'.repeat(64),
      }),
      liveVersion(cm, 'cfg', 'v003', '2025-01-02T00:00:00Z', { 'outpost.dev/content-digest': contentDigest(cm) }),
      liveVersion(configMap('cfg', { a: 'newer' }), 'cfg', 'v004', '2025-01-03T00:00:00Z', {
        'outpost.dev/content-digest': 'e'.repeat(64),
      }),
    ];
    const plan = await planDeploy({ moniker: MONIKER, manifests: [cm] }, fakeContext(live));
    const p = plan.manifests[0]!;
    assert.equal(p.reusedVersion, 'v003');
    assert.equal(p.manifest.metadata.name, 'cfg-v003');
    assert.equal(p.artifact.reference, 'cfg-v003');
  });

  test('live versions without artifact annotations are recognised by their -vNNN name', async () => {
    const unannotated = { ...configMap('cfg-v004', { a: 'old' }), metadata: { name: 'cfg-v004', namespace: 'prod' } };
    const context = { ...fakeContext(), existingVersions: async () => [unannotated, configMap('cfg-other')] };
    const plan = await planDeploy({ moniker: MONIKER, manifests: [cm] }, context);
    assert.equal(plan.manifests[0]!.manifest.metadata.name, 'cfg-v005');
  });

  test('without a digest the last-applied configuration is compared, ignoring metadata', async () => {
    const lastApplied = JSON.stringify({ ...configMap('cfg-v005', { a: '1' }), metadata: { name: 'cfg-v005', annotations: { x: 'y' } } });
    const live = [
      liveVersion(cm, 'cfg', 'v005', '2025-01-01T00:00:00Z', { 'kubectl.kubernetes.io/last-applied-configuration': lastApplied }),
    ];
    const plan = await planDeploy({ moniker: MONIKER, manifests: [cm] }, fakeContext(live));
    assert.equal(plan.manifests[0]!.reusedVersion, 'v005');
    const differs = [
      liveVersion(cm, 'cfg', 'v005', '2025-01-01T00:00:00Z', {
        'kubectl.kubernetes.io/last-applied-configuration': lastApplied.replace('"1"', '"2"'),
      }),
    ];
    const plan2 = await planDeploy({ moniker: MONIKER, manifests: [cm] }, fakeContext(differs));
    assert.equal(plan2.manifests[0]!.manifest.metadata.name, 'cfg-v006');
  });

  const decisions: [string, Record<string, string> | undefined, boolean | undefined, KubeObject, boolean][] = [
    ['kind default (ConfigMap)', undefined, undefined, configMap('c'), true],
    ['kind default (Deployment)', undefined, undefined, deployment('d', { containers: [] }), false],
    ['description versioned on a Deployment', undefined, true, deployment('d', { containers: [] }), true],
    ['description unversioned on a ConfigMap', undefined, false, configMap('c'), false],
    ['annotation false over description true', { 'strategy.spinnaker.io/versioned': 'false' }, true, configMap('c'), false],
    [
      'annotation true over kind default',
      { 'strategy.spinnaker.io/versioned': 'TRUE' },
      undefined,
      deployment('d', { containers: [] }),
      true,
    ],
  ];
  for (const [what, annotations, versioned, manifest, expected] of decisions) {
    test(`versioned by ${what}: ${expected}`, async () => {
      const m = structuredClone(manifest);
      if (annotations) m.metadata.annotations = annotations;
      const plan = await planDeploy({ moniker: MONIKER, versioned, manifests: [m] }, fakeContext());
      assert.equal(plan.manifests[0]!.versioned, expected);
      assert.equal(plan.manifests[0]!.manifest.metadata.name, expected ? `${m.metadata.name}-v000` : m.metadata.name);
    });
  }
});

describe('deploy plan: artifact binding', () => {
  const podSpec = {
    initContainers: [{ name: 'init', image: 'gcr.io/shop/migrate:1.0', envFrom: [{ secretRef: { name: 'creds' } }] }],
    containers: [
      {
        name: 'web',
        image: 'gcr.io/shop/web:1.0',
        envFrom: [{ configMapRef: { name: 'cfg' } }],
        env: [
          { name: 'A', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'a' } } },
          { name: 'B', valueFrom: { secretKeyRef: { name: 'creds', key: 'b' } } },
          { name: 'C', valueFrom: { configMapKeyRef: { name: 'unrelated', key: 'c' } } },
        ],
      },
    ],
    volumes: [
      { name: 'v1', configMap: { name: 'cfg' } },
      { name: 'v2', secret: { secretName: 'creds' } },
      { name: 'v3', projected: { sources: [{ configMap: { name: 'cfg' } }, { secret: { name: 'creds' } }] } },
    ],
  };
  const secret: KubeObject = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds', namespace: 'prod' }, data: { b: 'Yg==' } };

  test('versioned ConfigMaps and Secrets of the same deploy are bound into the Deployment', async () => {
    const live = [liveVersion(configMap('cfg', { old: 'x' }), 'cfg', 'v004', '2025-01-01T00:00:00Z')];
    const plan = await planDeploy(
      { moniker: MONIKER, manifests: [deployment('web', podSpec), configMap('cfg'), secret] },
      fakeContext(live),
    );
    assert.deepEqual(names(plan), ['ConfigMap cfg-v005', 'Secret creds-v000', 'Deployment web']);
    const spec = (plan.manifests[2]!.manifest.spec as { template: { spec: typeof podSpec } }).template.spec;
    assert.equal(spec.containers[0]!.envFrom[0]!.configMapRef.name, 'cfg-v005');
    assert.equal(spec.containers[0]!.env[0]!.valueFrom.configMapKeyRef!.name, 'cfg-v005');
    assert.equal(spec.containers[0]!.env[1]!.valueFrom.secretKeyRef!.name, 'creds-v000');
    assert.equal(spec.containers[0]!.env[2]!.valueFrom.configMapKeyRef!.name, 'unrelated');
    assert.equal(spec.initContainers[0]!.envFrom[0]!.secretRef.name, 'creds-v000');
    assert.equal(spec.volumes[0]!.configMap!.name, 'cfg-v005');
    assert.equal(spec.volumes[1]!.secret!.secretName, 'creds-v000');
    assert.deepEqual(spec.volumes[2]!.projected!.sources, [{ configMap: { name: 'cfg-v005' } }, { secret: { name: 'creds-v000' } }]);
    assert.deepEqual(plan.boundArtifacts, [
      {
        type: 'kubernetes/configMap',
        name: 'cfg',
        location: 'prod',
        version: 'v005',
        reference: 'cfg-v005',
        customKind: false,
        metadata: { account: ACCOUNT },
      },
      {
        type: 'kubernetes/secret',
        name: 'creds',
        location: 'prod',
        version: 'v000',
        reference: 'creds-v000',
        customKind: false,
        metadata: { account: ACCOUNT },
      },
    ]);
  });

  test('a ConfigMap deployed to another namespace is not bound', async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        manifests: [
          deployment('web', { containers: [], volumes: [{ name: 'v', configMap: { name: 'cfg' } }] }),
          configMap('cfg', {}, 'other'),
        ],
      },
      fakeContext(),
    );
    const volumes = (plan.manifests[1]!.manifest.spec as { template: { spec: { volumes: { configMap: { name: string } }[] } } }).template
      .spec.volumes;
    assert.equal(volumes[0]!.configMap.name, 'cfg');
    assert.deepEqual(plan.boundArtifacts, []);
  });

  test('a required docker image replaces the tag of every container with that image name', async () => {
    const image = { type: 'docker/image', name: 'gcr.io/shop/web', reference: 'gcr.io/shop/web:2.1', version: '2.1', uuid: 'keep-me' };
    const spec = {
      initContainers: [{ name: 'warm', image: `gcr.io/shop/web@sha256:${'a'.repeat(64)}` }],
      containers: [
        { name: 'web', image: 'gcr.io/shop/web:1.0' },
        { name: 'side', image: 'gcr.io/shop/web-sidecar:1.0' },
      ],
    };
    const plan = await planDeploy({ moniker: MONIKER, requiredArtifacts: [image], manifests: [deployment('web', spec)] }, fakeContext());
    const bound = (plan.manifests[0]!.manifest.spec as { template: { spec: typeof spec } }).template.spec;
    assert.equal(bound.containers[0]!.image, 'gcr.io/shop/web:2.1');
    assert.equal(bound.containers[1]!.image, 'gcr.io/shop/web-sidecar:1.0');
    assert.equal(bound.initContainers[0]!.image, 'gcr.io/shop/web:2.1');
    assert.deepEqual(plan.boundArtifacts, [image], 'bound artifacts keep unknown fields');
  });

  test('a required artifact that binds nowhere fails the deploy, naming it', async () => {
    const image = { type: 'docker/image', name: 'gcr.io/shop/api', reference: 'gcr.io/shop/api:3' };
    await assert.rejects(
      planDeploy(
        {
          moniker: MONIKER,
          requiredArtifacts: [image],
          manifests: [deployment('web', { containers: [{ name: 'web', image: 'gcr.io/shop/web:1' }] })],
        },
        fakeContext(),
      ),
      (e: unknown) => {
        assert.ok(e instanceof DeployPlanError);
        assert.match(
          e.message,
          /The following required artifacts could not be bound: 'docker\/image gcr.io\/shop\/api \(reference gcr.io\/shop\/api:3\)'/,
        );
        assert.match(e.message, /Check that the Docker image name above matches the name used in the image field of your manifest/);
        return true;
      },
    );
  });

  test("with enableArtifactBinding false, stage artifacts neither bind nor are required; the deploy's own still bind", async () => {
    const image = { type: 'docker/image', name: 'nginx', reference: 'nginx:2' };
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        enableArtifactBinding: false,
        requiredArtifacts: [image, { type: 'docker/image', name: 'missing', reference: 'missing:1' }],
        manifests: [
          deployment('web', { containers: [{ name: 'web', image: 'nginx:1', envFrom: [{ configMapRef: { name: 'cfg' } }] }] }),
          configMap('cfg'),
        ],
      },
      fakeContext(),
    );
    const container = (
      plan.manifests[1]!.manifest.spec as {
        template: { spec: { containers: { image: string; envFrom: { configMapRef: { name: string } }[] }[] } };
      }
    ).template.spec.containers[0]!;
    assert.equal(container.image, 'nginx:1');
    assert.equal(container.envFrom[0]!.configMapRef.name, 'cfg-v000');
  });

  test('a required artifact wins over an optional one with the same type and name', async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        requiredArtifacts: [{ type: 'docker/image', name: 'nginx', reference: 'nginx:req' }],
        optionalArtifacts: [{ type: 'docker/image', name: 'nginx', reference: 'nginx:opt' }],
        manifests: [deployment('web', { containers: [{ name: 'web', image: 'nginx' }] })],
      },
      fakeContext(),
    );
    const spec = (plan.manifests[0]!.manifest.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec;
    assert.equal(spec.containers[0]!.image, 'nginx:req');
  });

  test('the digest of a versioned object is taken after binding (a new image makes a new version)', async () => {
    const rs: KubeObject = { ...deployment('rs', { containers: [{ name: 'c', image: 'nginx:1' }] }), kind: 'ReplicaSet' };
    const image = { type: 'docker/image', name: 'nginx', reference: 'nginx:2' };
    const plan = await planDeploy({ moniker: MONIKER, requiredArtifacts: [image], manifests: [rs] }, fakeContext());
    const bound = structuredClone(rs);
    (bound.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers[0]!.image = 'nginx:2';
    assert.equal(plan.manifests[0]!.manifest.metadata.annotations!['outpost.dev/content-digest'], contentDigest(bound));
  });
});

describe('deploy plan: created artifacts and strategies', () => {
  test("created artifacts have Clouddriver's exact shape", async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        manifests: [
          configMap('cfg'),
          deployment('web', { containers: [] }),
          { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'reader' } },
          { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'tab', namespace: 'prod' } },
        ],
      },
      fakeContext(),
    );
    const meta = { account: ACCOUNT };
    assert.deepEqual(plan.createdArtifacts, [
      { type: 'kubernetes/clusterRole', name: 'reader', location: '', version: '', reference: 'reader', customKind: false, metadata: meta },
      {
        type: 'kubernetes/configMap',
        name: 'cfg',
        location: 'prod',
        version: 'v000',
        reference: 'cfg-v000',
        customKind: false,
        metadata: meta,
      },
      { type: 'kubernetes/deployment', name: 'web', location: 'prod', version: '', reference: 'web', customKind: false, metadata: meta },
      {
        type: 'kubernetes/CronTab.stable.example.com',
        name: 'tab',
        location: 'prod',
        version: '',
        reference: 'tab',
        customKind: false,
        metadata: meta,
      },
    ]);
    assert.deepEqual(
      plan.manifests.map((p) => p.artifact),
      plan.createdArtifacts,
    );
  });

  const strategies: [Record<string, string>, object][] = [
    [{}, { serverSideApply: 'off', replace: false, recreate: false, useSourceCapacity: false }],
    [
      { 'strategy.spinnaker.io/recreate': 'true', 'strategy.spinnaker.io/replace': 'true' },
      { serverSideApply: 'off', replace: false, recreate: true, useSourceCapacity: false },
    ],
    [
      { 'strategy.spinnaker.io/replace': 'True', 'strategy.spinnaker.io/server-side-apply': 'true' },
      { serverSideApply: 'off', replace: true, recreate: false, useSourceCapacity: false },
    ],
    [
      { 'strategy.spinnaker.io/server-side-apply': 'true' },
      { serverSideApply: 'on', replace: false, recreate: false, useSourceCapacity: false },
    ],
    [
      { 'strategy.spinnaker.io/server-side-apply': 'force-conflicts' },
      { serverSideApply: 'force-conflicts', replace: false, recreate: false, useSourceCapacity: false },
    ],
    [
      { 'strategy.spinnaker.io/server-side-apply': 'false' },
      { serverSideApply: 'off', replace: false, recreate: false, useSourceCapacity: false },
    ],
    [
      { 'strategy.spinnaker.io/server-side-apply': 'yes', 'strategy.spinnaker.io/recreate': 'yes' },
      { serverSideApply: 'off', replace: false, recreate: false, useSourceCapacity: false },
    ],
    [
      {
        'strategy.spinnaker.io/versioned': 'false',
        'strategy.spinnaker.io/max-version-history': '4',
        'strategy.spinnaker.io/use-source-capacity': 'true',
      },
      { serverSideApply: 'off', replace: false, recreate: false, useSourceCapacity: true, versioned: false, maxVersionHistory: 4 },
    ],
    [
      { 'strategy.spinnaker.io/max-version-history': 'four' },
      { serverSideApply: 'off', replace: false, recreate: false, useSourceCapacity: false },
    ],
  ];
  for (const [annotations, expected] of strategies) {
    test(`strategy annotations ${JSON.stringify(annotations)}`, async () => {
      const m = configMap('c');
      m.metadata.annotations = annotations;
      const plan = await planDeploy({ moniker: MONIKER, manifests: [m] }, fakeContext());
      assert.deepEqual(plan.manifests[0]!.strategy, expected);
    });
  }

  test('red/black with max-version-history below 2 fails; replace with label selectors fails', async () => {
    const m = configMap('c');
    m.metadata.annotations = { 'strategy.spinnaker.io/max-version-history': '1' };
    await assert.rejects(
      planDeploy({ moniker: MONIKER, strategy: 'RED_BLACK', manifests: [m] }, fakeContext()),
      /greater than or equal to 2/,
    );
    await planDeploy({ moniker: MONIKER, strategy: 'HIGHLANDER', manifests: [m] }, fakeContext());
    const r = configMap('r');
    r.metadata.annotations = { 'strategy.spinnaker.io/replace': 'true' };
    await assert.rejects(
      planDeploy(
        { moniker: MONIKER, labelSelectors: { selectors: [{ kind: 'EQUALS', key: 'a', values: ['b'] }] }, manifests: [r] },
        fakeContext(),
      ),
      /label selectors not supported with replace strategy/,
    );
  });

  test('label selectors select manifests by their labels after Spinnaker labelled them; the others are planned, not selected', async () => {
    const selectors = (...s: unknown[]) => ({ selectors: s });
    const a = configMap('a');
    a.metadata.labels = { tier: 'front' };
    const b = configMap('b');
    const plan = await planDeploy(
      { moniker: MONIKER, labelSelectors: selectors({ kind: 'EQUALS', key: 'tier', values: ['front'] }), manifests: [a, b] },
      fakeContext(),
    );
    assert.deepEqual(
      plan.manifests.map((p) => [p.manifest.metadata.name?.replace(/-v\d+$/, ''), p.selected]),
      [
        ['a', true],
        ['b', false],
      ],
    );
    assert.equal(plan.createdArtifacts.length, 2, 'Clouddriver reports the artifact of every manifest, selected or not');
    assert.equal(plan.labelSelector, 'tier=front');
    assert.equal(plan.allowNothingSelected, false);
    // Spinnaker's own labels count: app.kubernetes.io/managed-by is set before selecting.
    const managed = await planDeploy(
      {
        moniker: MONIKER,
        labelSelectors: selectors({ kind: 'EQUALS', key: 'app.kubernetes.io/managed-by', values: ['spinnaker'] }),
        allowNothingSelected: 'true',
        manifests: [b],
      },
      fakeContext(),
    );
    assert.equal(managed.manifests[0]!.selected, true);
    assert.equal(managed.allowNothingSelected, true);
    const none = await planDeploy({ moniker: MONIKER, manifests: [configMap('c')] }, fakeContext());
    assert.equal(none.manifests[0]!.selected, true);
    assert.equal(none.labelSelector, undefined);
    await assert.rejects(
      planDeploy({ moniker: MONIKER, labelSelectors: selectors({ kind: 'EQUALS', key: 'tier' }), manifests: [a] }, fakeContext()),
      (err) => err instanceof DeployPlanError && /needs exactly one value/.test(err.message),
    );
  });

  test('use-source-capacity takes the replicas of the newest version', async () => {
    const rs: KubeObject = { ...deployment('rs', { containers: [] }), kind: 'ReplicaSet' };
    rs.metadata.annotations = { 'strategy.spinnaker.io/use-source-capacity': 'true' };
    const old = liveVersion({ ...rs, spec: { replicas: 7 } }, 'rs', 'v001', '2025-01-02T00:00:00Z');
    const older = liveVersion({ ...rs, spec: { replicas: 3 } }, 'rs', 'v000', '2025-01-01T00:00:00Z');
    old.metadata.annotations!['artifact.spinnaker.io/type'] = 'kubernetes/replicaSet';
    const plan = await planDeploy({ moniker: MONIKER, manifests: [rs] }, fakeContext([older, old]));
    assert.equal(plan.manifests[0]!.manifest.metadata.name, 'rs-v002');
    assert.equal((plan.manifests[0]!.manifest.spec as { replicas: number }).replicas, 7);
  });
});

describe('deploy plan: traffic', () => {
  const service: KubeObject = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'web', namespace: 'prod' },
    spec: { selector: { 'lb-web': 'true' } },
  };

  test('services become the load-balancers annotation of workloads and their selectors reach the pod template', async () => {
    const plan = await planDeploy(
      {
        moniker: MONIKER,
        services: ['service web'],
        enableTraffic: true,
        manifests: [deployment('web', { containers: [] }), service, configMap('cfg')],
      },
      fakeContext(),
    );
    const byKind = Object.fromEntries(plan.manifests.map((p) => [p.manifest.kind, p.manifest]));
    assert.equal(byKind.Deployment!.metadata.annotations!['traffic.spinnaker.io/load-balancers'], '["service web"]');
    assert.equal(byKind.Service!.metadata.annotations!['traffic.spinnaker.io/load-balancers'], undefined);
    assert.equal(byKind.ConfigMap!.metadata.annotations!['traffic.spinnaker.io/load-balancers'], undefined);
    const template = (byKind.Deployment!.spec as { template: { metadata: KubeObject['metadata'] } }).template.metadata;
    assert.equal(template.labels!['lb-web'], 'true');
    assert.equal(template.annotations!['traffic.spinnaker.io/load-balancers'], undefined);
  });

  test('with enableTraffic false only the annotation is written; a live Service is found through liveObject', async () => {
    const plan = await planDeploy(
      { moniker: MONIKER, services: ['service web'], enableTraffic: false, manifests: [deployment('web', { containers: [] })] },
      fakeContext(),
    );
    const template = (plan.manifests[0]!.manifest.spec as { template: { metadata: KubeObject['metadata'] } }).template.metadata;
    assert.equal(template.labels!['lb-web'], undefined);
    const live = await planDeploy(
      { moniker: MONIKER, services: ['service web'], manifests: [deployment('web', { containers: [] })] },
      fakeContext([], [service]),
    );
    const liveTemplate = (live.manifests[0]!.manifest.spec as { template: { metadata: KubeObject['metadata'] } }).template.metadata;
    assert.equal(liveTemplate.labels!['lb-web'], 'true');
  });

  const failures: [string, Record<string, unknown>, RegExp][] = [
    ['a missing Service', { services: ['service nope'] }, /Load balancer service nope does not exist/],
    ['a load balancer that is not "kind name"', { services: ['web'] }, /must be specified in the form '\{kind\} \{name\}'/],
    ['a load balancer of another kind', { services: ['ingress web'] }, /No support for load balancing via ingress/],
  ];
  for (const [what, extra, message] of failures) {
    test(`${what} fails`, async () => {
      await assert.rejects(
        planDeploy({ moniker: MONIKER, ...extra, manifests: [deployment('web', { containers: [] })] }, fakeContext()),
        message,
      );
    });
  }

  test('a different existing load-balancers annotation fails', async () => {
    const d = deployment('web', { containers: [] });
    d.metadata.annotations = { 'traffic.spinnaker.io/load-balancers': '["service other"]' };
    await assert.rejects(
      planDeploy({ moniker: MONIKER, services: ['service web'], manifests: [d, service] }, fakeContext()),
      /already has traffic.spinnaker.io\/load-balancers/,
    );
  });
});
