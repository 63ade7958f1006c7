/**
 * Clouddriver's Kubernetes `OperationResult`, the result object of deploy, patch, delete, cleanup and run job:
 * `manifestNamesByNamespace` (namespace → "kind name" list; cluster-scoped objects under ""), the objects as the API
 * server returned them after the write, and the created and bound artifacts.
 */
import { fullResourceName } from '../../status/kind-names.js';

/** The result object. */
export interface KubernetesOperationResult {
  manifestNamesByNamespace: Record<string, string[]>;
  manifests: Record<string, unknown>[];
  createdArtifacts: Record<string, unknown>[];
  boundArtifacts: Record<string, unknown>[];
  [extra: string]: unknown;
}

/** A result listing `objects` by namespace (plus the given artifacts). */
export function resultOf(
  objects: Record<string, unknown>[],
  createdArtifacts: Record<string, unknown>[] = [],
  boundArtifacts: Record<string, unknown>[] = [],
): KubernetesOperationResult {
  const names: Record<string, string[]> = {};
  for (const object of objects) {
    const metadata = (object.metadata ?? {}) as { namespace?: string };
    (names[metadata.namespace ?? ''] ??= []).push(fullResourceName(object));
  }
  return { manifestNamesByNamespace: names, manifests: objects, createdArtifacts, boundArtifacts };
}

/** A result naming objects without their bodies (deletes). */
export function namesResult(namespace: string, names: string[]): KubernetesOperationResult {
  return { manifestNamesByNamespace: { [namespace]: names }, manifests: [], createdArtifacts: [], boundArtifacts: [] };
}
