/**
 * Compares the gateway's object cache to the sandbox cluster exactly: same keys, same resourceVersions, for the
 * kinds the agent reported it watches. Every convergence test (restarts, 410s, chaos) uses it.
 */
import { and, eq } from 'drizzle-orm';
import type { Database } from '../src/db/database.js';
import { accounts, objects } from '../src/db/schema.js';
import type { Sandbox } from '../src/sandbox/index.js';
import { eventually } from './eventually.js';

/** What differs between cache and cluster; all empty means equal. */
export interface CacheDiff {
  /** In the cluster, missing from the cache. */
  missing: string[];
  /** In the cache, gone from the cluster. */
  extra: string[];
  /** In both, with a different resourceVersion (`key cache=RV cluster=RV`). */
  stale: string[];
  /** Kinds compared (`apiVersion/Kind`). */
  kinds: string[];
  /** Objects compared on the cluster side. */
  clusterCount: number;
}

/** Options for {@link compareCacheToSandbox}. */
export interface CompareOptions {
  /** Kinds to compare as `{apiVersion, kind}`; default: the kinds the account row says the agent watches. */
  kinds?: { apiVersion: string; kind: string }[];
  /** Namespaces to restrict to (the agent's `namespaces` setting); default all. */
  namespaces?: string[];
}

function keyOf(apiVersion: string, kind: string, namespace: string, name: string): string {
  return `${apiVersion}/${kind}/${namespace}/${name}`;
}

/** Reads both sides once and returns the differences. */
export async function compareCacheToSandbox(
  database: Database,
  sandbox: Sandbox,
  account: string,
  options: CompareOptions = {},
): Promise<CacheDiff> {
  let kinds = options.kinds;
  if (!kinds) {
    const [row] = await database.db.select().from(accounts).where(eq(accounts.name, account));
    if (!row) throw new Error(`account ${account} is not registered in the cache`);
    kinds = row.kinds.map((k) => ({ apiVersion: k.apiVersion, kind: k.kind }));
  }
  const inScope = (ns: string) => !options.namespaces || options.namespaces.length === 0 || options.namespaces.includes(ns);
  const cluster = new Map<string, string>();
  for (const { apiVersion, kind } of kinds) {
    for (const obj of sandbox.store.list(apiVersion, kind)) {
      const ns = obj.metadata.namespace ?? '';
      if (ns !== '' && !inScope(ns)) continue;
      cluster.set(keyOf(apiVersion, kind, ns, obj.metadata.name ?? ''), String(obj.metadata.resourceVersion));
    }
  }
  const cache = new Map<string, string>();
  for (const { apiVersion, kind } of kinds) {
    const rows = await database.db
      .select({ namespace: objects.namespace, name: objects.name, rv: objects.resourceVersion })
      .from(objects)
      .where(and(eq(objects.account, account), eq(objects.apiVersion, apiVersion), eq(objects.kind, kind)));
    for (const r of rows) cache.set(keyOf(apiVersion, kind, r.namespace, r.name), r.rv);
  }
  const diff: CacheDiff = {
    missing: [],
    extra: [],
    stale: [],
    kinds: kinds.map((k) => `${k.apiVersion}/${k.kind}`),
    clusterCount: cluster.size,
  };
  for (const [key, rv] of cluster) {
    const cached = cache.get(key);
    if (cached === undefined) diff.missing.push(key);
    else if (cached !== rv) diff.stale.push(`${key} cache=${cached} cluster=${rv}`);
  }
  for (const key of cache.keys()) if (!cluster.has(key)) diff.extra.push(key);
  return diff;
}

/** True when the diff shows no difference. */
export function isConverged(diff: CacheDiff): boolean {
  return diff.missing.length === 0 && diff.extra.length === 0 && diff.stale.length === 0;
}

/**
 * Waits (./eventually.ts, every 100 ms) until the cache equals the sandbox and returns that diff; on timeout the error
 * holds the last diff (first 20 keys of each side), so a failing test says what did not converge.
 */
export async function waitForCacheToMatch(
  database: Database,
  sandbox: Sandbox,
  account: string,
  options: CompareOptions & { timeoutMs?: number } = {},
): Promise<CacheDiff> {
  const show = (xs: string[]) => `${xs.length} ${JSON.stringify(xs.slice(0, 20))}`;
  const converged = async () => {
    const diff = await compareCacheToSandbox(database, sandbox, account, options);
    if (diff.kinds.length === 0) throw new Error('no kind to compare yet');
    if (!isConverged(diff)) throw new Error(`missing ${show(diff.missing)}, extra ${show(diff.extra)}, stale ${show(diff.stale)}`);
    return diff;
  };
  return eventually(`the cache of ${account} converged on the cluster`, converged, { timeoutMs: options.timeoutMs, intervalMs: 100 });
}
