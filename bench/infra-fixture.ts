/**
 * The cache contents of the spinnaker-infra benchmark: for each account, the measured application's clusters — each a
 * Deployment deployed by Spinnaker (moniker and artifact annotations) owning several ReplicaSets (revisions), each
 * with a few running pods, and a Service selecting the Deployment's pods — plus other applications deployed the same
 * way in their own namespaces, and ConfigMaps, so that an application's objects are a small part of every account
 * (what the moniker and owner indexes are for). The objects have the fields a real cluster returns for them (status,
 * owner references, pod-template-hash labels, container statuses), without managedFields (large on a real cluster:
 * the figures here are a floor for those). Deterministic: the same parameters give the same objects.
 */
import { createHash } from 'node:crypto';

/** A Kubernetes object as an agent sends it. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string } & Record<string, unknown>;
} & Record<string, unknown>;

/** Sizes of the fixture. */
export interface InfraFixtureSize {
  accounts: number;
  /** Server groups (ReplicaSets) of the measured application, over every account. */
  serverGroups: number;
  /** Clusters (Deployments) of the measured application in each account. */
  clustersPerAccount: number;
  podsPerServerGroup: number;
  /** Other applications in each account (each a Deployment with 2 ReplicaSets of 2 pods, a Service, 2 ConfigMaps). */
  otherApps: number;
}

/** The measured application. */
export const INFRA_APP = 'shop';
/** The kinds the simulated agents announce and list, in this order. */
export const INFRA_KINDS = [
  { apiVersion: 'apps/v1', kind: 'Deployment', resource: 'deployments' },
  { apiVersion: 'apps/v1', kind: 'ReplicaSet', resource: 'replicasets' },
  { apiVersion: 'v1', kind: 'Pod', resource: 'pods' },
  { apiVersion: 'v1', kind: 'Service', resource: 'services' },
  { apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps' },
] as const;
const CLUSTER_NAMES = ['api', 'web', 'worker', 'cart', 'search', 'checkout', 'catalog', 'auth', 'images', 'mail'];
const CREATED = '2026-11-20T10:00:00Z';

const hex = (seed: string, length: number) => createHash('sha256').update(seed).digest('hex').slice(0, length);
const uuid = (seed: string) => {
  const h = hex(seed, 32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** Builds one account's objects; `next` numbers their resourceVersions. */
function accountObjects(account: string, size: InfraFixtureSize, appServerGroups: number, next: () => string): KubeObject[] {
  const out: KubeObject[] = [];
  const meta = (kind: string, namespace: string, name: string, extra: Record<string, unknown> = {}) => ({
    name,
    namespace,
    uid: uuid(`${account}/${kind}/${namespace}/${name}`),
    resourceVersion: next(),
    creationTimestamp: CREATED,
    ...extra,
  });
  const ownerRef = (o: KubeObject) => ({
    apiVersion: o.apiVersion,
    kind: o.kind,
    name: o.metadata.name,
    uid: o.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  });
  /** One cluster: a Deployment, `revisions` ReplicaSets of `pods` pods each, a Service and `configMaps` ConfigMaps. */
  const cluster = (app: string, namespace: string, name: string, revisions: number, pods: number, configMaps: number) => {
    const monikers = {
      'moniker.spinnaker.io/application': app,
      'moniker.spinnaker.io/cluster': `deployment ${name}`,
      'artifact.spinnaker.io/location': namespace,
      'artifact.spinnaker.io/name': name,
      'artifact.spinnaker.io/type': 'kubernetes/deployment',
    };
    const labels = { app: name, 'app.kubernetes.io/managed-by': 'spinnaker', 'app.kubernetes.io/name': app };
    const template = (image: string, hash?: string) => ({
      metadata: {
        labels: { ...labels, ...(hash ? { 'pod-template-hash': hash } : {}) },
        annotations: { 'moniker.spinnaker.io/application': app },
      },
      spec: {
        containers: [
          {
            name: 'main',
            image,
            ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
            resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } },
            readinessProbe: { httpGet: { path: '/health', port: 'http', scheme: 'HTTP' }, periodSeconds: 10 },
          },
        ],
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 30,
        dnsPolicy: 'ClusterFirst',
        serviceAccountName: 'default',
      },
    });
    const image = (revision: number) => `registry.example.com/${app}/${name}:1.${revision}.0`;
    const deployment: KubeObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('Deployment', namespace, name, {
        generation: revisions,
        labels,
        annotations: { ...monikers, 'deployment.kubernetes.io/revision': String(revisions) },
      }),
      spec: { replicas: pods, selector: { matchLabels: labels }, template: template(image(revisions)), revisionHistoryLimit: 10 },
      status: { observedGeneration: revisions, replicas: pods, updatedReplicas: pods, readyReplicas: pods, availableReplicas: pods },
    };
    out.push(deployment);
    for (let revision = 1; revision <= revisions; revision++) {
      const hash = hex(`${account}/${namespace}/${name}/${revision}`, 10);
      const rsName = `${name}-${hash}`;
      const rs: KubeObject = {
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: meta('ReplicaSet', namespace, rsName, {
          generation: 1,
          labels: { ...labels, 'pod-template-hash': hash },
          annotations: {
            ...monikers,
            'deployment.kubernetes.io/revision': String(revision),
            'deployment.kubernetes.io/desired-replicas': String(pods),
            'deployment.kubernetes.io/max-replicas': String(pods + 1),
          },
          ownerReferences: [ownerRef(deployment)],
        }),
        spec: {
          replicas: pods,
          selector: { matchLabels: { ...labels, 'pod-template-hash': hash } },
          template: template(image(revision), hash),
        },
        status: { replicas: pods, fullyLabeledReplicas: pods, readyReplicas: pods, availableReplicas: pods, observedGeneration: 1 },
      };
      out.push(rs);
      for (let p = 0; p < pods; p++) {
        const podName = `${rsName}-${hex(`${rsName}/${p}`, 5)}`;
        const ip = `10.${(out.length >> 16) & 255}.${(out.length >> 8) & 255}.${out.length & 255}`;
        out.push({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: meta('Pod', namespace, podName, {
            generateName: `${rsName}-`,
            labels: { ...labels, 'pod-template-hash': hash },
            annotations: { 'moniker.spinnaker.io/application': app },
            ownerReferences: [ownerRef(rs)],
          }),
          spec: { ...template(image(revision), hash).spec, nodeName: `node-${p % 7}`, schedulerName: 'default-scheduler' },
          status: {
            phase: 'Running',
            hostIP: `192.168.0.${(p % 7) + 10}`,
            podIP: ip,
            podIPs: [{ ip }],
            startTime: CREATED,
            qosClass: 'Burstable',
            conditions: ['Initialized', 'Ready', 'ContainersReady', 'PodScheduled'].map((type) => ({
              type,
              status: 'True',
              lastProbeTime: null,
              lastTransitionTime: CREATED,
            })),
            containerStatuses: [
              {
                name: 'main',
                ready: true,
                started: true,
                restartCount: 0,
                image: image(revision),
                imageID: `registry.example.com/${app}/${name}@sha256:${hex(image(revision), 64)}`,
                containerID: `containerd://${hex(podName, 64)}`,
                state: { running: { startedAt: CREATED } },
              },
            ],
          },
        });
      }
    }
    out.push({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta('Service', namespace, name, {
        labels,
        annotations: { 'moniker.spinnaker.io/application': app, 'moniker.spinnaker.io/cluster': `service ${name}` },
      }),
      spec: {
        type: 'ClusterIP',
        selector: { app: name },
        ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }],
        clusterIP: `172.20.${out.length & 255}.${(out.length >> 8) & 255}`,
        sessionAffinity: 'None',
      },
      status: { loadBalancer: {} },
    });
    for (let c = 0; c < configMaps; c++) {
      out.push({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta('ConfigMap', namespace, `${name}-config-${c}`, { labels }),
        data: { 'application.yaml': `server:\n  port: 8080\nfeature:\n  flag${c}: true\n`, LOG_LEVEL: 'info' },
      });
    }
  };

  // The measured application: its server groups spread over its clusters, revisions as even as they divide.
  for (let c = 0; c < size.clustersPerAccount; c++) {
    const revisions = Math.floor(appServerGroups / size.clustersPerAccount) + (c < appServerGroups % size.clustersPerAccount ? 1 : 0);
    if (revisions === 0) continue;
    const name = `${INFRA_APP}-${CLUSTER_NAMES[c % CLUSTER_NAMES.length]}${c >= CLUSTER_NAMES.length ? c : ''}`;
    cluster(INFRA_APP, INFRA_APP, name, revisions, size.podsPerServerGroup, 1);
  }
  for (let a = 0; a < size.otherApps; a++) cluster(`app${a}`, `app${a}`, `app${a}-main`, 2, 2, 2);
  return out;
}

/** Every account's objects, by account name (`infra-000`…), the measured application's server groups spread evenly. */
export function infraFixture(size: InfraFixtureSize): { account: string; objects: KubeObject[] }[] {
  let rv = 1000;
  const next = () => String(++rv);
  return Array.from({ length: size.accounts }, (_, k) => {
    const account = `infra-${String(k).padStart(3, '0')}`;
    const mine = Math.floor(size.serverGroups / size.accounts) + (k < size.serverGroups % size.accounts ? 1 : 0);
    return { account, objects: accountObjects(account, size, mine, next) };
  });
}
