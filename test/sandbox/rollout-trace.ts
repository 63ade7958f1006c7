/**
 * Records a Deployment's rollout as a client sees it: a list of its pods and ReplicaSets, then watches from that
 * list's resourceVersion, so every intermediate state arrives in commit order. The rollout tests fold the events into
 * one snapshot per event and check their invariants on every snapshot — never on how long anything took.
 */
import assert from 'node:assert/strict';
import type { KubeObject, Sandbox } from '../../src/sandbox/index.js';
import { call, openWatch, type WatchStream } from './api-client.js';

/** One pod as a snapshot holds it. */
interface PodView {
  name: string;
  /** Its ReplicaSet's pod-template-hash. */
  hash: string;
  phase: string | undefined;
  ready: boolean;
  containers: { started?: boolean; ready?: boolean }[];
}

/** The pods after one event (or the initial list). */
export type PodSnapshot = Map<string, PodView>;

/** spec.replicas of each ReplicaSet (by name) after one event. */
type ReplicaSetSnapshot = Map<string, number>;

/** A running trace; `close()` ends its watches. */
export interface RolloutTrace {
  /** The pod states: the initial list, then one per pod watch event. */
  podSnapshots(): PodSnapshot[];
  /** The ReplicaSets' spec.replicas: the initial list, then one per ReplicaSet watch event. */
  replicaSetSnapshots(): ReplicaSetSnapshot[];
  /** Resolves when the latest pod snapshot satisfies `predicate` (the timeout only bounds a hang). */
  waitForPods(what: string, predicate: (pods: PodSnapshot) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

function view(pod: KubeObject): PodView {
  const status = (pod.status ?? {}) as {
    phase?: string;
    conditions?: { type: string; status: string }[];
    containerStatuses?: PodView['containers'];
  };
  return {
    name: pod.metadata.name!,
    hash: pod.metadata.labels?.['pod-template-hash'] ?? '',
    phase: status.phase,
    ready: !!status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
    containers: (status.containerStatuses ?? []).map((c) => ({ started: c.started, ready: c.ready })),
  };
}

async function listAndWatch(sb: Sandbox, path: string, selector: string): Promise<{ items: KubeObject[]; watch: WatchStream }> {
  const list = await call(sb, 'GET', `${path}?labelSelector=${encodeURIComponent(selector)}`);
  assert.equal(list.status, 200, list.text);
  const rv = list.json.metadata.resourceVersion as string;
  const watch = await openWatch(sb, `${path}?watch=true&resourceVersion=${rv}&labelSelector=${encodeURIComponent(selector)}`);
  assert.equal(watch.status, 200);
  return { items: list.json.items as KubeObject[], watch };
}

/** Starts tracing the pods and ReplicaSets labelled `app=<app>` in `namespace`. */
export async function traceRollout(sb: Sandbox, namespace: string, app: string): Promise<RolloutTrace> {
  const selector = `app=${app}`;
  const pods = await listAndWatch(sb, `/api/v1/namespaces/${namespace}/pods`, selector);
  const replicaSets = await listAndWatch(sb, `/apis/apps/v1/namespaces/${namespace}/replicasets`, selector);

  const fold = <T>(initial: Map<string, T>, events: { type: string; object: KubeObject }[], value: (o: KubeObject) => T) => {
    const out = [new Map(initial)];
    for (const event of events) {
      if (event.type === 'BOOKMARK' || event.type === 'ERROR') continue;
      const next = new Map(out[out.length - 1]);
      if (event.type === 'DELETED') next.delete(event.object.metadata.name!);
      else next.set(event.object.metadata.name!, value(event.object));
      out.push(next);
    }
    return out;
  };
  const podSnapshots = () => fold(new Map(pods.items.map((p) => [p.metadata.name!, view(p)])), pods.watch.events, view);
  const replicas = (rs: KubeObject) => ((rs.spec ?? {}) as { replicas?: number }).replicas ?? 0;
  const replicaSetSnapshots = () =>
    fold(new Map(replicaSets.items.map((rs) => [rs.metadata.name!, replicas(rs)])), replicaSets.watch.events, replicas);
  return {
    podSnapshots,
    replicaSetSnapshots,
    async waitForPods(what, predicate, timeoutMs = 60_000) {
      try {
        await pods.watch.waitFor(() => {
          const all = podSnapshots();
          return predicate(all[all.length - 1]!);
        }, timeoutMs);
      } catch (err) {
        const last = podSnapshots().at(-1)!;
        throw new Error(`${what}: not reached; pods now ${JSON.stringify([...last.values()])}`, { cause: err });
      }
    },
    close() {
      pods.watch.close();
      replicaSets.watch.close();
    },
  };
}

/** Pods in a snapshot, in total and ready, per pod-template-hash. */
export function countPods(snapshot: PodSnapshot): { total: number; ready: number; byHash: Map<string, { pods: number; ready: number }> } {
  const byHash = new Map<string, { pods: number; ready: number }>();
  let ready = 0;
  for (const pod of snapshot.values()) {
    const entry = byHash.get(pod.hash) ?? { pods: 0, ready: 0 };
    entry.pods++;
    if (pod.ready) {
      entry.ready++;
      ready++;
    }
    byHash.set(pod.hash, entry);
  }
  return { total: snapshot.size, ready, byHash };
}

/** True when every pod of `snapshot` is ready and of template `hash`, and there are `count` of them. */
export function settledOn(snapshot: PodSnapshot, hash: string, count: number): boolean {
  return snapshot.size === count && [...snapshot.values()].every((p) => p.hash === hash && p.ready);
}
