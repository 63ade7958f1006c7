/**
 * The object-cache reads of the Clouddriver API's `CacheReads` (src/gateway/spinnaker/cache-reads.ts): an account's
 * namespaces, the objects carrying a moniker, the scope of a custom kind. They live here, with the `objects` table's
 * other statements (docs/architecture.md, "One owner per table"); each is bounded by the primary key's account
 * (and kind) prefix. Callers must treat the answers as a choice of *which* object: its state is read live.
 */
import { and, eq, sql } from 'drizzle-orm';
import type { Db } from '../../db/database.js';
import { objects } from '../../db/schema.js';

/** Namespace names of the account: its Namespace objects and every namespace holding a cached object, sorted. */
export async function cachedNamespaces(db: Db, account: string): Promise<string[]> {
  const rows = await db
    .select({
      name: sql<string>`case when ${objects.kind} = 'Namespace' and ${objects.apiVersion} = 'v1' then ${objects.name} else ${objects.namespace} end`,
    })
    .from(objects)
    .where(eq(objects.account, account))
    .groupBy(sql`1`);
  return [...new Set(rows.map((r) => r.name).filter(Boolean))].sort();
}

/**
 * Objects of a kind in a namespace ('' for cluster-scoped) whose moniker application annotation is `app`; the caller
 * matches the rest of the moniker on the full object.
 */
export async function objectsByMonikerApp(
  db: Db,
  account: string,
  kind: string,
  namespace: string,
  app: string,
): Promise<Record<string, unknown>[]> {
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
}

/**
 * The cached CustomResourceDefinition of a group's kind, reduced to its `spec.scope` (null when it has none);
 * undefined when no such definition is cached.
 */
export async function cachedCustomKindScope(
  db: Db,
  account: string,
  group: string,
  kind: string,
): Promise<{ scope: string | null } | undefined> {
  const rows = await db
    .select({ scope: sql<string | null>`${objects.object} -> 'spec' ->> 'scope'` })
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
  return rows[0];
}
