import type { KubernetesObject } from '../../src/gen/outpost/api/v1/object_service_pb.js';

/** The kinds with rollouts (undo, restart; pause and resume for Deployments only), as the agent's rollout operation. */
const ROLLOUT_KINDS = ['Deployment', 'StatefulSet', 'DaemonSet'];

/** True for apps/v1 Deployments, StatefulSets and DaemonSets (not a custom kind of the same name in another group). */
export function hasRollouts(object: KubernetesObject): boolean {
  return ROLLOUT_KINDS.includes(object.kind) && object.apiVersion.startsWith('apps/');
}

/** The annotation numbering a Deployment's ReplicaSets (and the Deployment's current revision). */
const REVISION = 'deployment.kubernetes.io/revision';
/** The annotation saying why a revision was made. */
const CHANGE_CAUSE = 'kubernetes.io/change-cause';

/** One revision of a workload's history. */
export interface Revision {
  revision: number;
  /** The ReplicaSet or ControllerRevision holding it. */
  holder: string;
  changeCause: string;
  /** The container images of its pod template, in order. */
  images: string[];
  /** creationTimestamp of the holder, ms since the epoch (0 when unknown). */
  createdMs: number;
  current: boolean;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {});
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The kind holding a workload's revisions: ReplicaSets for Deployments, ControllerRevisions otherwise. */
export function holderKind(workloadKind: string): string {
  return workloadKind === 'Deployment' ? 'ReplicaSet' : 'ControllerRevision';
}

/** spec.selector.matchLabels as a label selector ("app=web"), the narrowing a ListObjects of holders can use. */
export function selectorOf(workload: KubernetesObject): string {
  const labels = obj(obj(obj(workload.object?.spec).selector).matchLabels);
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${str(v)}`)
    .join(',');
}

function templateOf(holder: Obj, kind: string): Obj {
  return kind === 'ReplicaSet' ? obj(obj(holder.spec).template) : obj(obj(obj(holder.data).spec).template);
}

/**
 * The revisions of `workload`, newest first, read from cached holders the way `kubectl rollout history` reads them
 * from the cluster: holders controlled by the workload (a controller ownerReference with its uid), numbered by the
 * revision annotation (ReplicaSet) or field (ControllerRevision); revision 0 is left out. The current one is the
 * Deployment's revision annotation, the StatefulSet's status.updateRevision, or else the highest.
 */
export function revisionsOf(workload: KubernetesObject, holders: readonly KubernetesObject[]): Revision[] {
  const w = workload.object ?? {};
  const list = holders
    .filter((h) => {
      const refs = obj(h.object?.metadata).ownerReferences;
      return Array.isArray(refs) && refs.some((r) => obj(r).controller === true && obj(r).uid === workload.uid);
    })
    .map((h): Revision => {
      const o = (h.object ?? {}) as Obj;
      const meta = obj(o.metadata);
      const annotations = obj(meta.annotations);
      const number = h.kind === 'ReplicaSet' ? Number(str(annotations[REVISION])) : Number(o.revision);
      const containers = obj(templateOf(o, h.kind).spec).containers;
      return {
        revision: Number.isInteger(number) ? number : 0,
        holder: h.name,
        changeCause: str(annotations[CHANGE_CAUSE]),
        images: (Array.isArray(containers) ? containers : []).map((c) => str(obj(c).image)),
        createdMs: Date.parse(str(meta.creationTimestamp)) || 0,
        current: false,
      };
    })
    .filter((r) => r.revision > 0)
    .sort((a, b) => b.revision - a.revision);
  const declared =
    workload.kind === 'Deployment'
      ? list.find((r) => String(r.revision) === str(obj(obj(w.metadata).annotations)[REVISION]))
      : list.find((r) => r.holder === str(obj(w.status).updateRevision));
  const current = declared ?? list[0];
  if (current) current.current = true;
  return list;
}
