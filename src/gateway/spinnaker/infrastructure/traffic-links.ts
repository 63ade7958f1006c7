/**
 * Load balancer ↔ server group links as Clouddriver's handlers compute them (§3.6 of the Deck contract): a Service is
 * linked to a ReplicaSet of its namespace when every key/value of its (non-empty) `spec.selector` is in the
 * ReplicaSet's pod-template labels; a StatefulSet to the Service its `spec.serviceName` names. DaemonSets, Jobs and
 * CronJobs get no such link, and an Ingress lists no server groups. A server group's `loadBalancers` adds what its
 * `traffic.spinnaker.io/load-balancers` annotation lists, and it is *disabled* when the annotation lists a load
 * balancer but none is linked — what Disable Manifest leaves behind (the selector labels removed from the template).
 * Callers pass objects of one account and namespace.
 */
import { annotatedLoadBalancersOf, type CachedObject, fullNameOf, recordAt, textAt } from './object-facts.js';

/** True when `service` (a Service) sends traffic to `serverGroup` by the rules above. */
export function serviceLinksTo(service: CachedObject, serverGroup: CachedObject): boolean {
  if (textAt(service, 'kind') !== 'Service') return false;
  const kind = textAt(serverGroup, 'kind');
  if (kind === 'StatefulSet') {
    const serviceName = textAt(serverGroup, 'spec', 'serviceName');
    return serviceName !== '' && serviceName === textAt(service, 'metadata', 'name');
  }
  if (kind !== 'ReplicaSet') return false;
  const selector = Object.entries(recordAt(service, 'spec', 'selector'));
  if (selector.length === 0) return false;
  const labels = recordAt(serverGroup, 'spec', 'template', 'metadata', 'labels');
  return selector.every(([key, value]) => labels[key] === value);
}

/** The traffic view of one server group. */
export interface TrafficOf {
  /** Full names of the linked load balancers ∪ the annotated ones, sorted. */
  loadBalancers: string[];
  /** The linked load balancers only (objects), for the load-balancer views. */
  linked: CachedObject[];
  disabled: boolean;
}

/** The traffic view of `serverGroup` among the `services` of its namespace. */
export function trafficOf(serverGroup: CachedObject, services: readonly CachedObject[]): TrafficOf {
  const linked = services.filter((s) => serviceLinksTo(s, serverGroup));
  const annotated = annotatedLoadBalancersOf(serverGroup);
  const names = new Set([...linked.map(fullNameOf), ...annotated]);
  return { loadBalancers: [...names].sort(), linked, disabled: linked.length === 0 && annotated.length > 0 };
}
