/**
 * Deck's infrastructure views of Outpost accounts (docs/spinnaker.md, "Infrastructure views"), answered from the
 * gateway's object cache — Deck polls them every few seconds, so never through the agents. Each read finds its
 * objects by index (infrastructure-store.ts), joins server groups with their pods (by owner uid) and with the Services
 * of their namespaces, and shapes them as Clouddriver does (infrastructure-views.ts). Objects annotated
 * `caching.spinnaker.io/ignore: "true"` are left out everywhere. Every method takes the accounts the caller may read
 * and reads nothing else.
 */
import { parseResourceName } from '../../status/kind-names.js';
import type { ObjectShape } from '../../cache/infrastructure-queries.js';
import type { InfrastructureStore } from './infrastructure-store.js';
import {
  type AccountObject,
  instanceDetails,
  loadBalancerView,
  managerView,
  securityGroupDetails,
  serverGroupDetails,
  serverGroupSummary,
} from './infrastructure-views.js';
import {
  LOAD_BALANCER_KINDS,
  MANAGER_KINDS,
  SECURITY_GROUP_KINDS,
  SERVER_GROUP_KINDS,
  fullNameOf,
  isIgnored,
  korkMonikerOf,
  spinnakerClassOf,
  textAt,
} from './object-facts.js';
import { serviceLinksTo } from './traffic-links.js';
import { joinServerGroups, visible } from './server-group-join.js';
import { searchResults, type SearchPage, type SearchRequest } from './infrastructure-search.js';

/** The reads, by route (§1a of the Deck contract). */
export interface InfrastructureReads {
  applications(accounts: readonly string[], expand: boolean): Promise<Record<string, unknown>[]>;
  /** Undefined when the application has no cluster in the accounts (route #2 answers 404). */
  application(accounts: readonly string[], app: string): Promise<Record<string, unknown> | undefined>;
  clusterNames(accounts: readonly string[], app: string): Promise<Record<string, string[]>>;
  /** `clusters`: `account:cluster` keys to keep, when given. */
  serverGroups(accounts: readonly string[], app: string, clusters?: ReadonlySet<string>): Promise<Record<string, unknown>[]>;
  serverGroupManagers(accounts: readonly string[], app: string): Promise<Record<string, unknown>[]>;
  loadBalancers(accounts: readonly string[], app: string): Promise<Record<string, unknown>[]>;
  /** `name` is `"<kind> <name>"`; undefined when it is not a server group in the cache. */
  serverGroup(account: string, namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  /** `name` is `"pod <name>"`. */
  instance(account: string, namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  securityGroupIndex(accounts: readonly string[]): Promise<Record<string, Record<string, Record<string, { id: string; name: string }[]>>>>;
  securityGroup(account: string, namespace: string, name: string): Promise<Record<string, unknown> | undefined>;
  /** Server-group summaries by `account:namespace:name` ids. */
  serverGroupsByIds(accounts: readonly string[], ids: readonly string[]): Promise<Record<string, unknown>[]>;
  search(accounts: readonly string[], request: SearchRequest): Promise<SearchPage>;
}

const byName = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.name).localeCompare(String(b.name));
const nsOf = (o: AccountObject) => textAt(o.object, 'metadata', 'namespace');

/** Creates the reads over the store. */
export function createInfrastructureReads(store: InfrastructureStore): InfrastructureReads {
  /** Summaries and load balancers read the instance fields of pods; details read them whole. */
  const join = (serverGroups: readonly AccountObject[], pods: ObjectShape = 'instance') => joinServerGroups(store, serverGroups, pods);

  /** The server groups of an application's clusters. */
  const clusteredServerGroups = async (accounts: readonly string[], app: string) =>
    visible(await store.linkedToApp(accounts, app, SERVER_GROUP_KINDS, 'summary')).filter((r) => {
      const moniker = korkMonikerOf(r.object);
      return moniker.app === app && moniker.cluster !== null;
    });

  /** One cached object of a class by `"<kind> <name>"`. */
  const oneOf = async (account: string, namespace: string, name: string, wanted: string) => {
    const parsed = parseResourceName(name);
    const kind = parsed?.kind.registered;
    if (!parsed || !kind) return undefined;
    const row = await store.one(account, kind.kind, namespace, parsed.name);
    return row && !isIgnored(row.object) && spinnakerClassOf(row.object) === wanted ? row : undefined;
  };

  const clusterNames: InfrastructureReads['clusterNames'] = async (accounts, app) => {
    const out: Record<string, string[]> = {};
    for (const key of await store.clusterKeys(accounts, app)) (out[key.account] ??= []).push(key.cluster);
    for (const list of Object.values(out)) list.sort();
    return out;
  };

  return {
    async applications(accounts, expand) {
      const apps = new Map<string, Record<string, string[]>>();
      for (const key of await store.clusterKeys(accounts)) {
        const clusters = apps.get(key.app) ?? {};
        (clusters[key.account] ??= []).push(key.cluster);
        apps.set(key.app, clusters);
      }
      return [...apps.keys()].sort().map((name) => {
        const clusters = apps.get(name)!;
        for (const list of Object.values(clusters)) list.sort();
        return { name, attributes: { name }, clusterNames: expand ? clusters : {} };
      });
    },
    async application(accounts, app) {
      const names = await clusterNames(accounts, app);
      if (Object.keys(names).length === 0) return undefined;
      const clusters: Record<string, unknown[]> = {};
      for (const [account, list] of Object.entries(names)) {
        clusters[account] = list.map((name) => ({ name, provider: 'kubernetes', loadBalancers: [], serverGroups: [] }));
      }
      return { name: app, attributes: { name: app, cloudProviders: 'kubernetes' }, clusters };
    },
    clusterNames,
    async serverGroups(accounts, app, clusters) {
      let rows = await clusteredServerGroups(accounts, app);
      if (clusters) rows = rows.filter((r) => clusters.has(`${r.account}:${korkMonikerOf(r.object).cluster}`));
      return (await join(rows)).map(serverGroupSummary).sort(byName);
    },
    async serverGroupManagers(accounts, app) {
      const managers = visible(await store.linkedToApp(accounts, app, MANAGER_KINDS));
      const uids = managers.map((m) => textAt(m.object, 'metadata', 'uid')).filter(Boolean);
      const owned = visible(await store.ownedBy([...new Set(managers.map((m) => m.account))], uids, SERVER_GROUP_KINDS));
      return managers
        .map((manager) => {
          const uid = textAt(manager.object, 'metadata', 'uid');
          const mine = owned.filter(
            (sg) =>
              sg.account === manager.account &&
              ((sg.object.metadata as { ownerReferences?: { uid?: string }[] }).ownerReferences ?? []).some((r) => r.uid === uid),
          );
          return managerView(
            manager,
            mine.map((sg) => sg.object),
          );
        })
        .sort(byName);
    },
    async loadBalancers(accounts, app) {
      const lbs = visible(await store.linkedToApp(accounts, app, LOAD_BALANCER_KINDS));
      const services = lbs.filter((lb) => textAt(lb.object, 'kind') === 'Service');
      const candidates = visible(
        await store.ofKinds([...new Set(services.map((s) => s.account))], ['ReplicaSet', 'StatefulSet'], [...new Set(services.map(nsOf))]),
      );
      const linked = candidates.filter((sg) =>
        services.some((s) => s.account === sg.account && nsOf(s) === nsOf(sg) && serviceLinksTo(s.object, sg.object)),
      );
      const joined = await join(linked);
      return lbs
        .map((lb) =>
          loadBalancerView(
            lb,
            joined
              .filter((sg) => sg.account === lb.account && nsOf(sg) === nsOf(lb) && serviceLinksTo(lb.object, sg.object))
              .sort((a, b) => fullNameOf(a.object).localeCompare(fullNameOf(b.object))),
          ),
        )
        .sort(byName);
    },
    async serverGroup(account, namespace, name) {
      const row = await oneOf(account, namespace, name, 'serverGroups');
      return row ? serverGroupDetails((await join([row], 'full'))[0]!) : undefined;
    },
    async instance(account, namespace, name) {
      const row = await oneOf(account, namespace, name, 'instances');
      return row ? instanceDetails(account, row.object) : undefined;
    },
    async securityGroupIndex(accounts) {
      const index: Record<string, Record<string, Record<string, { id: string; name: string }[]>>> = {};
      const rows = visible(await store.ofKinds(accounts, SECURITY_GROUP_KINDS)).sort((a, b) =>
        fullNameOf(a.object).localeCompare(fullNameOf(b.object)),
      );
      for (const row of rows) {
        const name = fullNameOf(row.object);
        ((index[row.account] ??= { kubernetes: {} }).kubernetes![nsOf(row)] ??= []).push({ id: name, name });
      }
      return index;
    },
    async securityGroup(account, namespace, name) {
      const row = await oneOf(account, namespace, name, 'securityGroups');
      return row ? securityGroupDetails(row) : undefined;
    },
    async serverGroupsByIds(accounts, ids) {
      const rows: AccountObject[] = [];
      for (const id of ids) {
        const [account = '', namespace = '', ...rest] = id.split(':');
        if (!accounts.includes(account)) continue;
        const row = await oneOf(account, namespace, rest.join(':'), 'serverGroups');
        if (row) rows.push(row);
      }
      return (await join(rows)).map(serverGroupSummary);
    },
    search: (accounts, request) => searchResults(store, accounts, request),
  };
}
