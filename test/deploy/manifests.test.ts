/**
 * deploy/: every overlay rendered with the real `kubectl kustomize`, checked field by field against the Kubernetes API
 * types, its embedded gateway/agent configuration loaded with the programs' own loaders, applied to the sandbox with
 * the real kubectl (client-side and server-side) and read back. Then the parts that must agree with the code: replica
 * discovery finds the applied gateway pods through the applied Service, and the applied RBAC grants each service
 * account what the program needs and no more (evaluated by the sandbox's RBAC authorizer).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { parseAgentConfigText } from '../../src/agent/config/load.js';
import { createEndpointsDirectory } from '../../src/gateway/replicas/endpoints-directory.js';
import { gatewayEnvVariables, loadGatewayConfig } from '../../src/gateway/config/load.js';
import type { GatewayConfig } from '../../src/gateway/config/schema.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createKindRegistry } from '../../src/sandbox/kinds.js';
import { createAuthorizer, type AccessAttributes } from '../../src/sandbox/rbac.js';
import { createObjectStore } from '../../src/sandbox/store.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { schemaProblems } from './kube-schema.js';
import { findOne, KUBECTL, kustomize, overlayDirs, parseManifests, type Manifest } from './kustomize.js';
import { containerEnv, mountedFile, onlyContainer } from './pod-inputs.js';
import { eventually } from '../../testkit/eventually.js';

const GATEWAY = 'deploy/gateway/overlays/example';
const CLUSTER_WIDE = 'deploy/agent/overlays/cluster-wide';
const ONE_NAMESPACE = 'deploy/agent/overlays/namespace';

let sandbox: Sandbox;
let kubectl: Kubectl;
let dir: string;
const rendered = new Map<string, Manifest[]>();
const renderedText = new Map<string, string>();
const objects = (overlay: string) => rendered.get(overlay)!;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'outpost-deploy-'));
  sandbox = await startSandbox({ tls: true, bookmarkIntervalMs: 500 });
  kubectl = await createKubectl(KUBECTL, sandbox);
  await Promise.all(
    overlayDirs().map(async (overlay) => {
      const text = await kustomize(overlay);
      renderedText.set(overlay, text);
      rendered.set(overlay, parseManifests(text));
    }),
  );
});

after(async () => {
  kubectl?.cleanup();
  await sandbox?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The gateway configuration as a gateway pod loads it: the ConfigMap's file and the Deployment's environment. */
function gatewayConfigOf(
  overlay: string,
  podName = 'outpost-gateway-7d9c6b5f4-abcde',
): { config: GatewayConfig; env: Record<string, string> } {
  const objs = objects(overlay);
  const deployment = findOne(objs, 'Deployment', 'outpost-gateway');
  const container = onlyContainer(deployment);
  const env = containerEnv(container, {
    fields: { 'metadata.name': podName, 'status.podIP': '10.1.2.3' },
    secrets: { 'outpost-gateway-database/url': 'postgres://outpost:secret@postgres.outpost.svc:5432/outpost' },
  });
  const configPath = container.args[container.args.indexOf('--config') + 1] as string;
  const mount = mountedFile(deployment, container, configPath);
  const configMap = findOne(objs, 'ConfigMap', mount.volume.configMap.name);
  const file = join(dir, `${overlay.replace(/\W+/g, '-')}-gateway.yaml`);
  writeFileSync(file, configMap.data[mount.key]);
  return { config: loadGatewayConfig({ file, env }), env };
}

/** The agent configuration as an agent pod loads it. */
function agentConfigOf(overlay: string) {
  const objs = objects(overlay);
  const deployment = findOne(objs, 'Deployment', 'outpost-agent');
  const container = onlyContainer(deployment);
  const env = containerEnv(container, {
    fields: { 'metadata.name': 'outpost-agent-5f7d8-xyz12', 'metadata.namespace': deployment.metadata.namespace! },
  });
  const configPath = container.args[container.args.indexOf('--config') + 1] as string;
  const mount = mountedFile(deployment, container, configPath);
  const configMap = findOne(objs, 'ConfigMap', mount.volume.configMap.name);
  return { config: parseAgentConfigText(configMap.data[mount.key], configPath, env), deployment, container };
}

describe('deploy/ manifests', () => {
  test('every overlay renders with kubectl kustomize, and every object matches its Kubernetes API type', async () => {
    assert.deepEqual([...rendered.keys()].sort(), [CLUSTER_WIDE, ONE_NAMESPACE, GATEWAY].sort());
    for (const [overlay, objs] of rendered) {
      for (const obj of objs) assert.deepEqual(schemaProblems(obj), [], `${overlay}: ${obj.kind}/${obj.metadata.name}`);
      for (const obj of objs.filter((o) => o.kind !== 'Namespace' && !o.kind.startsWith('Cluster'))) {
        assert.ok(obj.metadata.namespace, `${overlay}: ${obj.kind}/${obj.metadata.name} has a namespace`);
      }
    }
    for (const base of ['deploy/gateway/base', 'deploy/agent/base'])
      assert.ok(parseManifests(await kustomize(base)).length >= 5, `${base} renders`);
    // the image the bases name follows the package version; overlays point it at a registry
    const version = (await import('../../package.json', { with: { type: 'json' } })).default.version;
    for (const base of ['deploy/gateway/base', 'deploy/agent/base']) {
      const deployment = parseManifests(await kustomize(base)).find((o) => o.kind === 'Deployment')!;
      assert.equal(onlyContainer(deployment).image, `outpost:${version}`);
    }
  });

  test('the gateway: its ConfigMap loads with the real loader and the Deployment environment, and matches replica discovery', () => {
    const objs = objects(GATEWAY);
    const { config, env } = gatewayConfigOf(GATEWAY);
    // every OUTPOST_GATEWAY_* variable is one the loader reads (anything else would be silently ignored)
    const known = gatewayEnvVariables();
    for (const name of Object.keys(env).filter((n) => n.startsWith('OUTPOST_GATEWAY_')))
      assert.ok(known.has(name), `${name} is a gateway variable`);
    assert.equal(
      config.id,
      'outpost-gateway-7d9c6b5f4-abcde',
      'the replica id is the pod name (discovery names replicas after the Endpoints targetRef)',
    );
    assert.equal(config.baseUrl, 'http://10.1.2.3:7002');
    assert.match(config.database, /^postgres:\/\//, 'the database URL comes from the Secret');
    assert.equal(config.insecure, false);
    assert.equal(config.replicas.discovery, 'kubernetes');

    const deployment = findOne(objs, 'Deployment', 'outpost-gateway');
    assert.equal(deployment.spec.replicas, 3);
    const container = onlyContainer(deployment);
    const ports = new Map((container.ports as Manifest[]).map((p) => [p.name, p.containerPort]));
    assert.equal(ports.get('http'), config.httpPort);
    assert.equal(ports.get('grpc'), config.grpcPort);
    // discovery: a Service whose name starts with the prefix, with the named port pointing at the HTTP port
    const http = findOne(objs, 'Service', 'spin-clouddriver');
    assert.ok(http.metadata.name.startsWith(config.replicas.endpointsPrefix));
    const httpPort = (http.spec.ports as Manifest[]).find((p) => p.name === config.replicas.portName);
    assert.ok(httpPort, `the Service has a port named ${config.replicas.portName}`);
    assert.equal(ports.get(httpPort.targetPort) ?? httpPort.targetPort, config.httpPort);
    const grpc = findOne(objs, 'Service', 'spin-clouddriver-grpc');
    assert.deepEqual(
      (grpc.spec.ports as Manifest[]).map((p) => [p.name, p.port]),
      [['grpc', 9091]],
    );
    for (const svc of [http, grpc]) assert.deepEqual(svc.spec.selector, deployment.spec.selector.matchLabels);
    // probes on /health and the HTTP port; the PDB covers the same pods
    assert.equal(container.readinessProbe.httpGet.path, '/health');
    assert.equal(container.readinessProbe.httpGet.port, 'http');
    assert.ok(container.livenessProbe, 'liveness probe');
    const pdb = findOne(objs, 'PodDisruptionBudget', 'outpost-gateway');
    assert.deepEqual(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
    assert.ok(
      deployment.spec.template.spec.topologySpreadConstraints.length > 0 || deployment.spec.template.spec.affinity?.podAntiAffinity,
    );
    // every file the configuration names is on a Secret volume of the pod
    for (const path of [config.auth.replicaSecretFile!, ...config.auth.tokens.map((t) => t.tokenFile!)]) {
      assert.ok(mountedFile(deployment, container, path).volume.secret, `${path} comes from a Secret`);
    }
    assertHardened(deployment);
  });

  test('the agents: each overlay ConfigMap loads with the real loader; files come from Secrets; the gateway lets the agent token register the accounts', () => {
    const { config: gateway } = gatewayConfigOf(GATEWAY);
    const agentRules = gateway.authorization.rules.filter((r) => r.roles.includes('agent'));
    const glob = (pattern: string) =>
      new RegExp(
        `^${pattern
          .split('*')
          .map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
          .join('.*')}$`,
      );
    for (const overlay of [CLUSTER_WIDE, ONE_NAMESPACE]) {
      const { config, deployment, container } = agentConfigOf(overlay);
      assert.equal(config.agent.id, 'outpost-agent-5f7d8-xyz12', `${overlay}: agent id from POD_NAME`);
      assert.equal(config.agent.zone, deployment.metadata.namespace, `${overlay}: zone from POD_NAMESPACE`);
      assert.equal(config.agent.replicas, deployment.spec.replicas, `${overlay}: agent.replicas matches the Deployment`);
      assert.equal(config.clouddriver.insecure, false);
      const files = [
        config.clouddriver.tls!.cacertFile!,
        config.clouddriver.tls!.clientCertFile!,
        config.clouddriver.tls!.clientKeyFile!,
        config.clouddriver.auth!.tokenFile!,
      ];
      for (const path of files)
        assert.ok(mountedFile(deployment, container, path).volume.secret, `${overlay}: ${path} comes from a Secret`);
      assert.equal(config.kubernetes.accounts.length, 1);
      const account = config.kubernetes.accounts[0]!;
      assert.equal(account.serviceAccount, true);
      assert.ok(
        agentRules.some((rule) => rule.accounts.some((p) => glob(p).test(account.name))),
        `${overlay}: the gateway lets an agent register ${account.name}`,
      );
      // probes reach the admin port, so it listens on the pod IP; the metrics port is the one the NetworkPolicy opens
      const ports = new Map((container.ports as Manifest[]).map((p) => [p.name, p.containerPort]));
      assert.equal(config.server.host, '0.0.0.0');
      assert.equal(ports.get('admin'), config.server.port);
      assert.equal(ports.get('metrics'), config.prometheus.port);
      assert.equal(container.readinessProbe.httpGet.path, '/health');
      assert.equal(container.livenessProbe.httpGet.path, '/livez');
      const policy = findOne(objects(overlay), 'NetworkPolicy', 'outpost-agent');
      assert.deepEqual(policy.spec.podSelector.matchLabels, deployment.spec.selector.matchLabels);
      assert.deepEqual(
        policy.spec.ingress.flatMap((r: Manifest) => r.ports.map((p: Manifest) => p.port)),
        ['metrics'],
      );
      assertHardened(deployment);
    }
    const namespaced = agentConfigOf(ONE_NAMESPACE).config.kubernetes.accounts[0]!;
    assert.deepEqual(namespaced.namespaces, ['team-a']);
    assert.equal(namespaced.onlyNamespacedResources, true);
  });

  test('the agents: a narrow ClusterRole for impersonation (users and groups, nothing else), bound to the agent service account', () => {
    const names = new Set<string>();
    for (const overlay of [CLUSTER_WIDE, ONE_NAMESPACE]) {
      const objs = objects(overlay);
      const roles = objs.filter((o) => o.kind === 'ClusterRole' && o.metadata.name.startsWith('outpost-agent-impersonate'));
      assert.equal(roles.length, 1, `${overlay}: one impersonation ClusterRole`);
      const role = roles[0]!;
      // exactly the impersonate verb on users and groups of the core group: no wildcard, no other verb or resource
      assert.deepEqual(role.rules, [{ apiGroups: [''], resources: ['users', 'groups'], verbs: ['impersonate'] }], overlay);
      assert.equal(role.aggregationRule, undefined, `${overlay}: not aggregated`);
      const bindings = objs.filter((o) => o.kind === 'ClusterRoleBinding' && o.roleRef.name === role.metadata.name);
      assert.equal(bindings.length, 1, `${overlay}: one binding`);
      const binding = bindings[0]!;
      assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role.metadata.name });
      const deployment = findOne(objs, 'Deployment', 'outpost-agent');
      const serviceAccount = findOne(objs, 'ServiceAccount', deployment.spec.template.spec.serviceAccountName);
      assert.deepEqual(
        binding.subjects,
        [{ kind: 'ServiceAccount', name: serviceAccount.metadata.name, namespace: deployment.metadata.namespace }],
        `${overlay}: bound to the agent's own service account`,
      );
      names.add(`${role.metadata.name} ${binding.metadata.name}`);
      // the agent's existing rights are still there, unchanged in kind
      assert.ok(objs.some((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && o.metadata.name === 'outpost-agent'));
    }
    assert.deepEqual(
      [...names].sort(),
      ['outpost-agent-impersonate outpost-agent-impersonate', 'outpost-agent-impersonate-team-a outpost-agent-impersonate-team-a'],
      'each overlay its own ClusterRole and binding (two agents in one cluster keep theirs)',
    );
  });

  test('each overlay applies to the sandbox with kubectl, and applying it again changes nothing', async () => {
    await kubectl.ok(['apply', '-f', '-'], { input: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n' });
    const plans: [string, string[]][] = [
      [GATEWAY, ['apply', '-f', '-']],
      [CLUSTER_WIDE, ['apply', '--server-side', '-f', '-']],
      [ONE_NAMESPACE, ['apply', '-f', '-']],
    ];
    for (const [overlay, args] of plans) {
      const out = await kubectl.ok(args, { input: renderedText.get(overlay)! });
      const lines = out.trim().split('\n');
      assert.equal(lines.length, objects(overlay).length, `${overlay}: one line per object:\n${out}`);
      for (const line of lines) assert.match(line, /\s(created|serverside-applied|unchanged)$/, `${overlay}: ${line}`);
    }
    // let the controllers settle (pods Running, Endpoints filled), then re-apply: no object changes
    await eventually(
      'three outpost pods Running',
      async () => sandbox.store.list('v1', 'Pod', 'outpost').filter((p) => (p as Manifest).status?.phase === 'Running').length === 3,
      { timeoutMs: 30_000 },
    );
    await eventually(
      'two pods in team-a and two in outpost-agent',
      async () => sandbox.store.list('v1', 'Pod', 'team-a').length === 2 && sandbox.store.list('v1', 'Pod', 'outpost-agent').length === 2,
      { timeoutMs: 30_000 },
    );
    await new Promise((r) => setTimeout(r, 200));
    const before = sandbox.store.resourceVersion;
    for (const [overlay, args] of plans) await kubectl.ok(args, { input: renderedText.get(overlay)! });
    assert.equal(sandbox.store.resourceVersion, before, 'the second apply wrote nothing');
  });

  test('read back: Deployments, the PodDisruptionBudgets (short name pdb) and the Endpoints replica discovery reads', async () => {
    const deploy = JSON.parse(await kubectl.ok(['-n', 'outpost', 'get', 'deployment', 'outpost-gateway', '-o', 'json']));
    assert.equal(deploy.spec.replicas, 3);
    assert.equal(deploy.status.readyReplicas, 3);
    const pdbs = JSON.parse(await kubectl.ok(['get', 'pdb', '-A', '-o', 'json'])).items.map(
      (p: Manifest) => `${p.metadata.namespace}/${p.metadata.name}`,
    );
    assert.deepEqual(pdbs.sort(), ['outpost-agent/outpost-agent', 'outpost/outpost-gateway', 'team-a/outpost-agent']);
    const status = await kubectl.run(['-n', 'outpost', 'rollout', 'status', 'deployment/outpost-gateway', '--timeout=10s']);
    assert.equal(status.code, 0, status.stderr);
    const ep = JSON.parse(await kubectl.ok(['-n', 'outpost', 'get', 'endpoints', 'spin-clouddriver', '-o', 'json']));
    assert.deepEqual(
      ep.subsets[0].ports.map((p: Manifest) => p.name),
      ['http'],
    );
    assert.equal(ep.subsets[0].addresses.length, 3);
    const clusterRole = JSON.parse(await kubectl.ok(['get', 'clusterrole', 'outpost-agent', '-o', 'json']));
    assert.ok(clusterRole.rules.some((r: Manifest) => r.verbs.includes('watch')));
  });

  test('replica discovery, configured from the applied ConfigMap, finds the three gateway pods and ignores the gRPC Service', async () => {
    const { config } = gatewayConfigOf(GATEWAY);
    const kubeconfigFile = join(dir, 'kubeconfig');
    await sandbox.writeKubeconfig(kubeconfigFile);
    const directory = createEndpointsDirectory({
      config: { ...config.replicas, namespace: 'outpost', kubeconfigFile },
      scheme: config.tls ? 'https' : 'http',
      logger: createSilentLogger(),
    });
    try {
      await directory.start();
      await eventually('three ready replicas listed', async () => directory.list().length === 3 && directory.list().every((r) => r.ready), {
        timeoutMs: 30_000,
      });
      const pods = sandbox.store.list('v1', 'Pod', 'outpost') as Manifest[];
      const expected = pods
        .map((p) => ({ id: p.metadata.name, baseUrl: `http://${p.status.podIP}:${config.httpPort}` }))
        .sort((a, b) => a.id.localeCompare(b.id));
      assert.deepEqual(
        directory
          .list()
          .map((r) => ({ id: r.id, baseUrl: r.baseUrl }))
          .sort((a, b) => a.id.localeCompare(b.id)),
        expected,
      );
      // each pod's replica id (OUTPOST_GATEWAY_ID = its name) is how the others know it
      for (const pod of pods) assert.equal(gatewayConfigOf(GATEWAY, pod.metadata.name).config.id, pod.metadata.name);
    } finally {
      await directory.close();
    }
  });

  test('RBAC as applied: the gateway may watch Endpoints in its namespace only; each agent gets its overlay scope', async () => {
    // The sandbox's own RBAC evaluation, over the Roles and bindings read back from the sandbox.
    const store = createObjectStore(createKindRegistry());
    for (const kind of ['namespaces', 'roles', 'rolebindings', 'clusterroles', 'clusterrolebindings']) {
      const list = JSON.parse(await kubectl.ok(['get', kind, '-A', '-o', 'json'])) as { items: Manifest[] };
      for (const item of list.items) {
        const { apiVersion, kind: k, metadata, status: _status, ...rest } = item;
        store.create(store.kindOf(apiVersion, k), {
          apiVersion,
          kind: k,
          metadata: { name: metadata.name, namespace: metadata.namespace },
          ...rest,
        });
      }
    }
    const authorizer = createAuthorizer(store);
    const sa = (namespace: string, name: string) => ({
      username: `system:serviceaccount:${namespace}:${name}`,
      groups: ['system:serviceaccounts', 'system:authenticated'],
    });
    const can = (user: ReturnType<typeof sa>, verb: string, resource: string, namespace?: string, group = '', subresource?: string) =>
      authorizer.authorize(user, { verb, resourceRequest: true, group, resource, namespace, subresource } satisfies AccessAttributes)
        .allowed;

    const gateway = sa('outpost', 'outpost-gateway');
    for (const verb of ['get', 'list', 'watch']) assert.ok(can(gateway, verb, 'endpoints', 'outpost'), `gateway may ${verb} endpoints`);
    assert.ok(!can(gateway, 'list', 'endpoints', 'default'), 'not in another namespace');
    assert.ok(!can(gateway, 'list', 'endpoints'), 'not cluster-wide');
    assert.ok(!can(gateway, 'create', 'endpoints', 'outpost'));
    assert.ok(!can(gateway, 'list', 'secrets', 'outpost'), 'nothing else');

    const wide = sa('outpost-agent', 'outpost-agent');
    for (const verb of ['list', 'watch']) {
      assert.ok(can(wide, verb, 'deployments', undefined, 'apps'), `cluster-wide agent may ${verb} deployments everywhere`);
      assert.ok(can(wide, verb, 'nodes'), 'and cluster-scoped kinds');
    }
    for (const verb of ['create', 'patch', 'update', 'delete'])
      assert.ok(can(wide, verb, 'deployments', 'web', 'apps'), `and ${verb} them`);
    assert.ok(can(wide, 'patch', 'deployments', 'web', 'apps', 'scale'), 'scale');
    assert.ok(can(wide, 'get', 'pods', 'web', '', 'log'), 'pod logs');
    assert.ok(can(wide, 'create', 'selfsubjectaccessreviews', undefined, 'authorization.k8s.io'), 'access reviews');

    const narrow = sa('team-a', 'outpost-agent');
    for (const verb of ['list', 'watch', 'create', 'patch', 'delete'])
      assert.ok(can(narrow, verb, 'deployments', 'team-a', 'apps'), `namespaced agent may ${verb} in team-a`);
    assert.ok(can(narrow, 'get', 'pods', 'team-a', '', 'log'));
    assert.ok(!can(narrow, 'list', 'deployments', 'team-b', 'apps'), 'not in another namespace');
    assert.ok(!can(narrow, 'list', 'deployments', undefined, 'apps'), 'not cluster-wide');
    assert.ok(!can(narrow, 'list', 'nodes'), 'no cluster-scoped kinds');

    // kubectl through the gateway: each agent may impersonate users and groups (outpost-agent-impersonate), and that
    // is the only impersonation anyone here may do
    for (const agent of [wide, narrow]) {
      for (const resource of ['users', 'groups']) assert.ok(can(agent, 'impersonate', resource), `agent may impersonate ${resource}`);
      assert.ok(!can(agent, 'impersonate', 'serviceaccounts', 'default'), 'not service accounts');
      assert.ok(!can(agent, 'impersonate', 'uids'), 'not uids');
      assert.ok(!can(agent, 'impersonate', 'userextras', undefined, 'authentication.k8s.io', 'scopes'), 'not user extras');
    }
    assert.ok(!can(gateway, 'impersonate', 'users'), 'the gateway impersonates nobody');
    assert.ok(!can(sa('team-b', 'outpost-agent'), 'impersonate', 'users'), 'only the bound service accounts');
  });
});

/** Non-root with a numeric uid, read-only root filesystem, no privilege escalation, every capability dropped. */
function assertHardened(deployment: Manifest): void {
  const pod = deployment.spec.template.spec.securityContext;
  const container = onlyContainer(deployment).securityContext;
  const name = deployment.metadata.name;
  assert.equal(pod.runAsNonRoot, true, `${name}: runAsNonRoot`);
  assert.ok(Number.isInteger(pod.runAsUser) && pod.runAsUser > 0, `${name}: numeric non-root uid`);
  assert.equal(pod.seccompProfile?.type, 'RuntimeDefault', `${name}: seccomp`);
  assert.equal(container.readOnlyRootFilesystem, true, `${name}: read-only root filesystem`);
  assert.equal(container.allowPrivilegeEscalation, false, `${name}: no privilege escalation`);
  assert.deepEqual(container.capabilities?.drop, ['ALL'], `${name}: capabilities dropped`);
}
