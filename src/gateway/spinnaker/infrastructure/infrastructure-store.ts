/**
 * The cache reads behind Deck's infrastructure views: empty lists answered without a query, the kept shapes (a pod's
 * instance summary, a server group's summary) turned back into objects. The statements themselves are the cache's
 * (src/gateway/cache/infrastructure-queries.ts: the `objects` table's owner), index-bounded there.
 * Callers pass the accounts the caller may read; an empty list reads nothing.
 */
import type { Database } from '../../../db/database.js';
import { infrastructureQueries, type ObjectShape } from '../../cache/infrastructure-queries.js';
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
