/**
 * What the Clouddriver API reads from the gateway's object cache (never written here): the namespaces of an account
 * (for Deck's namespace picker on `/credentials`) and the objects of a kind that carry a Spinnaker moniker (dynamic
 * target resolution). Cache reads only choose *which* object; its state is always read live through the agent.
 */
import type { Database } from '../../db/database.js';
import { cachedCustomKindScope, cachedNamespaces, objectsByMonikerApp } from '../cache/spinnaker-object-reads.js';

/** Read-only cache queries. */
export interface CacheReads {
  /** Namespace names of the account: its Namespace objects and every namespace holding a cached object, sorted. */
  namespacesOf(account: string): Promise<string[]>;
  /**
   * Objects of a Kubernetes kind in a namespace ('' for cluster-scoped) whose moniker annotations name `app` and
   * `cluster` — matched again by the caller on the full object.
   */
  byMoniker(account: string, kind: string, namespace: string, app: string): Promise<Record<string, unknown>[]>;
  /** The scope of a custom resource kind from its cached CustomResourceDefinition; undefined when not cached. */
  customKindNamespaced(account: string, group: string, kind: string): Promise<boolean | undefined>;
}

/** Creates the reads (the statements are the cache's: src/gateway/cache/spinnaker-object-reads.ts). */
export function createCacheReads(database: Database): CacheReads {
  const { db } = database;
  return {
    namespacesOf: (account) => cachedNamespaces(db, account),
    byMoniker: (account, kind, namespace, app) => objectsByMonikerApp(db, account, kind, namespace, app),
    async customKindNamespaced(account, group, kind) {
      const crd = await cachedCustomKindScope(db, account, group, kind);
      return crd ? crd.scope !== 'Cluster' : undefined;
    },
  };
}
