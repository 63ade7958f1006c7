/**
 * What every operation handler receives (the Kubernetes calls of this operation, the account's discovery cache and
 * the agent settings) and what it returns (an {@link Outcome}, turned into an OperationResult by the executor).
 */
import { scrubObject } from '../../shared/secret-scrub.js';
import type { KubeCalls } from './kube-calls.js';
import type { ResourceResolver } from './resource-resolver.js';

/** A JSON object. */
export type Obj = Record<string, unknown>;

/** Agent settings that change what operations do. */
export interface OperationSettings {
  /** `kubernetes.serverSideApply`: kinds (`Kind` or `Kind.group`) applied server-side by default. */
  serverSideApplyKinds: readonly string[];
  /** Field manager when an apply names none. */
  defaultFieldManager: string;
  /** Delay between checks while waiting for deleted objects to disappear. */
  deletePollMs: number;
}

/** The inputs of one handler. */
export interface OperationContext {
  calls: KubeCalls;
  resolver: ResourceResolver;
  settings: OperationSettings;
}

/** One revision of a rollout history (converted to the proto Revision by the executor). */
export interface RevisionEntry {
  revision: number;
  name: string;
  changeCause: string;
  createdAt?: string;
  template?: Obj;
}

/** What a handler did. Throwing (OperationError, KubeHttpError) is the other way to fail. */
export interface Outcome {
  /** Default true. */
  success?: boolean;
  statusCode: number;
  reason?: string;
  message?: string;
  /** Objects as returned by Kubernetes; the executor scrubs Secrets again before they leave. */
  objects?: Obj[];
  deleted?: string[];
  /** Apply: kubectl's word for what happened to each of `objects`, in its order (`created`, `unchanged`…). */
  actions?: string[];
  logs?: string;
  revisions?: RevisionEntry[];
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parses a Kubernetes JSON answer as an object, scrubbed of Secret material (for list items, pass the kind). */
export function parseObject(text: string, kind?: string): Obj {
  const value = JSON.parse(text) as unknown;
  if (!isObj(value)) throw new Error('expected a JSON object from Kubernetes');
  return scrubObject(value, kind);
}

/** `Kind/namespace/name`, or `Kind/name` for cluster-scoped objects (as results name deleted objects). */
export function objectRef(kind: string, namespace: string | undefined, name: string): string {
  return namespace ? `${kind}/${namespace}/${name}` : `${kind}/${name}`;
}

/** The namespace an object call uses: the given one, else `default` (as kubectl); none for cluster-scoped kinds. */
export function namespaceFor(namespaced: boolean, namespace: string | undefined): string | undefined {
  if (!namespaced) return undefined;
  return namespace && namespace !== '' ? namespace : 'default';
}

export { isObj };
