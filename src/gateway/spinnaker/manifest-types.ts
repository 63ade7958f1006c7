/**
 * The shape the Clouddriver API handles Kubernetes objects in: plain JSON with `metadata` present.
 */

/** A Kubernetes object as JSON. */
export interface KubernetesObject {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [k: string]: unknown;
  };
  spec?: unknown;
  status?: unknown;
  [k: string]: unknown;
}

/** `value` as an object with metadata (an empty metadata when it has none). */
export function asKubernetesObject(value: unknown): KubernetesObject {
  const object = (value && typeof value === 'object' ? value : {}) as KubernetesObject;
  return object.metadata && typeof object.metadata === 'object' ? object : { ...object, metadata: {} };
}
