/**
 * The cache queries behind Deck's infrastructure views (read only: the `objects` table belongs to src/gateway/cache/).
 * Every query is bounded by an index, never a scan of the cache: an application's objects and every application's
 * clusters through `objects_spinnaker_app_idx` (the generated moniker columns), an owner's objects through the btree
 * on the first owner's uid (`owner_uid`) and, for the few objects with several owners, a partial GIN index on
 * `owner_uids`, a kind's objects in an account (and namespaces) through the primary key (account, kind, api_version,
 * namespace, name). test/spinnaker/infrastructure-indexes.test.ts checks the plans.
 * Callers pass the accounts the caller may read; an empty list reads nothing.
 */
import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import { unionAll } from 'drizzle-orm/pg-core';
import type { Database } from '../../../db/database.js';
import { objects } from '../../../db/schema.js';
import type { AccountObject } from './infrastructure-views.js';
import { podFromInstance, serverGroupFromSummary } from './instance-shape.js';
import { SERVER_GROUP_KINDS } from './object-facts.js';

/** One cluster key: (application, account, cluster). */
interface ClusterKey {
  app: string;
  account: string;
  cluster: string;
}

/** Read-only queries of the infrastructure views. */
export interface InfrastructureStore {
  /** Cluster keys of `app` (every application when undefined), in the accounts. */
  clusterKeys(accounts: readonly string[], app?: string): Promise<ClusterKey[]>;
  /** Names of the applications any object of the accounts is linked to, sorted. */
  applicationNames(accounts: readonly string[]): Promise<string[]>;
  /**
   * Objects of the kinds linked to `app` by moniker; `shape: 'summary'` (server-group kinds only) reads what the
   * summary lists use, from the `server_group_summary` column.
   */
  linkedToApp(accounts: readonly string[], app: string, kinds: readonly string[], shape?: ObjectShape): Promise<AccountObject[]>;
  /**
   * Objects of the kinds whose ownerReferences name one of the uids; `shape: 'instance'` (pods only) reads only what
   * the instance summaries use, from the `pod_instance` column: a fraction of a pod's bytes.
   */
  ownedBy(accounts: readonly string[], uids: readonly string[], kinds: readonly string[], shape?: ObjectShape): Promise<AccountObject[]>;
  /** Objects of the kinds in the accounts, in the namespaces when given. */
  ofKinds(accounts: readonly string[], kinds: readonly string[], namespaces?: readonly string[]): Promise<AccountObject[]>;
  /** One object by account, Kubernetes kind, namespace and name (any apiVersion); undefined when not cached. */
  one(account: string, kind: string, namespace: string, name: string): Promise<AccountObject | undefined>;
}

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

/** Creates the queries over the gateway database. */
export function createInfrastructureStore(database: Database): InfrastructureStore {
  const q = infrastructureQueries(database.db);
  return {
    async clusterKeys(accounts, app) {
      if (accounts.length === 0) return [];
      const rows = await q.clusterKeys(accounts, app);
      return rows.map((r) => ({ app: r.app!, account: r.account, cluster: r.cluster! }));
    },
    async applicationNames(accounts) {
      if (accounts.length === 0) return [];
      return (await q.applicationNames(accounts)).map((r) => r.app!).sort();
    },
    async linkedToApp(accounts, app, kinds, shape = 'full') {
      if (accounts.length === 0 || kinds.length === 0) return [];
      if (shape === 'full') return (await q.linkedToApp(accounts, app, kinds)) as AccountObject[];
      if (shape !== 'summary' || kinds.some((k) => !(SERVER_GROUP_KINDS as readonly string[]).includes(k)))
        throw new Error('the summary shape is kept for server groups only');
      const rows = await q.linkedToApp(accounts, app, kinds, shape);
      return rows.map((r) => ({ account: r.account, object: serverGroupFromSummary(r.object) }));
    },
    async ownedBy(accounts, uids, kinds, shape = 'full') {
      if (accounts.length === 0 || uids.length === 0 || kinds.length === 0) return [];
      if (shape === 'full') return (await q.ownedBy(accounts, uids, kinds)) as AccountObject[];
      if (shape !== 'instance' || kinds.some((k) => k !== 'Pod')) throw new Error('the instance shape is kept for pods only');
      const rows = await q.ownedBy(accounts, uids, kinds, shape);
      return rows.map((r) => ({ account: r.account, object: podFromInstance(r.object) }));
    },
    async ofKinds(accounts, kinds, namespaces) {
      if (accounts.length === 0 || kinds.length === 0 || namespaces?.length === 0) return [];
      return q.ofKinds(accounts, kinds, namespaces);
    },
    async one(account, kind, namespace, name) {
      return (await q.one(account, kind, namespace, name))[0];
    },
  };
}
