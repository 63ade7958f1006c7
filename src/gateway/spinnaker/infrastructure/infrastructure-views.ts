/**
 * The JSON shapes Deck reads through Gate (§2 of the Deck contract), built from cached objects already joined by the
 * caller: a server group with its pods and the Services of its namespace, a Deployment with its server groups, a
 * load balancer with the server groups it sends traffic to. Field names, nulls and the provider quirks (`platform:
 * "platform"`, `disabled` next to `isDisabled`) are Clouddriver's, because Deck and Gate read them as they are.
 */
import { healthEntriesOf, healthStateOf, instanceCountsOf, type HealthEntry } from './pod-health.js';
import {
  type CachedObject,
  createdTimeOf,
  desiredReplicasOf,
  fullNameOf,
  imagesOf,
  kindNameOf,
  korkMonikerOf,
  labelsOf,
  labelsOrNull,
  ownersOf,
  arrayAt,
  recordAt,
  textAt,
} from './object-facts.js';
import { trafficOf } from './traffic-links.js';

/** A cached object and the account it belongs to. */
export interface AccountObject {
  account: string;
  object: CachedObject;
}

/** A server group joined with what its views need. */
export interface JoinedServerGroup extends AccountObject {
  /** Pods whose ownerReferences name it. */
  pods: CachedObject[];
  /** Services (and other load balancers) of its account and namespace. */
  services: CachedObject[];
}

const nsOf = (object: CachedObject) => textAt(object, 'metadata', 'namespace');
const nameOf = (object: CachedObject) => textAt(object, 'metadata', 'name');
const PROVIDER = 'kubernetes';

/** `KubernetesHealth.toMap()`: the entry with Clouddriver's `platform` quirk. */
function healthMap(entry: HealthEntry): Record<string, unknown> {
  return { type: entry.type, source: entry.source, state: entry.state, platform: 'platform' };
}

/** Route #9's `KubernetesInstance`, also the `instances` of a server group's details. */
export function instanceDetails(account: string, pod: CachedObject): Record<string, unknown> {
  const entries = healthEntriesOf(pod);
  return {
    name: textAt(pod, 'metadata', 'uid'),
    humanReadableName: fullNameOf(pod),
    displayName: nameOf(pod),
    kind: kindNameOf(pod),
    apiVersion: textAt(pod, 'apiVersion'),
    account,
    namespace: nsOf(pod),
    zone: nsOf(pod),
    labels: labelsOf(pod),
    moniker: korkMonikerOf(pod),
    createdTime: createdTimeOf(pod),
    launchTime: null,
    healthState: healthStateOf(entries),
    health: entries.map(healthMap),
    cloudProvider: PROVIDER,
    providerType: PROVIDER,
  };
}

/** `InstanceViewModel` of the summary list. */
function instanceSummary(pod: CachedObject): Record<string, unknown> {
  const entries = healthEntriesOf(pod);
  return {
    id: textAt(pod, 'metadata', 'uid'),
    name: fullNameOf(pod),
    healthState: healthStateOf(entries),
    health: entries.map((e) => ({ type: e.type, state: e.state, status: null })),
    launchTime: null,
    availabilityZone: nsOf(pod),
  };
}

/** `serverGroupManagers` of a server group: its Deployment owners, by bare name. */
function managersOf(account: string, object: CachedObject): Record<string, unknown>[] {
  return ownersOf(object)
    .filter((o) => o.kind === 'Deployment')
    .map((o) => ({ account, location: nsOf(object), name: o.name }));
}

const sortedPods = (pods: readonly CachedObject[]) =>
  [...pods].sort((a, b) => (nameOf(a) < nameOf(b) ? -1 : nameOf(a) > nameOf(b) ? 1 : 0));

/** Route #4's `ServerGroupViewModel` (also `/serverGroups`). */
export function serverGroupSummary(sg: JoinedServerGroup): Record<string, unknown> {
  const { account, object } = sg;
  const moniker = korkMonikerOf(object);
  const pods = sortedPods(sg.pods);
  const traffic = trafficOf(object, sg.services);
  return {
    name: fullNameOf(object),
    account,
    region: nsOf(object),
    cluster: moniker.cluster,
    type: PROVIDER,
    cloudProvider: PROVIDER,
    application: null,
    moniker,
    isDisabled: traffic.disabled,
    createdTime: createdTimeOf(object),
    instances: pods.map(instanceSummary),
    instanceCounts: instanceCountsOf(pods.map((p) => healthStateOf(healthEntriesOf(p)))),
    capacity: { min: null, max: null, desired: desiredReplicasOf(object), pinned: false },
    loadBalancers: traffic.loadBalancers,
    securityGroups: [],
    serverGroupManagers: managersOf(account, object),
    buildInfo: { images: imagesOf(object) },
    labels: labelsOrNull(object),
    vpcId: null,
    instanceType: null,
    providerMetadata: null,
    targetGroups: null,
    tags: null,
  };
}

/** Route #7's `KubernetesServerGroup`. */
export function serverGroupDetails(sg: JoinedServerGroup): Record<string, unknown> {
  const { account, object } = sg;
  const pods = sortedPods(sg.pods);
  const traffic = trafficOf(object, sg.services);
  const buildInfo = { images: imagesOf(object) };
  return {
    ...resourceFields(account, object),
    accountName: account,
    type: PROVIDER,
    disabled: traffic.disabled,
    isDisabled: traffic.disabled,
    instances: pods.map((p) => instanceDetails(account, p)),
    instanceCounts: instanceCountsOf(pods.map((p) => healthStateOf(healthEntriesOf(p)))),
    capacity: { min: null, max: null, desired: desiredReplicasOf(object), pinned: false },
    loadBalancers: traffic.loadBalancers,
    serverGroupManagers: managersOf(account, object),
    buildInfo,
    securityGroups: [],
    zones: [],
    launchConfig: {},
    imagesSummary: { summaries: [{ serverGroupName: nameOf(object), buildInfo, imageId: null, imageName: null, image: null }] },
    imageSummary: null,
    extraAttributes: {},
  };
}

/**
 * The fields every Kubernetes resource view shares (Clouddriver's `KubernetesResource`): full name, bare name, kind,
 * apiVersion, account, namespace (also as region), provider, creation time, labels and moniker.
 */
function resourceFields(account: string, object: CachedObject): Record<string, unknown> {
  return {
    name: fullNameOf(object),
    displayName: nameOf(object),
    kind: kindNameOf(object),
    apiVersion: textAt(object, 'apiVersion'),
    account,
    namespace: nsOf(object),
    region: nsOf(object),
    cloudProvider: PROVIDER,
    createdTime: createdTimeOf(object),
    labels: labelsOf(object),
    moniker: korkMonikerOf(object),
  };
}

/** Route #5's `KubernetesServerGroupManager`, with the server groups it owns. */
export function managerView(manager: AccountObject, serverGroups: readonly CachedObject[]): Record<string, unknown> {
  const { account, object } = manager;
  return {
    ...resourceFields(account, object),
    serverGroups: [...serverGroups]
      .sort((a, b) => (fullNameOf(a) < fullNameOf(b) ? -1 : 1))
      .map((sg) => ({ name: fullNameOf(sg), account, namespace: nsOf(sg), region: nsOf(sg), moniker: korkMonikerOf(sg) })),
  };
}

/** Route #6's `KubernetesLoadBalancer`: `serverGroups` are those it links to, each with its pods. */
export function loadBalancerView(lb: AccountObject, serverGroups: readonly JoinedServerGroup[]): Record<string, unknown> {
  const { account, object } = lb;
  return {
    ...resourceFields(account, object),
    type: PROVIDER,
    serverGroups: serverGroups.map((sg) => ({
      name: fullNameOf(sg.object),
      account: sg.account,
      region: nsOf(sg.object),
      cloudProvider: PROVIDER,
      isDisabled: trafficOf(sg.object, sg.services).disabled,
      detachedInstances: [],
      instances: sortedPods(sg.pods).map((pod) => ({
        id: textAt(pod, 'metadata', 'uid'),
        name: fullNameOf(pod),
        zone: nsOf(pod),
        // Clouddriver merges the pod entry and the container entries into one map: the last one wins.
        health: Object.assign(
          { type: 'kubernetes/pod', source: 'Pod', state: 'Unknown', platform: 'platform' },
          ...healthEntriesOf(pod).map(healthMap),
        ),
      })),
    })),
  };
}

/** One rule of a NetworkPolicy direction: `{protocol, portRanges}` per port. */
function rulesOf(object: CachedObject, direction: 'ingress' | 'egress'): Record<string, unknown>[] {
  const rules: Record<string, unknown>[] = [];
  for (const entry of arrayAt(object, 'spec', direction)) {
    const ports = arrayAt(entry, 'ports');
    if (ports.length === 0) {
      rules.push({ protocol: null, portRanges: null });
      continue;
    }
    for (const port of ports) {
      const p = recordAt(port);
      const start = p.port;
      const end = typeof p.endPort === 'number' ? p.endPort : start;
      rules.push({
        protocol: typeof p.protocol === 'string' ? p.protocol : 'TCP',
        portRanges: [
          {
            startPort: typeof start === 'number' ? start : null,
            endPort: typeof end === 'number' ? end : null,
            startPortName: typeof start === 'string' ? start : null,
            endPortName: typeof end === 'string' ? end : null,
          },
        ],
      });
    }
  }
  return rules;
}

/** Route #14's `KubernetesSecurityGroup`. */
export function securityGroupDetails(sg: AccountObject): Record<string, unknown> {
  const { account, object } = sg;
  const name = fullNameOf(object);
  const moniker = korkMonikerOf(object);
  return {
    ...resourceFields(account, object),
    id: name,
    accountName: account,
    application: moniker.app,
    type: PROVIDER,
    summary: { id: name, name },
    inboundRules: rulesOf(object, 'ingress'),
    outboundRules: rulesOf(object, 'egress'),
  };
}
