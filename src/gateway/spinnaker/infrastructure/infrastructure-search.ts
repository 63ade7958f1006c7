/**
 * Clouddriver's Kubernetes search (`GET /search`, §2.10 of the Deck contract), over the cache: the lower-cased query
 * is matched as `*q*` against each object's cache key (`kubernetes.v2:infrastructure:<kind>:<account>:<namespace>:<name>`)
 * and against the application and cluster the object is linked to (such hits carry `application` / `cluster`, which
 * Deck's Firewalls tab filters on). One result set, sorted by name, then paged by `pageSize` and `page` (from 1).
 */
import type { InfrastructureStore } from './infrastructure-store.js';
import {
  LOAD_BALANCER_KINDS,
  MANAGER_KINDS,
  SECURITY_GROUP_KINDS,
  SERVER_GROUP_KINDS,
  fullNameOf,
  isIgnored,
  kindNameOf,
  korkMonikerOf,
  textAt,
} from './object-facts.js';

/** The Spinnaker search types the Kubernetes provider answers. */
export const SEARCH_TYPES = [
  'applications',
  'serverGroups',
  'instances',
  'loadBalancers',
  'securityGroups',
  'serverGroupManagers',
] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** A parsed `/search` request. */
export interface SearchRequest {
  q: string;
  /** Every type when empty. */
  types: SearchType[];
  pageSize: number;
  page: number;
}

/** Clouddriver's `SearchResultSet`. */
export interface SearchPage {
  totalMatches: number;
  pageNumber: number;
  pageSize: number;
  platform: 'kubernetes';
  query: string;
  results: Record<string, unknown>[];
}

const KINDS: Record<Exclude<SearchType, 'applications'>, readonly string[]> = {
  serverGroups: SERVER_GROUP_KINDS,
  instances: ['Pod'],
  loadBalancers: LOAD_BALANCER_KINDS,
  securityGroups: SECURITY_GROUP_KINDS,
  serverGroupManagers: MANAGER_KINDS,
};

/** The field naming the hit in each type's results. */
const NAME_FIELD: Partial<Record<SearchType, string>> = {
  serverGroups: 'serverGroup',
  instances: 'instanceId',
  loadBalancers: 'loadBalancer',
  securityGroups: 'id',
  serverGroupManagers: 'serverGroupManager',
};

/** Runs a search in the accounts. */
export async function searchResults(store: InfrastructureStore, accounts: readonly string[], request: SearchRequest): Promise<SearchPage> {
  const q = request.q.toLowerCase();
  const types = request.types.length > 0 ? request.types : [...SEARCH_TYPES];
  const results: Record<string, unknown>[] = [];
  for (const type of types) {
    if (type === 'applications') {
      for (const app of await store.applicationNames(accounts)) {
        if (app.toLowerCase().includes(q)) results.push({ provider: 'kubernetes', type, group: type, name: app, application: app });
      }
      continue;
    }
    for (const row of await store.ofKinds(accounts, KINDS[type])) {
      if (isIgnored(row.object)) continue;
      const kind = kindNameOf(row.object);
      const namespace = textAt(row.object, 'metadata', 'namespace');
      const key = `kubernetes.v2:infrastructure:${kind}:${row.account}:${namespace}:${textAt(row.object, 'metadata', 'name')}`;
      // Pods are linked to no application or cluster.
      const moniker = type === 'instances' ? undefined : korkMonikerOf(row.object);
      const byApp = !!moniker?.app && moniker.app.toLowerCase().includes(q);
      const clustered = type === 'serverGroups' || type === 'serverGroupManagers';
      const byCluster = clustered && !!moniker?.app && !!moniker.cluster && moniker.cluster.toLowerCase().includes(q);
      if (!key.toLowerCase().includes(q) && !byApp && !byCluster) continue;
      const name = fullNameOf(row.object);
      results.push({
        provider: 'kubernetes',
        type,
        group: kind,
        kubernetesKind: kind,
        account: row.account,
        namespace,
        region: namespace,
        name,
        [NAME_FIELD[type]!]: name,
        ...(byApp || byCluster ? { application: moniker!.app } : {}),
        ...(byCluster ? { cluster: moniker!.cluster } : {}),
      });
    }
  }
  results.sort((a, b) => String(a.name).localeCompare(String(b.name)) || String(a.account).localeCompare(String(b.account)));
  const start = (request.page - 1) * request.pageSize;
  return {
    totalMatches: results.length,
    pageNumber: request.page,
    pageSize: request.pageSize,
    platform: 'kubernetes',
    query: request.q,
    results: results.slice(start, start + request.pageSize),
  };
}
