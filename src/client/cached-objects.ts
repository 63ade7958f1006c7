/**
 * `outpost get … --cached`: objects read from the gateway's cache (ObjectService) instead of the live cluster, so
 * nothing reaches the cluster or its agent. Kinds are the canonical Kind names the cache stores (`Deployment`); the
 * gateway answers NOT_FOUND for an unknown account or kind (with the kinds the account has).
 */
import type { JsonObject } from '@bufbuild/protobuf';
import { createReadClients, type GatewayTarget } from './gateway-transport.js';

/** What to read: one object by name, or a listing (namespace '' = all namespaces, or a cluster-scoped kind). */
export interface CachedQuery {
  account: string;
  kind: string;
  namespace: string;
  name?: string;
  labelSelector?: string;
}

/** Page size of the listing; every page is read. */
const PAGE_SIZE = 1000;

/** The API server's storage key of an object: `namespace/name` (`name` alone when cluster-scoped). */
function storageKey(o: JsonObject): Buffer {
  const m = (typeof o.metadata === 'object' && o.metadata !== null && !Array.isArray(o.metadata) ? o.metadata : {}) as JsonObject;
  const namespace = typeof m.namespace === 'string' && m.namespace !== '' ? `${m.namespace}/` : '';
  return Buffer.from(`${namespace}${typeof m.name === 'string' ? m.name : ''}`, 'utf8');
}

/**
 * Objects in the order the API server lists them, so `get --cached` prints what a live `get` (and kubectl) prints:
 * etcd keys them by `namespace/name` and ranges over the keys byte by byte, which puts namespace `demo-backend` before
 * `demo` ('-' sorts before '/'). The cache pages in its primary key's order (namespace, then name, in the
 * database's collation), which differs.
 */
export function inServerListOrder(objects: JsonObject[]): JsonObject[] {
  return objects
    .map((o) => ({ o, key: storageKey(o) }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ o }) => o);
}

/**
 * The cached objects matching `query` (the full Kubernetes objects; a listing in the API server's order, see
 * {@link inServerListOrder}). Rejects with the gateway's ConnectError (NOT_FOUND for a name not in the cache, an
 * unknown account or kind).
 */
export async function readCachedObjects(target: GatewayTarget, query: CachedQuery): Promise<JsonObject[]> {
  const { objects } = createReadClients(target);
  if (query.name) {
    const { object } = await objects.getObject(
      { account: query.account, kind: query.kind, namespace: query.namespace, name: query.name },
      { timeoutMs: 30_000 },
    );
    return object?.object ? [object.object] : [];
  }
  const out: JsonObject[] = [];
  let pageToken = '';
  do {
    const page = await objects.listObjects(
      {
        account: query.account,
        kind: query.kind,
        namespace: query.namespace,
        labelSelector: query.labelSelector ?? '',
        pageSize: PAGE_SIZE,
        pageToken,
      },
      { timeoutMs: 30_000 },
    );
    for (const o of page.objects) if (o.object) out.push(o.object);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return inServerListOrder(out);
}
