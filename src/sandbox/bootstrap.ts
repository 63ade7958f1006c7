/**
 * Objects every sandbox starts with: the standard namespaces and the RBAC that makes the two token users what they
 * are. The restricted user's rights are ordinary ClusterRole/ClusterRoleBinding objects, evaluated like any RBAC, so a
 * test can read or change them through the API.
 */
import { ADMIN_USER, RESTRICTED_USER } from './auth.js';
import type { ObjectStore } from './store.js';

/** The ClusterRole granted to the restricted user. */
const RESTRICTED_ROLE = 'sandbox-restricted';

const RBAC = 'rbac.authorization.k8s.io/v1';

/** Creates the namespaces and RBAC objects in an empty store. */
export function bootstrapStore(store: ObjectStore): void {
  const create = (obj: Record<string, unknown>) => store.create(store.kindOf(obj.apiVersion, obj.kind), obj);
  for (const name of ['default', 'kube-system', 'kube-public', 'kube-node-lease']) {
    create({
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name, labels: { 'kubernetes.io/metadata.name': name } },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: 'Active' },
    });
  }
  create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: 'cluster-admin', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    rules: [
      { apiGroups: ['*'], resources: ['*'], verbs: ['*'] },
      { nonResourceURLs: ['*'], verbs: ['*'] },
    ],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'cluster-admin' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: ADMIN_USER.groups[0] }],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: 'system:discovery', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    rules: [
      {
        nonResourceURLs: [
          '/',
          '/api',
          '/api/*',
          '/apis',
          '/apis/*',
          '/healthz',
          '/livez',
          '/readyz',
          '/openapi',
          '/openapi/*',
          '/version',
          '/version/',
        ],
        verbs: ['get'],
      },
    ],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'system:discovery' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:discovery' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
  });
  // as in Kubernetes, every authenticated user may ask what it may do (kubectl auth can-i, also when impersonated)
  create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: 'system:basic-user', labels: { 'kubernetes.io/bootstrapping': 'rbac-defaults' } },
    rules: [
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'], verbs: ['create'] },
      { apiGroups: ['authentication.k8s.io'], resources: ['selfsubjectreviews'], verbs: ['create'] },
    ],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: 'system:basic-user' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:basic-user' },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRole',
    metadata: { name: RESTRICTED_ROLE },
    rules: [
      { apiGroups: [''], resources: ['namespaces', 'pods', 'services', 'configmaps', 'events'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['apps'], resources: ['deployments', 'replicasets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['selfsubjectaccessreviews'], verbs: ['create'] },
    ],
  });
  create({
    apiVersion: RBAC,
    kind: 'ClusterRoleBinding',
    metadata: { name: RESTRICTED_ROLE },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: RESTRICTED_ROLE },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: RESTRICTED_USER.username }],
  });
}
