/**
 * Impersonation as kube-apiserver does it: who may impersonate whom (403 with upstream's message otherwise), the
 * impersonated user's groups (`Impersonate-Group`, plus `system:authenticated`), and RBAC, access reviews and
 * `kubectl auth can-i --list` all evaluated as the impersonated user. kubectl's own `--as`/`--as-group` set the
 * headers; the rest goes over plain HTTP.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { call } from './api-client.js';
import { createKubectl, type Kubectl } from '../../testkit/kubectl-runner.js';
import { createRunningPod, KUBECTL_133 } from './stream-fixtures.js';

const NS = 'imp';
const RBAC = 'rbac.authorization.k8s.io/v1';

/** alice reads pods in NS; group devs reads configmaps in NS; the restricted user may impersonate alice only. */
function grant(sb: Sandbox): void {
  createRunningPod(sb, NS, 'web');
  const role = (name: string, resources: string[]) =>
    sb.store.create({
      apiVersion: RBAC,
      kind: 'Role',
      metadata: { name, namespace: NS },
      rules: [{ apiGroups: [''], resources, verbs: ['get', 'list'] }],
    });
  const bind = (name: string, subject: Record<string, string>, roleName: string) =>
    sb.store.create({
      apiVersion: RBAC,
      kind: 'RoleBinding',
      metadata: { name, namespace: NS },
      subjects: [subject],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: roleName },
    });
  role('pod-reader', ['pods']);
  role('config-reader', ['configmaps']);
  bind('alice-pods', { kind: 'User', name: 'alice' }, 'pod-reader');
  bind('devs-config', { kind: 'Group', name: 'devs' }, 'config-reader');
  sb.store.create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: 'impersonate-alice' },
    rules: [{ apiGroups: [''], resources: ['users'], resourceNames: ['alice'], verbs: ['impersonate'] }],
  });
  sb.store.create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'restricted-impersonates-alice' },
    subjects: [{ kind: 'User', name: 'sandbox-restricted' }],
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'impersonate-alice' },
  });
}

describe('impersonation over HTTP', () => {
  let sb: Sandbox;
  before(async () => {
    sb = await startSandbox();
    grant(sb);
  });
  after(() => sb?.close());

  test("the admin (system:masters) may impersonate anyone; the request then has only that user's rights", async () => {
    const pods = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { headers: { 'Impersonate-User': 'alice' } });
    assert.equal(pods.status, 200);
    const secrets = await call(sb, 'GET', `/api/v1/namespaces/${NS}/secrets`, { headers: { 'Impersonate-User': 'alice' } });
    assert.equal(secrets.status, 403);
    assert.equal(
      secrets.json.message,
      `secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "${NS}"`,
    );
  });

  test('impersonating needs verb impersonate on users, groups and uids', async () => {
    const token = sb.restrictedToken;
    const asAlice = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { token, headers: { 'Impersonate-User': 'alice' } });
    assert.equal(asAlice.status, 200);
    const asBob = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { token, headers: { 'Impersonate-User': 'bob' } });
    assert.equal(asBob.status, 403);
    assert.equal(
      asBob.json.message,
      'users "bob" is forbidden: User "sandbox-restricted" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
    const withGroup = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, {
      token,
      headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'devs' },
    });
    assert.equal(withGroup.status, 403);
    assert.equal(
      withGroup.json.message,
      'groups "devs" is forbidden: User "sandbox-restricted" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const withUid = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, {
      token,
      headers: { 'Impersonate-User': 'alice', 'Impersonate-Uid': 'u-1' },
    });
    assert.equal(withUid.status, 403);
    assert.match(
      withUid.json.message,
      /^uids.authentication.k8s.io "u-1" is forbidden: .* cannot impersonate resource "uids" in API group "authentication.k8s.io"/,
    );
  });

  test("an impersonated user cannot impersonate further (only the authenticated user's rights count)", async () => {
    // the admin impersonates alice, and alice may not impersonate: the one set of headers is checked against the admin
    const r = await call(sb, 'GET', `/api/v1/namespaces/${NS}/configmaps`, {
      headers: { 'Impersonate-User': 'alice', 'Impersonate-Group': 'devs' },
    });
    assert.equal(r.status, 200, 'the admin may add the group devs, whose role reads configmaps');
  });

  test('Impersonate-Extra-* needs impersonate on userextras/<key>', async () => {
    const headers = { 'Impersonate-User': 'alice', 'Impersonate-Extra-Scopes': 'view' };
    assert.equal((await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { headers })).status, 200);
    const r = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { token: sb.restrictedToken, headers });
    assert.equal(r.status, 403);
    assert.equal(
      r.json.message,
      'userextras.authentication.k8s.io "view" is forbidden: User "sandbox-restricted" cannot impersonate resource "userextras/scopes" in API group "authentication.k8s.io" at the cluster scope',
    );
  });

  test('Impersonate-Group without Impersonate-User is a 400', async () => {
    const r = await call(sb, 'GET', `/api/v1/namespaces/${NS}/pods`, { headers: { 'Impersonate-Group': 'devs' } });
    assert.equal(r.status, 400);
    assert.match(r.json.message, /without impersonating a user/);
  });

  test('access reviews answer for the impersonated user, who is in system:authenticated', async () => {
    const review = (resource: string, verb: string) =>
      call(sb, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
        headers: { 'Impersonate-User': 'alice' },
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes: { namespace: NS, resource, verb } },
        },
      });
    assert.equal((await review('pods', 'list')).json.status.allowed, true);
    assert.equal((await review('secrets', 'list')).json.status.allowed, false);
    const rules = await call(sb, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      headers: { 'Impersonate-User': 'alice' },
      body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: NS } },
    });
    assert.equal(rules.status, 201, 'system:basic-user (bound to system:authenticated) lets alice ask');
    const resources = (rules.json.status.resourceRules as { resources?: string[] }[]).flatMap((r) => r.resources ?? []);
    assert.ok(resources.includes('pods'));
    assert.ok(!resources.includes('*') && !resources.includes('secrets'));
  });

  test('the fault endpoint sees the impersonated user too', async () => {
    const r = await call(sb, 'GET', '/sandbox/faults', { headers: { 'Impersonate-User': 'alice' } });
    assert.equal(r.status, 403);
  });
});

describe('kubectl 1.33 --as', { skip: existsSync(KUBECTL_133) ? false : `${KUBECTL_133} not installed` }, () => {
  let sb: Sandbox;
  let kubectl: Kubectl;
  before(async () => {
    sb = await startSandbox({ tls: true });
    grant(sb);
    kubectl = await createKubectl(KUBECTL_133, sb);
  });
  after(async () => {
    kubectl?.cleanup();
    await sb?.close();
  });

  test("auth can-i --list --as shows only the impersonated user's rules", async () => {
    const own = await kubectl.ok(['auth', 'can-i', '--list', '-n', NS]);
    assert.match(own, /^\*\.\*\s/m, 'the admin can do everything');
    const alice = await kubectl.ok(['auth', 'can-i', '--list', '-n', NS, '--as', 'alice']);
    assert.doesNotMatch(alice, /^\*\.\*\s/m);
    assert.match(alice, /^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);
    assert.doesNotMatch(alice, /^configmaps/m);
    const withGroups = await kubectl.ok(['auth', 'can-i', '--list', '-n', NS, '--as', 'bob', '--as-group', 'ops', '--as-group', 'devs']);
    assert.match(withGroups, /^configmaps\s+\[\]\s+\[\]\s+\[get list\]$/m, 'the second --as-group counts too');
    assert.doesNotMatch(withGroups, /^pods\s/m);
  });

  test('an impersonated user is allowed what it may and denied the rest with a 403', async () => {
    assert.match(await kubectl.ok(['get', 'pods', '-n', NS, '--as', 'alice']), /^web\s+1\/1\s+Running/m);
    const denied = await kubectl.run(['get', 'secrets', '-n', NS, '--as', 'alice']);
    assert.notEqual(denied.code, 0);
    assert.match(
      denied.stderr,
      /Error from server \(Forbidden\): secrets is forbidden: User "alice" cannot list resource "secrets" in API group "" in the namespace "imp"/,
    );
    assert.equal((await kubectl.run(['auth', 'can-i', 'delete', 'pods', '-n', NS, '--as', 'alice'])).stdout.trim(), 'no');
  });

  test("a user not allowed to impersonate gets upstream's 403", async () => {
    const r = await kubectl.run(['--context', 'sandbox-restricted', 'get', 'pods', '-n', NS, '--as', 'bob']);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /users "bob" is forbidden: User "sandbox-restricted" cannot impersonate resource "users" in API group "" at the cluster scope/,
    );
    assert.match(await kubectl.ok(['--context', 'sandbox-restricted', 'get', 'pods', '-n', NS, '--as', 'alice']), /^web\s/m);
  });

  test('exec and port-forward authorize the impersonated user', async () => {
    const r = await kubectl.run(['exec', '-n', NS, 'web', '--as', 'alice', '--', 'echo', 'hi']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /User "alice" cannot create resource "pods\/exec"/);
    assert.equal(
      await kubectl.ok(['exec', '-n', NS, 'web', '--as', 'someone', '--as-group', 'system:masters', '--', 'echo', 'hi']),
      'hi\n',
    );
  });
});
