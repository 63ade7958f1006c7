/**
 * The Deployment controller: one ReplicaSet per distinct pod template (named `<deployment>-<pod-template-hash>`),
 * revisions in the `deployment.kubernetes.io/revision` annotation, the current template's ReplicaSet scaled to
 * spec.replicas and every older one to 0, and a status that `kubectl rollout status` understands. A template that
 * matches an older ReplicaSet (rollout undo) reuses it and gives it the next revision. Paused deployments are left
 * alone. Rollouts are immediate rather than surge-limited: the sandbox shows the states, not the pacing.
 */
import { jsonEqual } from '../json-equal.js';
import type { KindInfo } from '../kinds.js';
import type { ObjectStore } from '../store.js';
import { nowTimestamp } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import { controllerRef, ownerRefTo, templateHash } from './owners.js';
import { nsKey, splitNsKey, type Controller } from './runner.js';

const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';

function revisionOf(rs: KubeObject): number {
  return Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
}

/** Drops nulls, empty maps and empty lists: how Go clients serialise defaults must not look like a new template. */
function prune(value: unknown): unknown {
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

/** The template as compared and hashed: without the pod-template-hash label and without empty values. */
function withoutHash(template: unknown): unknown {
  if (!isPlainObject(template)) return template;
  const copy = cloneJson(template);
  const meta = isPlainObject(copy.metadata) ? copy.metadata : undefined;
  if (meta && isPlainObject(meta.labels)) delete meta.labels[HASH_LABEL];
  return prune(copy) ?? {};
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/** Creates the controller. */
export function createDeploymentController(store: ObjectStore): Controller {
  const deployments = store.registry.byKindKey('apps/Deployment')!;
  const replicaSets = store.registry.byKindKey('apps/ReplicaSet')!;

  function ownedReplicaSets(d: KubeObject): KubeObject[] {
    return store
      .scan(replicaSets, { namespace: d.metadata.namespace })
      .items.filter((rs) => controllerRef(rs)?.uid === d.metadata.uid);
  }

  function createReplicaSet(d: KubeObject, template: Record<string, unknown>, revision: number): KubeObject {
    const hash = templateHash(withoutHash(template));
    const spec = d.spec as Record<string, unknown>;
    const selector = cloneJson(isPlainObject(spec.selector) ? spec.selector : {});
    selector.matchLabels = { ...(isPlainObject(selector.matchLabels) ? selector.matchLabels : {}), [HASH_LABEL]: hash };
    const podTemplate = cloneJson(template);
    const podMeta = isPlainObject(podTemplate.metadata) ? podTemplate.metadata : (podTemplate.metadata = {});
    podMeta.labels = { ...(isPlainObject(podMeta.labels) ? podMeta.labels : {}), [HASH_LABEL]: hash };
    const base = `${d.metadata.name}-${hash}`;
    const body = {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: {
        name: base,
        namespace: d.metadata.namespace,
        labels: podMeta.labels,
        annotations: { [REVISION]: String(revision), 'deployment.kubernetes.io/desired-replicas': String(num(spec.replicas ?? 1)) },
        ownerReferences: [ownerRefTo(d)],
      },
      spec: { replicas: 0, selector, template: podTemplate },
    };
    if (store.peek(replicaSets, d.metadata.namespace, base)) body.metadata.name = `${base}-${revision}`;
    return store.create(replicaSets, body);
  }

  function reconcile(key: string): void {
    const { namespace, name } = splitNsKey(key);
    const d = store.peek(deployments, namespace, name);
    if (!d || d.metadata.deletionTimestamp || !isPlainObject(d.spec)) return;
    const spec = d.spec;
    const template = isPlainObject(spec.template) ? spec.template : {};
    const desired = typeof spec.replicas === 'number' ? spec.replicas : 1;
    let owned = ownedReplicaSets(d);
    const maxRevision = owned.reduce((m, rs) => Math.max(m, revisionOf(rs)), 0);
    let current = owned.find((rs) => jsonEqual(withoutHash((rs.spec as Record<string, unknown>)?.template), withoutHash(template)));
    if (spec.paused === true) return;
    if (!current) {
      current = createReplicaSet(d, template, maxRevision + 1);
      owned = [...owned, current];
    } else if (revisionOf(current) !== maxRevision || owned.filter((rs) => revisionOf(rs) === maxRevision).length > 1) {
      current = store.update(replicaSets, {
        ...current,
        metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [REVISION]: String(maxRevision + 1) } },
      });
    }
    for (const rs of owned) {
      const rsSpec = rs.spec as Record<string, unknown>;
      const want = rs.metadata.uid === current.metadata.uid ? desired : 0;
      if (rsSpec.replicas !== want) {
        const fresh = store.peek(replicaSets, rs.metadata.namespace, rs.metadata.name!)!;
        store.update(replicaSets, {
          ...fresh,
          metadata: { ...fresh.metadata, annotations: { ...fresh.metadata.annotations, 'deployment.kubernetes.io/desired-replicas': String(desired) } },
          spec: { ...(fresh.spec as object), replicas: want },
        });
      }
    }
    const revision = revisionOf(store.peek(replicaSets, current.metadata.namespace, current.metadata.name!) ?? current);
    if (d.metadata.annotations?.[REVISION] !== String(revision)) {
      store.update(deployments, { ...d, metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [REVISION]: String(revision) } } });
    }
    writeStatus(namespace, name, current.metadata.uid!, desired);
  }

  function writeStatus(namespace: string | undefined, name: string, currentUid: string, desired: number): void {
    const d = store.peek(deployments, namespace, name);
    if (!d) return;
    const owned = ownedReplicaSets(d);
    let replicas = 0;
    let ready = 0;
    let available = 0;
    let updated = 0;
    for (const rs of owned) {
      const st = isPlainObject(rs.status) ? rs.status : {};
      replicas += num(st.replicas);
      ready += num(st.readyReplicas);
      available += num(st.availableReplicas);
      if (rs.metadata.uid === currentUid) updated = num(st.replicas);
    }
    const complete = updated === desired && replicas === desired && available === desired;
    const old = isPlainObject(d.status) ? d.status : {};
    const oldConditions = Array.isArray(old.conditions) ? old.conditions.filter(isPlainObject) : [];
    const condition = (type: string, ok: boolean, reason: string, message: string) => {
      const prev = oldConditions.find((c) => c.type === type);
      const status = ok ? 'True' : 'False';
      const same = prev && prev.status === status && prev.reason === reason;
      const now = nowTimestamp();
      return {
        type,
        status,
        reason,
        message,
        lastUpdateTime: same ? prev.lastUpdateTime : now,
        lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : now,
      };
    };
    const status: Record<string, unknown> = {
      observedGeneration: d.metadata.generation,
      replicas,
      updatedReplicas: updated,
      readyReplicas: ready,
      availableReplicas: available,
      conditions: [
        condition('Available', available >= desired, available >= desired ? 'MinimumReplicasAvailable' : 'MinimumReplicasUnavailable',
          available >= desired ? 'Deployment has minimum availability.' : 'Deployment does not have minimum availability.'),
        condition('Progressing', true, complete ? 'NewReplicaSetAvailable' : 'ReplicaSetUpdated',
          complete ? `ReplicaSet has successfully progressed.` : `ReplicaSet is progressing.`),
      ],
    };
    if (replicas - available > 0) status.unavailableReplicas = replicas - available;
    for (const k of ['readyReplicas', 'availableReplicas', 'updatedReplicas', 'replicas'] as const) if (status[k] === 0 && k !== 'replicas') delete status[k];
    const comparable = (s: Record<string, unknown>) => ({ ...s, conditions: (s.conditions as Record<string, unknown>[] | undefined)?.map((c) => ({ type: c.type, status: c.status, reason: c.reason })) });
    if (jsonEqual(comparable(old), comparable(status))) return;
    store.update(deployments, { ...d, status }, { subresource: 'status' });
  }

  return {
    name: 'deployment',
    *keysFor(event) {
      if (event.kindKey === 'apps/Deployment') {
        yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      } else if (event.kindKey === 'apps/ReplicaSet') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'Deployment') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}

/** The ReplicaSet kind, for callers that need it. */
export type { KindInfo };
