/**
 * The Deployment controller: one ReplicaSet per distinct pod template (named `<deployment>-<pod-template-hash>`),
 * revisions in the `deployment.kubernetes.io/revision` annotation, the current template's ReplicaSet scaled to
 * spec.replicas and every older one to 0, and a status that `kubectl rollout status` understands. A template that
 * matches an older ReplicaSet (rollout undo) reuses it and gives it the next revision. A paused Deployment rolls out
 * nothing new (its current ReplicaSet, if any, is still scaled). Rollouts are immediate rather than surge-limited: the
 * sandbox shows the states, not the pacing. The status (deployment-status.ts) follows pod readiness and the progress
 * deadline, which is re-checked by a timer. Scaling a ReplicaSet records a ScalingReplicaSet Event. A new ReplicaSet gets
 * the Deployment's annotations (but the deployment controller's own and kubectl's last-applied), as in Kubernetes.
 */
import { jsonEqual } from '../json-equal.js';
import type { ObjectStore } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import { deploymentStatus, type ProgressClocks } from './deployment-status.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef, ownerRefTo, templateHash } from './owners.js';
import { prune } from './pod-template.js';
import { nsKey, splitNsKey, type Controller, type ControllerRunner } from './runner.js';

const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';

function revisionOf(rs: KubeObject): number {
  return Number(rs.metadata.annotations?.[REVISION] ?? 0) || 0;
}

/** The template as compared and hashed: without the pod-template-hash label and without empty values. */
function withoutHash(template: unknown): unknown {
  if (!isPlainObject(template)) return template;
  const copy = cloneJson(template);
  const meta = isPlainObject(copy.metadata) ? copy.metadata : undefined;
  if (meta && isPlainObject(meta.labels)) delete meta.labels[HASH_LABEL];
  return prune(copy) ?? {};
}

/** Annotations Kubernetes' deployment controller does not copy onto its ReplicaSets (`skipCopyAnnotation`). */
const NOT_COPIED = new Set([
  'kubectl.kubernetes.io/last-applied-configuration',
  REVISION,
  'deployment.kubernetes.io/revision-history',
  'deployment.kubernetes.io/desired-replicas',
  'deployment.kubernetes.io/max-replicas',
  'deprecated.deployment.rollback.to',
]);

/** The Deployment's annotations a new ReplicaSet gets, as Kubernetes copies them (Spinnaker's monikers among them). */
function copiedAnnotations(d: KubeObject): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(d.metadata.annotations ?? {})) if (!NOT_COPIED.has(key)) out[key] = value;
  return out;
}

function num(value: unknown): number {
  return typeof value === 'number' ? value : 0;
}

/**
 * Creates the controller; `getRunner` schedules progress-deadline checks, `events` records ScalingReplicaSet. The
 * progress clocks live in this controller: one sandbox, one instance.
 */
export function createDeploymentController(store: ObjectStore, getRunner: () => ControllerRunner, events: EventRecorder): Controller {
  const deployments = store.registry.byKindKey('apps/Deployment')!;
  const replicaSets = store.registry.byKindKey('apps/ReplicaSet')!;
  const clocks: ProgressClocks = new Map();

  function ownedReplicaSets(d: KubeObject): KubeObject[] {
    return store.scan(replicaSets, { namespace: d.metadata.namespace }).items.filter((rs) => controllerRef(rs)?.uid === d.metadata.uid);
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
        annotations: {
          ...copiedAnnotations(d),
          [REVISION]: String(revision),
          'deployment.kubernetes.io/desired-replicas': String(num(spec.replicas ?? 1)),
        },
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
    const paused = spec.paused === true;
    if (!current && !paused) {
      current = createReplicaSet(d, template, maxRevision + 1);
      owned = [...owned, current];
    } else if (
      current &&
      !paused &&
      (revisionOf(current) !== maxRevision || owned.filter((rs) => revisionOf(rs) === maxRevision).length > 1)
    ) {
      current = store.update(replicaSets, {
        ...current,
        metadata: { ...current.metadata, annotations: { ...current.metadata.annotations, [REVISION]: String(maxRevision + 1) } },
      });
    }
    // paused: only the current template's ReplicaSet is scaled (kubectl scale still works); nothing new is rolled
    for (const rs of paused ? (current ? [current] : []) : owned) {
      const rsSpec = rs.spec as Record<string, unknown>;
      const want = rs.metadata.uid === current?.metadata.uid ? desired : 0;
      if (rsSpec.replicas !== want) {
        const fresh = store.peek(replicaSets, rs.metadata.namespace, rs.metadata.name!)!;
        store.update(replicaSets, {
          ...fresh,
          metadata: {
            ...fresh.metadata,
            annotations: { ...fresh.metadata.annotations, 'deployment.kubernetes.io/desired-replicas': String(desired) },
          },
          spec: { ...(fresh.spec as object), replicas: want },
        });
        const direction = want > num(rsSpec.replicas) ? 'up' : 'down';
        events.record(
          d,
          'Normal',
          'ScalingReplicaSet',
          `Scaled ${direction} replica set ${rs.metadata.name} to ${want}`,
          'deployment-controller',
        );
      }
    }
    if (current) {
      const revision = revisionOf(store.peek(replicaSets, current.metadata.namespace, current.metadata.name!) ?? current);
      if (d.metadata.annotations?.[REVISION] !== String(revision)) {
        store.update(deployments, {
          ...d,
          metadata: { ...d.metadata, annotations: { ...d.metadata.annotations, [REVISION]: String(revision) } },
        });
      }
    }
    writeStatus(key, current?.metadata.uid, desired);
  }

  function writeStatus(key: string, currentUid: string | undefined, desired: number): void {
    const { namespace, name } = splitNsKey(key);
    const d = store.peek(deployments, namespace, name);
    if (!d) return;
    const owned = ownedReplicaSets(d);
    const current = owned.find((rs) => rs.metadata.uid === currentUid);
    const { status, recheckInMs } = deploymentStatus({ deployment: d, replicaSets: owned, current, desired, clocks, nowMs: Date.now() });
    if (recheckInMs !== undefined) getRunner().enqueue('deployment', key, Math.max(1, recheckInMs + 1));
    const old = isPlainObject(d.status) ? d.status : {};
    const comparable = (s: Record<string, unknown>) => ({
      ...s,
      conditions: (s.conditions as Record<string, unknown>[] | undefined)?.map((c) => ({
        type: c.type,
        status: c.status,
        reason: c.reason,
        message: c.message,
        ...(c.reason === 'ReplicaSetUpdated' ? { lastUpdateTime: c.lastUpdateTime } : {}),
      })),
    });
    if (jsonEqual(comparable(old), comparable(status))) return;
    store.update(deployments, { ...d, status }, { subresource: 'status' });
  }

  return {
    name: 'deployment',
    *keysFor(event) {
      if (event.kindKey === 'apps/Deployment') {
        if (event.type === 'DELETED') clocks.delete(event.object.metadata.uid!);
        else yield nsKey(event.object.metadata.namespace, event.object.metadata.name!);
      } else if (event.kindKey === 'apps/ReplicaSet') {
        const ref = controllerRef(event.object);
        if (ref?.kind === 'Deployment') yield nsKey(event.object.metadata.namespace, ref.name);
      }
    },
    reconcile,
  };
}
