/**
 * Builders for scripted data messages (events, bookmarks, sync markers) as the page describes them, so the data cases
 * read like the rules they check: `batch(1, [added('conf-x', cm('a', '10'))])`.
 */
import { EventType, SyncPhase } from '../../src/gen/outpost/agent/v1/agent_pb.js';
import type { RequestMessage } from './agent-stream.js';

export { EventType, SyncPhase };

/** An Event as init data. */
export type EventInit = NonNullable<Extract<NonNullable<RequestMessage>, { case: 'events' }>['value']['events']>[number];

/** A ConfigMap as an API server returns it (list items and watch objects alike). */
export function cm(
  name: string,
  resourceVersion: string,
  opts: { namespace?: string; data?: Record<string, string>; labels?: Record<string, string> } = {},
) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: opts.namespace ?? 'default',
      uid: `uid-${name}`,
      resourceVersion,
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    data: opts.data ?? { v: resourceVersion },
  };
}

/** An event for an object, identity fields taken from it. */
export function eventFor(
  account: string,
  type: EventType,
  obj: { apiVersion: string; kind: string; metadata: Record<string, any> } & Record<string, unknown>,
  watchNamespace = '',
): EventInit {
  return {
    account,
    type,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    namespace: obj.metadata.namespace ?? '',
    name: obj.metadata.name,
    uid: obj.metadata.uid ?? '',
    resourceVersion: obj.metadata.resourceVersion,
    objectJson: new TextEncoder().encode(JSON.stringify(obj)),
    watchNamespace,
  };
}

/** ADDED for an object. */
export const added = (account: string, obj: Parameters<typeof eventFor>[2], watchNamespace = '') =>
  eventFor(account, EventType.ADDED, obj, watchNamespace);
/** MODIFIED for an object. */
export const modified = (account: string, obj: Parameters<typeof eventFor>[2], watchNamespace = '') =>
  eventFor(account, EventType.MODIFIED, obj, watchNamespace);
/** DELETED for an object. */
export const deleted = (account: string, obj: Parameters<typeof eventFor>[2], watchNamespace = '') =>
  eventFor(account, EventType.DELETED, obj, watchNamespace);

/** A BOOKMARK of the ConfigMap scope: only account, api_version, kind, watch_namespace and resource_version. */
export function bookmark(account: string, resourceVersion: string, watchNamespace = ''): EventInit {
  return { account, type: EventType.BOOKMARK, apiVersion: 'v1', kind: 'ConfigMap', watchNamespace, resourceVersion };
}

/** An EventBatch. */
export function batch(sequence: number, events: EventInit[]): RequestMessage {
  return { case: 'events', value: { sequence: BigInt(sequence), events } };
}

/** A SyncMarker of the ConfigMap scope. */
export function marker(
  sequence: number,
  account: string,
  phase: SyncPhase,
  resourceVersion = '',
  count = 0,
  watchNamespace = '',
): RequestMessage {
  return {
    case: 'sync',
    value: {
      sequence: BigInt(sequence),
      account,
      apiVersion: 'v1',
      kind: 'ConfigMap',
      watchNamespace,
      phase,
      resourceVersion,
      count: BigInt(count),
    },
  };
}
