/**
 * What the Clouddriver API reads from the gateway's object cache (never written here): the namespaces of an account
 * (for Deck's namespace picker on `/credentials`) and the objects of a kind that carry a Spinnaker moniker (dynamic
 * target resolution). Cache reads only choose *which* object; its state is always read live through the agent.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Database } from '../../db/database.js';
import { objects } from '../../db/schema.js';

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

/** Creates the reads. */
export function createCacheReads(database: Database): CacheReads {
  const { db } = database;
  return {
    async namespacesOf(account) {
      const rows = await db
        .select({
          name: sql<string>`case when ${objects.kind} = 'Namespace' and ${objects.apiVersion} = 'v1' then ${objects.name} else ${objects.namespace} end`,
        })
        .from(objects)
        .where(eq(objects.account, account))
        .groupBy(sql`1`);
      return [...new Set(rows.map((r) => r.name).filter(Boolean))].sort();
    },
    async byMoniker(account, kind, namespace, app) {
      const rows = await db
        .select({ object: objects.object })
        .from(objects)
        .where(
          and(
            eq(objects.account, account),
            eq(objects.kind, kind),
            eq(objects.namespace, namespace),
            sql`${objects.object} -> 'metadata' -> 'annotations' ->> 'moniker.spinnaker.io/application' = ${app}`,
          ),
        );
      return rows.map((r) => r.object);
    },
    async customKindNamespaced(account, group, kind) {
      const rows = await db
        .select({ scope: sql<string>`${objects.object} -> 'spec' ->> 'scope'` })
        .from(objects)
        .where(
          and(
            eq(objects.account, account),
            eq(objects.kind, 'CustomResourceDefinition'),
            sql`${objects.object} -> 'spec' ->> 'group' = ${group}`,
            sql`${objects.object} -> 'spec' -> 'names' ->> 'kind' = ${kind}`,
          ),
        )
        .limit(1);
      return rows[0] ? rows[0].scope !== 'Cluster' : undefined;
    },
  };
}
