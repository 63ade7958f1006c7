/**
 * The revision history of a workload, as `kubectl rollout history|undo` read it. A Deployment's revisions are the
 * ReplicaSets it controls (ownerReference with controller=true and its uid), numbered by their
 * `deployment.kubernetes.io/revision` annotation; a StatefulSet's or DaemonSet's are the ControllerRevisions it
 * controls, numbered by their `revision` field, each holding the pod template in `data.spec.template`. Used by the
 * history and rollout-undo operations.
 */
import { isObj, parseObject, type Obj, type OperationContext, type RevisionEntry } from './operation-context.js';
import { badRequest, notFound } from './operation-error.js';
import type { ResourceType } from '../kube/discovery.js';
import { resourcePath } from './resource-resolver.js';

/** The annotation holding a ReplicaSet's (and its Deployment's) revision number. */
export const REVISION_ANNOTATION = 'deployment.kubernetes.io/revision';
/** The annotation `kubectl --record` / users set to say why. */
const CHANGE_CAUSE_ANNOTATION = 'kubernetes.io/change-cause';

/** The kinds with a rollout history. */
const HISTORY_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'];

/** A workload and its revisions, oldest first. */
export interface WorkloadHistory {
  workload: Obj;
  resource: ResourceType;
  namespace: string | undefined;
  /** Each revision with the object that holds it (a ReplicaSet or a ControllerRevision). */
  revisions: (RevisionEntry & { holder: Obj })[];
}

function selectorOf(workload: Obj): string {
  const spec = isObj(workload.spec) ? workload.spec : {};
  const selector = isObj(spec.selector) ? spec.selector : {};
  const labels = isObj(selector.matchLabels) ? selector.matchLabels : {};
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(',');
}

/** A ReplicaSet's revision number and template. */
function fromReplicaSet(rs: Obj): { revision: number; template: Obj | undefined } {
  const meta = rs.metadata as Obj;
  const annotations = isObj(meta.annotations) ? meta.annotations : {};
  const spec = isObj(rs.spec) ? rs.spec : {};
  return { revision: Number(annotations[REVISION_ANNOTATION] ?? 0) || 0, template: isObj(spec.template) ? spec.template : undefined };
}

/** A ControllerRevision's revision number and template (`data.spec.template` without its `$patch` directive). */
function fromControllerRevision(cr: Obj): { revision: number; template: Obj | undefined } {
  const data = isObj(cr.data) && isObj(cr.data.spec) && isObj(cr.data.spec.template) ? structuredClone(cr.data.spec.template) : undefined;
  if (data) delete data.$patch;
  return { revision: typeof cr.revision === 'number' ? cr.revision : Number(cr.revision ?? 0) || 0, template: data };
}

/** Reads a workload and its revisions. Throws 404 when the workload is missing, 400 for kinds without rollouts. */
export async function readHistory(
  ctx: OperationContext,
  spec: { apiVersion: string; kind: string; namespace: string; name: string },
): Promise<WorkloadHistory> {
  if (spec.name === '') throw badRequest('a name is required');
  const resource = await ctx.resolver.resolve(ctx.calls, spec.kind || 'Deployment', spec.apiVersion);
  if (!HISTORY_KINDS.includes(resource.kind))
    throw badRequest(`revision history is supported for Deployments, StatefulSets and DaemonSets, not ${resource.kind}`);
  const namespace = spec.namespace || 'default';
  const workload = parseObject((await ctx.calls.request({ method: 'GET', path: resourcePath(resource, namespace, spec.name) })).text);
  const uid = (workload.metadata as Obj).uid;
  const holderKind = resource.kind === 'Deployment' ? 'ReplicaSet' : 'ControllerRevision';
  const holders = await ctx.resolver.resolve(ctx.calls, holderKind, resource.apiVersion);
  const { body } = await ctx.calls.json<{ items?: Obj[] }>({
    method: 'GET',
    path: resourcePath(holders, namespace),
    query: { labelSelector: selectorOf(workload) || undefined },
  });
  const read = holderKind === 'ReplicaSet' ? fromReplicaSet : fromControllerRevision;
  const revisions = (body.items ?? [])
    .filter((holder) => {
      const refs = (holder.metadata as Obj).ownerReferences;
      return Array.isArray(refs) && refs.some((r) => isObj(r) && r.controller === true && r.uid === uid);
    })
    .map((holder) => {
      const meta = holder.metadata as Obj;
      const annotations = isObj(meta.annotations) ? meta.annotations : {};
      return {
        ...read(holder),
        name: meta.name as string,
        changeCause: typeof annotations[CHANGE_CAUSE_ANNOTATION] === 'string' ? (annotations[CHANGE_CAUSE_ANNOTATION] as string) : '',
        createdAt: typeof meta.creationTimestamp === 'string' ? meta.creationTimestamp : undefined,
        holder,
      };
    })
    .filter((r) => r.revision > 0)
    .sort((a, b) => a.revision - b.revision);
  return { workload, resource, namespace, revisions };
}

/** The revision a rollback goes to: `toRevision`, or the one before the current (highest). 404 when there is none. */
export function rollbackTarget(history: WorkloadHistory, toRevision: number): WorkloadHistory['revisions'][number] {
  const { revisions } = history;
  if (toRevision > 0) {
    const found = revisions.find((r) => r.revision === toRevision);
    if (!found) throw notFound(`unable to find specified revision ${toRevision} in history`);
    return found;
  }
  if (revisions.length < 2) throw notFound('no rollout history found: there is no previous revision to roll back to');
  return revisions[revisions.length - 2]!;
}
