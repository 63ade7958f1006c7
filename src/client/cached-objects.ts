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

/**
 * The cached objects matching `query` (the full Kubernetes objects, in account/kind/namespace/name order). Rejects
 * with the gateway's ConnectError (NOT_FOUND for a name not in the cache, an unknown account or kind).
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
  return out;
}
