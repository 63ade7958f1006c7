/**
 * The object-cache statements behind Deck's infrastructure views (the Clouddriver API's `spinnaker/infrastructure/`
 * runs them through its InfrastructureStore). They live here, with the `objects` table's other statements, so a
 * column change reaches only the cache's owner files (docs/architecture.md, "One owner per table").
 * Every query is bounded by an index, never a scan of the cache: an application's objects and every application's
 * clusters through `objects_spinnaker_app_idx` (the generated moniker columns), an owner's objects through the btree
 * on the first owner's uid (`owner_uid`) and, for the few objects with several owners, a partial GIN index on
 * `owner_uids`, a kind's objects in an account (and namespaces) through the primary key (account, kind, api_version,
 * namespace, name). test/spinnaker/infrastructure-indexes.test.ts checks the plans.
 */
import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { unionAll } from 'drizzle-orm/pg-core';
import type { Database } from '../../db/database.js';
import { objects } from '../../db/schema.js';

const columns = { account: objects.account, object: objects.object };

/** Whole objects, or only what the lists read: of a pod its instance summary, of a server group its summary. */
export type ObjectShape = 'full' | 'instance' | 'summary';

/** The columns a shape reads: the object, or a pod's `pod_instance` (instance-shape.ts turns it back into a pod). */
const shaped = (shape: ObjectShape) => {
  if (shape === 'full') return columns;
  const column = shape === 'instance' ? objects.podInstance : objects.serverGroupSummary;
  // named `object` in the SQL too, so the statement's rows read alike in every shape (the benchmark runs it raw)
  return { account: objects.account, object: sql<Record<string, unknown> | null>`${column}`.mapWith(column).as('object') };
};

/**
 * The statements of the store, unexecuted (drizzle builders: await one to run it, `toSQL()` to read it), so that
 * test/spinnaker/infrastructure-indexes.test.ts can EXPLAIN exactly what the store runs. Lists must be non-empty.
 */
export function infrastructureQueries(db: Database['db']) {
  return {
    clusterKeys: (accounts: readonly string[], app?: string) =>
      db
        .selectDistinct({ app: objects.spinnakerApp, account: objects.account, cluster: objects.spinnakerCluster })
        .from(objects)
        .where(
          and(
            app === undefined ? isNotNull(objects.spinnakerApp) : eq(objects.spinnakerApp, app),
            inArray(objects.account, [...accounts]),
            isNotNull(objects.spinnakerCluster),
          ),
        ),
    applicationNames: (accounts: readonly string[]) =>
      db
        .selectDistinct({ app: objects.spinnakerApp })
        .from(objects)
        .where(and(isNotNull(objects.spinnakerApp), inArray(objects.account, [...accounts]))),
    linkedToApp: (accounts: readonly string[], app: string, kinds: readonly string[], shape: ObjectShape = 'full') =>
      db
        .select(shaped(shape))
        .from(objects)
        .where(and(eq(objects.spinnakerApp, app), inArray(objects.account, [...accounts]), inArray(objects.kind, [...kinds]))),
    // Two index paths, one statement: the first owner by btree (objects_owner_uid_idx), the other owners of the few
    // objects with several through the partial index over only those (objects_multi_owner_idx), never an object twice.
    ownedBy: (accounts: readonly string[], uids: readonly string[], kinds: readonly string[], shape: ObjectShape = 'full') => {
      // one array parameter, not a parameter per uid: a thousand owners would be three thousand parameters
      const uidList = sql`${sql.param(uids)}::text[]`;
      const scope = and(inArray(objects.account, [...accounts]), inArray(objects.kind, [...kinds]));
      return unionAll(
        db
          .select(shaped(shape))
          .from(objects)
          .where(and(sql`${objects.ownerUid} = any(${uidList})`, scope)),
        db
          .select(shaped(shape))
          .from(objects)
          .where(
            and(
              sql`jsonb_array_length(${objects.ownerUids}) > 1`,
              sql`${objects.ownerUids} ?| ${uidList}`,
              sql`not (coalesce(${objects.ownerUid}, '') = any(${uidList}))`,
              scope,
            ),
          ),
      );
    },
    ofKinds: (accounts: readonly string[], kinds: readonly string[], namespaces?: readonly string[]) =>
      db
        .select(columns)
        .from(objects)
        .where(
          and(
            inArray(objects.account, [...accounts]),
            inArray(objects.kind, [...kinds]),
            namespaces ? inArray(objects.namespace, [...namespaces]) : undefined,
          ),
        ),
    one: (account: string, kind: string, namespace: string, name: string) =>
      db
        .select(columns)
        .from(objects)
        .where(and(eq(objects.account, account), eq(objects.kind, kind), eq(objects.namespace, namespace), eq(objects.name, name)))
        .limit(1),
  };
}
