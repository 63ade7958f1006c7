/**
 * The revision history of a Deployment, as `kubectl rollout history|undo` read it: the ReplicaSets the Deployment
 * controls (ownerReference with controller=true and its uid), numbered by their `deployment.kubernetes.io/revision`
 * annotation. Used by the history and rollout-undo operations.
 */
import { isObj, parseObject, type Obj, type OperationContext, type RevisionEntry } from './operation-context.js';
import { badRequest, notFound } from './operation-error.js';
import { resourcePath, type ResolvedResource } from './resource-resolver.js';

/** The annotation holding a ReplicaSet's (and its Deployment's) revision number. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The annotation `kubectl --record` / users set to say why. */
export const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';

/** A Deployment and its revisions, oldest first. */
export interface DeploymentHistory {
  deployment: Obj;
  resource: ResolvedResource;
  namespace: string | undefined;
  revisions: (RevisionEntry & { replicaSet: Obj })[];
}

function selectorOf(deployment: Obj): string {
  const spec = isObj(deployment.spec) ? deployment.spec : {};
  const selector = isObj(spec.selector) ? spec.selector : {};
  const labels = isObj(selector.matchLabels) ? selector.matchLabels : {};
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}

/** Reads a Deployment and its ReplicaSets. Throws 404 when the Deployment is missing, 400 for other kinds. */
export async function readHistory(ctx: OperationContext, spec: { apiVersion: string; kind: string; namespace: string; name: string }): Promise<DeploymentHistory> {
  if (spec.name === '') throw badRequest('a name is required');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind || 'Deployment', spec.apiVersion);
  if (resource.kind !== 'Deployment') throw badRequest(`revision history is supported for Deployments, not ${resource.kind}`);
  const namespace = spec.namespace || 'default';
  const deployment = parseObject((await ctx.calls.request({ method: 'GET', path: resourcePath(resource, namespace, spec.name) })).text);
  const uid = (deployment.metadata as Obj).uid;
  const replicaSets = await ctx.resolver.resolve(ctx.calls, 'ReplicaSet', resource.apiVersion);
  const { body } = await ctx.calls.json<{ items?: Obj[] }>({
    method: 'GET',
    path: resourcePath(replicaSets, namespace),
    query: { labelSelector: selectorOf(deployment) || undefined },
  });
  const revisions = (body.items ?? [])
    .filter((rs) => {
      const refs = (rs.metadata as Obj).ownerReferences;
      return Array.isArray(refs) && refs.some((r) => isObj(r) && r.controller === true && r.uid === uid);
    })
    .map((rs) => {
      const meta = rs.metadata as Obj;
      const annotations = isObj(meta.annotations) ? meta.annotations : {};
      const rsSpec = isObj(rs.spec) ? rs.spec : {};
      return {
        revision: Number(annotations[REVISION_ANNOTATION] ?? 0) || 0,
        name: meta.name as string,
        changeCause: typeof annotations[CHANGE_CAUSE_ANNOTATION] === 'string' ? (annotations[CHANGE_CAUSE_ANNOTATION] as string) : '',
        createdAt: typeof meta.creationTimestamp === 'string' ? meta.creationTimestamp : undefined,
        template: isObj(rsSpec.template) ? rsSpec.template : undefined,
        replicaSet: rs,
      };
    })
    .filter((r) => r.revision > 0)
    .sort((a, b) => a.revision - b.revision);
  return { deployment, resource, namespace, revisions };
}

/** The revision a rollback goes to: `toRevision`, or the one before the current (highest). 404 when there is none. */
export function rollbackTarget(history: DeploymentHistory, toRevision: number): DeploymentHistory['revisions'][number] {
  const { revisions } = history;
  if (toRevision > 0) {
    const found = revisions.find((r) => r.revision === toRevision);
    if (!found) throw notFound(`unable to find specified revision ${toRevision} in history`);
    return found;
  }
  if (revisions.length < 2) throw notFound('no rollout history found: there is no previous revision to roll back to');
  return revisions[revisions.length - 2]!;
}

