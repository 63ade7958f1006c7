import type { JsonObject, JsonValue } from '@bufbuild/protobuf';
import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';

/**
 * What one object's body says about other objects of its namespace: its ownerReferences, a Service's pod selector,
 * the Services an Ingress sends traffic to, the workload an HPA scales. Pure readers of the cached body (no call):
 * the object page's relations (relations-load.ts) follow them through the cache.
 */

/** Another object named by kind and name, in the same namespace as the object naming it. */
export interface KindName {
  kind: string;
  name: string;
}

function field(value: JsonValue | undefined, key: string): JsonValue | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject)[key] : undefined;
}

function text(value: JsonValue | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The kinds and names of `object`'s ownerReferences, in their order (the controller is usually the only one). */
export function ownerRefs(object: KubernetesObject): KindName[] {
  const refs = field(field(object.object, 'metadata'), 'ownerReferences');
  if (!Array.isArray(refs)) return [];
  return refs.flatMap((ref) => {
    const kind = text(field(ref, 'kind'));
    const name = text(field(ref, 'name'));
    return kind && name ? [{ kind, name }] : [];
  });
}

/**
 * A Service's `spec.selector` as label → value; undefined when it has none or an empty one. Callers must treat
 * undefined as "selects no pod" (Kubernetes does: such a Service's Endpoints are managed by hand), never as an empty
 * label selector, which would match every pod.
 */
export function serviceSelector(service: KubernetesObject): Record<string, string> | undefined {
  const selector = field(field(service.object, 'spec'), 'selector');
  if (selector === null || typeof selector !== 'object' || Array.isArray(selector)) return undefined;
  const pairs = Object.entries(selector).filter((e): e is [string, string] => typeof e[1] === 'string');
  return pairs.length > 0 ? Object.fromEntries(pairs) : undefined;
}

/** The selector as ListObjects' `labelSelector` reads it: `app=web,tier=front`. */
export function selectorText(selector: Record<string, string>): string {
  return Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** Whether labels satisfy a Service selector: every label of the selector present with the same value. */
export function selectorMatches(selector: Record<string, string>, labels: Readonly<Record<string, string>>): boolean {
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

/**
 * The names of the Services an Ingress sends traffic to: `spec.defaultBackend` and every rule's paths
 * (networking.k8s.io/v1 `backend.service.name`, and the older `backend.serviceName`), each name once, in order.
 */
export function ingressServiceNames(ingress: KubernetesObject): string[] {
  const spec = field(ingress.object, 'spec');
  const backends: (JsonValue | undefined)[] = [field(spec, 'defaultBackend'), field(spec, 'backend')];
  const rules = field(spec, 'rules');
  for (const rule of Array.isArray(rules) ? rules : []) {
    const paths = field(field(rule, 'http'), 'paths');
    for (const path of Array.isArray(paths) ? paths : []) backends.push(field(path, 'backend'));
  }
  const names = backends.flatMap((b) => {
    const name = text(field(field(b, 'service'), 'name')) ?? text(field(b, 'serviceName'));
    return name ? [name] : [];
  });
  return [...new Set(names)];
}

/** The workload a HorizontalPodAutoscaler scales (`spec.scaleTargetRef`); undefined when it names none. */
export function scaleTarget(hpa: KubernetesObject): KindName | undefined {
  const ref = field(field(hpa.object, 'spec'), 'scaleTargetRef');
  const kind = text(field(ref, 'kind'));
  const name = text(field(ref, 'name'));
  return kind && name ? { kind, name } : undefined;
}
