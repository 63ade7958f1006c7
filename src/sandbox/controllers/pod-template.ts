/**
 * Pod templates as the workload controllers use them: comparing and hashing a template without the serialised
 * defaults Go clients add, and making a pod from one (labels and annotations inherited — which is how the sandbox's
 * pod controls on a template reach the pods), and creating it within the store's pod capacity.
 */
import { ApiError } from '../errors.js';
import type { KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import type { EventRecorder } from './event-recorder.js';
import { ownerRefTo, templateHash } from './owners.js';

/** Pods one reconcile of a controller creates at most (kube-controller-manager's burstReplicas): the rest come later. */
export const BURST_PODS = 500;

/** Drops nulls, empty maps and empty lists: how Go clients serialise defaults must not look like a new template. */
export function prune(value: unknown): unknown {
  if (Array.isArray(value)) {
    const items = value.map(prune).filter((v) => v !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const p = prune(v);
      if (p !== undefined) out[k] = p;
    }
    return Object.keys(out).length > 0 ? out : undefined;
  }
  return value === null ? undefined : value;
}

/** The pod template of a workload's spec (an empty object when missing). */
export function templateOf(obj: KubeObject): Record<string, unknown> {
  const spec = isPlainObject(obj.spec) ? obj.spec : {};
  return isPlainObject(spec.template) ? spec.template : {};
}

/** A hash of a template after pruning; stable across serialisations of the same template. */
export function prunedTemplateHash(template: unknown): string {
  return templateHash(prune(template) ?? {});
}

/**
 * A new pod body owned (as controller) by `owner`, from `template`, with `extraLabels` added. Callers create it in
 * the store; the kubelet takes it from Pending.
 */
export function podFromTemplate(
  owner: KubeObject,
  template: Record<string, unknown>,
  name: string,
  extraLabels: Record<string, string> = {},
  specExtra: Record<string, unknown> = {},
): Record<string, unknown> {
  const meta = isPlainObject(template.metadata) ? template.metadata : {};
  const spec = isPlainObject(template.spec) ? cloneJson(template.spec) : {};
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: owner.metadata.namespace,
      labels: { ...(isPlainObject(meta.labels) ? cloneJson(meta.labels) : {}), ...extraLabels },
      ...(isPlainObject(meta.annotations) ? { annotations: cloneJson(meta.annotations) } : {}),
      ownerReferences: [ownerRefTo(owner)],
    },
    spec: { ...spec, ...specExtra },
    status: { phase: 'Pending', qosClass: 'BestEffort' },
  };
}

/**
 * Creates `pod` for `owner`, or records a FailedCreate Warning on the owner and returns undefined when the store
 * refuses it with 403 (the pod capacity, a namespace being deleted): the caller must then stop creating pods for this
 * reconcile instead of retrying in a loop. Other errors are thrown (the runner retries them).
 */
export function createPodFor(
  store: ObjectStore,
  pods: KindInfo,
  owner: KubeObject,
  pod: Record<string, unknown>,
  events: EventRecorder,
  component: string,
): KubeObject | undefined {
  try {
    return store.create(pods, pod);
  } catch (err) {
    if (!(err instanceof ApiError) || err.code !== 403) throw err;
    events.record(owner, 'Warning', 'FailedCreate', `Error creating: ${err.message}`, component);
    return undefined;
  }
}

/** True when `owner` (by uid) is the controller of `pod` and the pod is not being deleted. */
export function isControlledBy(pod: KubeObject, owner: KubeObject): boolean {
  return (
    !pod.metadata.deletionTimestamp &&
    !!pod.metadata.ownerReferences?.some((r) => r && r.controller === true && r.uid === owner.metadata.uid)
  );
}

/** True for a pod whose containers have exited (Succeeded or Failed). */
export function podFinished(pod: KubeObject): boolean {
  const phase = isPlainObject(pod.status) ? pod.status.phase : undefined;
  return phase === 'Succeeded' || phase === 'Failed';
}
