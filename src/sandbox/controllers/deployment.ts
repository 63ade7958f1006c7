/**
 * The Deployment controller: one ReplicaSet per distinct pod template (named `<deployment>-<pod-template-hash>`),
 * revisions in the `deployment.kubernetes.io/revision` annotation, and a rollout paced as Kubernetes paces it, so
 * that what Spinnaker Deck, the dashboard and kubectl show mid-rollout — some pods ready in both versions, old pods
 * kept when the new ones never become ready — is what a real cluster would show. Each reconcile takes one step of
 * the strategy (rolling.ts: RollingUpdate within maxSurge/maxUnavailable, resolved in rollout-bounds.ts, or
 * Recreate), and every scale records a ScalingReplicaSet Event. The pace comes from the pods: the ReplicaSet and
 * kubelet controllers create and start them, their readiness (the sandbox's pace options and pod controls) lets the
 * next step happen. A template that matches an older ReplicaSet (rollout undo) reuses it and gives it the next
 * revision. A paused Deployment rolls out nothing new (its current ReplicaSet, if any, is still scaled to
 * spec.replicas at once). The status (deployment-status.ts) follows pod readiness and the progress deadline, which is
 * re-checked by a timer. A new ReplicaSet gets the Deployment's annotations (but the deployment controller's own and
 * kubectl's last-applied) and minReadySeconds, as in Kubernetes.
 */
import { jsonEqual } from '../json-equal.js';
import type { ObjectStore } from '../store.js';
import { cloneJson, isPlainObject, type KubeObject } from '../types.js';
import { deploymentStatus, type ProgressClocks } from './deployment-status.js';
import type { EventRecorder } from './event-recorder.js';
import { controllerRef, ownerRefTo, templateHash } from './owners.js';
import { minReadySecondsOf, podAvailable } from './pod-availability.js';
import { podFinished, prune } from './pod-template.js';
import { planRecreate, planRollingUpdate, type ReplicaSetCounts } from './rolling.js';
import { isRollingUpdate, rolloutBounds } from './rollout-bounds.js';
import { nsKey, splitNsKey, type Controller, type ControllerRunner } from './runner.js';

const REVISION = 'deployment.kubernetes.io/revision';
const HASH_LABEL = 'pod-template-hash';
const COMPONENT = 'deployment-controller';

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
  const pods = store.registry.byKindKey('/Pod')!;
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
      spec: {
        replicas: 0,
        ...(minReadySecondsOf(d) > 0 ? { minReadySeconds: minReadySecondsOf(d) } : {}),
        selector,
        template: podTemplate,
      },
    };
    if (store.peek(replicaSets, d.metadata.namespace, base)) body.metadata.name = `${base}-${revision}`;
    return store.create(replicaSets, body);
  }

  /** Each ReplicaSet's counts from its pods (see rolling.ts for why pods, not the ReplicaSets' status). */
  function countsOf(namespace: string | undefined, owned: KubeObject[]): Map<string, ReplicaSetCounts> {
    const counts = new Map<string, ReplicaSetCounts>();
    const minReady = new Map<string, number>();
    for (const rs of owned) {
      const replicas = num((rs.spec as Record<string, unknown> | undefined)?.replicas);
      counts.set(rs.metadata.uid!, { uid: rs.metadata.uid!, replicas, pods: 0, available: 0, active: 0, revision: revisionOf(rs) });
      minReady.set(rs.metadata.uid!, minReadySecondsOf(rs));
    }
    const now = Date.now();
    for (const pod of store.scan(pods, { namespace }).items) {
      const uid = controllerRef(pod)?.uid;
      const c = uid === undefined ? undefined : counts.get(uid);
      if (!c) continue;
      if (!podFinished(pod)) c.active++;
      if (pod.metadata.deletionTimestamp) continue;
      c.pods++;
      if (podAvailable(pod, minReady.get(uid!) ?? 0, now)) c.available++;
    }
    return counts;
  }

  /** Scales one ReplicaSet and records the ScalingReplicaSet Event, as scaleReplicaSetAndRecordEvent does. */
  function scale(d: KubeObject, rs: KubeObject, replicas: number, desired: number, maxSurge: number): void {
    const fresh = store.peek(replicaSets, rs.metadata.namespace, rs.metadata.name!)!;
    const was = num((fresh.spec as Record<string, unknown>).replicas);
    store.update(replicaSets, {
      ...fresh,
      metadata: {
        ...fresh.metadata,
        annotations: {
          ...fresh.metadata.annotations,
          'deployment.kubernetes.io/desired-replicas': String(desired),
          'deployment.kubernetes.io/max-replicas': String(desired + maxSurge),
        },
      },
      spec: { ...(fresh.spec as object), replicas },
    });
    const direction = replicas > was ? 'up' : 'down';
    events.record(d, 'Normal', 'ScalingReplicaSet', `Scaled ${direction} replica set ${rs.metadata.name} to ${replicas}`, COMPONENT);
  }

  /** The current ReplicaSet with the revision after every other one and the Deployment's minReadySeconds. */
  function syncCurrent(d: KubeObject, current: KubeObject, owned: KubeObject[], maxRevision: number): KubeObject {
    const latest = revisionOf(current) === maxRevision && owned.filter((rs) => revisionOf(rs) === maxRevision).length === 1;
    const minReady = minReadySecondsOf(d);
    if (latest && minReadySecondsOf(current) === minReady) return current;
    const spec = { ...(current.spec as Record<string, unknown>) };
    if (minReady > 0) spec.minReadySeconds = minReady;
    else delete spec.minReadySeconds;
    const annotations = { ...current.metadata.annotations, ...(latest ? {} : { [REVISION]: String(maxRevision + 1) }) };
    return store.update(replicaSets, { ...current, metadata: { ...current.metadata, annotations }, spec });
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
    } else if (current && !paused) {
      const synced = syncCurrent(d, current, owned, maxRevision);
      owned = owned.map((rs) => (rs.metadata.uid === synced.metadata.uid ? synced : rs));
      current = synced;
    }
    const bounds = rolloutBounds(d, desired);
    if (paused) {
      // only the current template's ReplicaSet is scaled (kubectl scale still works); nothing new is rolled
      if (current && num((current.spec as Record<string, unknown>).replicas) !== desired)
        scale(d, current, desired, desired, bounds.maxSurge);
    } else if (current) {
      const counts = countsOf(namespace, owned);
      const currentUid = current.metadata.uid!;
      const input = {
        desired,
        ...bounds,
        current: counts.get(currentUid)!,
        old: [...counts.values()].filter((c) => c.uid !== currentUid),
      };
      const actions = isRollingUpdate(d) ? planRollingUpdate(input) : planRecreate(input);
      for (const action of actions) {
        const rs = owned.find((r) => r.metadata.uid === action.uid)!;
        scale(d, rs, action.replicas, desired, bounds.maxSurge);
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
