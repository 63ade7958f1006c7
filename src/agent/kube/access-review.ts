/**
 * RBAC pre-check: asks the API server (SelfSubjectAccessReview) whether the account may list AND watch each watch
 * scope. Forbidden scopes are skipped and reported, never fatal. Requests run in parallel with a small limit.
 */
import type { KubeClient } from './kube-client.js';
import type { ResourceType } from './discovery.js';

/** A resource in one namespace, or cluster-wide (`namespace` ''). */
export interface WatchScope {
  type: ResourceType;
  namespace: string;
}

/** The verdict for one scope. */
export interface ScopeAccess {
  scope: WatchScope;
  allowed: boolean;
  reason: string;
}

interface AccessReviewAnswer {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

/** Runs `work` over `items` with at most `limit` in flight, preserving order of results. */
export async function mapWithConcurrency<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  });
  await Promise.all(runners);
  return results;
}

async function allowed(
  client: KubeClient,
  scope: WatchScope,
  verb: string,
  signal?: AbortSignal,
): Promise<{ allowed: boolean; reason: string }> {
  const answer = await client.postJson<AccessReviewAnswer>(
    '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
    {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectAccessReview',
      spec: {
        resourceAttributes: {
          group: scope.type.group,
          resource: scope.type.resource,
          verb,
          ...(scope.namespace !== '' ? { namespace: scope.namespace } : {}),
        },
      },
    },
    signal,
  );
  return { allowed: answer.status?.allowed === true, reason: answer.status?.reason ?? answer.status?.evaluationError ?? '' };
}

/** Checks list and watch on every scope (concurrency `limit`). A failed review counts as forbidden, with why. */
export async function reviewAccess(client: KubeClient, scopes: WatchScope[], limit: number, signal?: AbortSignal): Promise<ScopeAccess[]> {
  return mapWithConcurrency(scopes, limit, async (scope) => {
    const where = scope.namespace === '' ? 'cluster-wide' : `in namespace ${scope.namespace}`;
    try {
      const [list, watch] = await Promise.all([allowed(client, scope, 'list', signal), allowed(client, scope, 'watch', signal)]);
      if (list.allowed && watch.allowed) return { scope, allowed: true, reason: '' };
      const verbs = [!list.allowed && 'list', !watch.allowed && 'watch'].filter(Boolean).join(' and ');
      const detail = list.reason || watch.reason;
      return { scope, allowed: false, reason: `forbidden: cannot ${verbs} ${scope.type.resource} ${where}${detail ? ` (${detail})` : ''}` };
    } catch (err) {
      return { scope, allowed: false, reason: `access review failed ${where}: ${(err as Error).message}` };
    }
  });
}
