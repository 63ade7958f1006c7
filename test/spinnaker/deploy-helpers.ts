/**
 * Builders shared by the Deploy (Manifest) planning tests: manifests, a fake cluster context recording its reads,
 * and live versions as a previous deploy left them.
 */
import type { DeployContext, KubeObject } from '../../src/gateway/spinnaker/deploy/deploy-types.js';

export const ACCOUNT = 'k8s-prod';

export function configMap(name: string, data: Record<string, string> = { key: 'value' }, namespace = 'prod'): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

export function deployment(name: string, podSpec: Record<string, unknown>, namespace = 'prod'): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: podSpec },
    },
  };
}

/** A live version of `base` as a previous deploy left it. */
export function liveVersion(
  object: KubeObject,
  base: string,
  version: string,
  created: string,
  extraAnnotations: Record<string, string> = {},
): KubeObject {
  return {
    ...structuredClone(object),
    metadata: {
      name: `${base}-${version}`,
      namespace: object.metadata.namespace,
      creationTimestamp: created,
      annotations: {
        'artifact.spinnaker.io/type': `kubernetes/${object.kind === 'ConfigMap' ? 'configMap' : object.kind}`,
        'artifact.spinnaker.io/name': base,
        'artifact.spinnaker.io/version': version,
        ...extraAnnotations,
      },
    },
  };
}

export interface FakeContext extends DeployContext {
  calls: { agentKind: string; namespace: string; baseName: string }[];
}

/** A context whose cluster holds `live` (all namespaced kinds are the usual core and apps ones). */
export function fakeContext(live: KubeObject[] = [], liveObjects: KubeObject[] = []): FakeContext {
  const clusterScoped = new Set([
    'Namespace',
    'ClusterRole',
    'ClusterRoleBinding',
    'CustomResourceDefinition',
    'StorageClass',
    'PersistentVolume',
  ]);
  const calls: FakeContext['calls'] = [];
  return {
    account: ACCOUNT,
    calls,
    isNamespaced: (_apiVersion, kind) => !clusterScoped.has(kind),
    existingVersions: async (agentKind, namespace, baseName) => {
      calls.push({ agentKind, namespace, baseName });
      return live.filter(
        (o) =>
          o.kind === agentKind &&
          (o.metadata.namespace ?? '') === namespace &&
          o.metadata.annotations?.['artifact.spinnaker.io/name'] === baseName,
      );
    },
    liveObject: async (agentKind, namespace, name) =>
      liveObjects.find((o) => o.kind === agentKind && (o.metadata.namespace ?? '') === namespace && o.metadata.name === name),
  };
}

export const MONIKER = { app: 'shop' };
