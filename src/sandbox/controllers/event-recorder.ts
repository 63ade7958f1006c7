/**
 * Event recording for the controllers: v1 Events about an object (`kubectl describe`, `kubectl get events` and
 * Clouddriver's manifest `events` read them), aggregated like client-go's recorder (the same object, field, reason and
 * message bump `count` and `lastTimestamp` of the existing Event) and capped per namespace (the oldest recorded Events
 * are deleted) so a long-running sandbox does not grow without bound. The kubelet's Events name a container as
 * involvedObject.fieldPath and the node as source.host, so Deck and `kubectl describe` show them as a kubelet's.
 * Namespace deletion removes Events like any other namespaced object. Recording never throws: an Event that cannot be
 * written is dropped.
 */
import type { ObjectStore } from '../store.js';
import { nowTimestamp } from '../store.js';
import type { KubeObject } from '../types.js';

/** Normal or Warning, as in Kubernetes. */
type EventType = 'Normal' | 'Warning';

/** Where an Event comes from beyond its component, as the kubelet reports it. */
interface EventDetail {
  /** `source.host`: the node of a kubelet's Event. */
  host?: string;
  /** `involvedObject.fieldPath`: the part of the object, e.g. `spec.containers{web}` for a container's Event. */
  fieldPath?: string;
}

/** Writes Events; see {@link createEventRecorder}. */
export interface EventRecorder {
  /**
   * Records (or aggregates) an Event about `involved` from `component` (e.g. `deployment-controller`); `detail` adds
   * the node and the object's field (a container) where the kubelet names them.
   */
  record(involved: KubeObject, type: EventType, reason: string, message: string, component: string, detail?: EventDetail): void;
}

/** Options of {@link createEventRecorder}. */
export interface EventRecorderOptions {
  /** False records nothing (default true). */
  enabled?: boolean;
  /** Recorded Events kept per namespace; the oldest are deleted beyond it (default 500). */
  maxPerNamespace?: number;
}

/** A recorder that writes nothing. */
const NO_EVENTS: EventRecorder = { record() {} };

/**
 * Creates a recorder writing to `store`. Callers must respect that it writes synchronously, so it may only be called
 * where store writes are allowed (a controller's reconcile, not a store listener).
 */
export function createEventRecorder(store: ObjectStore, options: EventRecorderOptions = {}): EventRecorder {
  if (options.enabled === false) return NO_EVENTS;
  const events = store.registry.byKindKey('/Event')!;
  const max = Math.max(1, options.maxPerNamespace ?? 500);
  /** Per namespace, the Events this recorder created (name and aggregation key), oldest first. */
  const recorded = new Map<string, { name: string; key: string }[]>();
  /** Aggregation key → Event name. */
  const byKey = new Map<string, string>();
  let seq = 0;
  // a deleted namespace took its Events along: forget them (a listener only reads, so this is allowed here)
  store.subscribe((event) => {
    if (event.kindKey !== '/Namespace' || event.type !== 'DELETED') return;
    const namespace = event.object.metadata.name!;
    for (const { key } of recorded.get(namespace) ?? []) byKey.delete(key);
    recorded.delete(namespace);
  });

  function trim(namespace: string): void {
    const entries = recorded.get(namespace);
    if (!entries) return;
    while (entries.length > max) {
      const { name, key } = entries.shift()!;
      if (byKey.get(key) === name) byKey.delete(key);
      try {
        store.delete(events, namespace, name);
      } catch {
        // deleted by someone else (or the namespace is going away)
      }
    }
  }

  function record(
    involved: KubeObject,
    type: EventType,
    reason: string,
    message: string,
    component: string,
    detail: EventDetail = {},
  ): void {
    const namespace = involved.metadata.namespace ?? 'default';
    const key = `${namespace}\u0000${involved.metadata.uid}\u0000${detail.fieldPath ?? ''}\u0000${reason}\u0000${message}`;
    const now = nowTimestamp();
    try {
      const existingName = byKey.get(key);
      const existing = existingName ? store.peek(events, namespace, existingName) : undefined;
      if (existing) {
        store.update(events, { ...existing, count: (typeof existing.count === 'number' ? existing.count : 1) + 1, lastTimestamp: now });
        return;
      }
      const name = `${involved.metadata.name}.${Date.now().toString(16)}${(seq++ & 0xfff).toString(16).padStart(3, '0')}`;
      store.create(events, {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name, namespace },
        involvedObject: {
          apiVersion: involved.apiVersion,
          kind: involved.kind,
          name: involved.metadata.name,
          namespace: involved.metadata.namespace,
          uid: involved.metadata.uid,
          resourceVersion: involved.metadata.resourceVersion,
          ...(detail.fieldPath ? { fieldPath: detail.fieldPath } : {}),
        },
        reason,
        message,
        type,
        source: { component, ...(detail.host ? { host: detail.host } : {}) },
        firstTimestamp: now,
        lastTimestamp: now,
        count: 1,
        reportingComponent: component,
        reportingInstance: '',
      });
      byKey.set(key, name);
      let entries = recorded.get(namespace);
      if (!entries) recorded.set(namespace, (entries = []));
      entries.push({ name, key });
      if (entries.length > max) trim(namespace);
    } catch {
      // namespace gone or terminating: Events are best effort, as in Kubernetes
    }
  }

  return { record };
}
