/**
 * Sending a Service's traffic to a workload on deploy (`enableTraffic`): every Service named in the workload's
 * `traffic.spinnaker.io/load-balancers` annotation has its selector labels added to the workload's pod template
 * labels (or its own labels when it has no pod template), so the new pods match the Service as soon as they start.
 */
import { parseResourceName, spinnakerKindOf } from '../../status/kind-names.js';
import type { KubeObject } from './deploy-types.js';
import { DeployPlanError, isRecord } from './deploy-types.js';
import { loadBalancersOf, stringMap, templateMetadata } from './manifest-annotations.js';

type LiveObject = (agentKind: string, namespace: string, name: string) => Promise<KubeObject | undefined>;

async function findLoadBalancer(
  text: string,
  namespace: string,
  requested: readonly KubeObject[],
  liveObject: LiveObject | undefined,
): Promise<KubeObject> {
  const parsed = parseResourceName(text);
  if (!parsed) {
    throw new DeployPlanError(
      `Failed to attach load balancer '${text}'. Load balancers must be specified in the form '{kind} {name}', e.g. 'service my-service'.`,
    );
  }
  if (parsed.kind.registered?.name !== 'service') {
    throw new DeployPlanError(`No support for load balancing via ${parsed.kind.spinnakerName} exists in Spinnaker`);
  }
  const inRequest = requested.find(
    (m) =>
      spinnakerKindOf(m.apiVersion, m.kind) === 'service' && (m.metadata.namespace ?? '') === namespace && m.metadata.name === parsed.name,
  );
  const found = inRequest ?? (await liveObject?.('Service', namespace, parsed.name));
  if (!found) throw new DeployPlanError(`Load balancer service ${parsed.name} does not exist`);
  return found;
}

/**
 * Adds the selector labels of each Service named in `target`'s traffic annotation to `target` (in place). Services
 * are looked up among `requested` (the manifests of this deploy) first, then live through `liveObject` if given.
 * Throws DeployPlanError when a Service is missing, has no selector, or shares a label key with the workload.
 */
export async function attachLoadBalancers(
  target: KubeObject,
  requested: readonly KubeObject[],
  liveObject: LiveObject | undefined,
): Promise<void> {
  const namespace = target.metadata.namespace ?? '';
  for (const text of loadBalancersOf(target)) {
    const service = await findLoadBalancer(text, namespace, requested, liveObject);
    const spec = isRecord(service.spec) ? service.spec : {};
    const selector = isRecord(spec.selector) ? (spec.selector as Record<string, string>) : {};
    if (Object.keys(selector).length === 0) {
      throw new DeployPlanError(`Service ${text} must have a non-empty selector in order to be attached to a workload`);
    }
    const template = templateMetadata(target);
    const labels = stringMap(template ?? target.metadata, 'labels');
    if (Object.keys(selector).some((key) => Object.hasOwn(labels, key))) {
      throw new DeployPlanError(
        `Service ${text}: its selector must have no label keys in common with target workload ${target.metadata.name}`,
      );
    }
    Object.assign(labels, selector);
  }
}
