/**
 * One application's clusters in one account, as Clouddriver's `ClusterController` answers them (route #21 of the Deck
 * contract; docs/spinnaker.md, "Infrastructure views"): the cluster list (`ClusterViewModel`: names of its server
 * groups and load balancers), one cluster (`KubernetesCluster`: its server groups in full, and the Services linked to
 * them, each listing only this cluster's server groups), and the cluster's dynamic target (target-server-group.ts).
 * A cluster exists when a server group or a Deployment carries its moniker, so a cluster of only a Deployment has no
 * server groups. Read from the cache like every infrastructure view.
 */
import type { ObjectShape } from '../../cache/infrastructure-queries.js';
import type { InfrastructureStore } from './infrastructure-store.js';
import { type AccountObject, type JoinedServerGroup, loadBalancerView, serverGroupDetails } from './infrastructure-views.js';
import { fullNameOf, korkMonikerOf, SERVER_GROUP_KINDS } from './object-facts.js';
import { joinServerGroups, visible } from './server-group-join.js';
import { chooseTarget, type TargetChoice, type TargetRequest } from './target-server-group.js';
import { trafficOf } from './traffic-links.js';

/** The cluster reads; `account` is one the caller may read (the routes check it). */
export interface ClusterReads {
  /** Every cluster of `app` in `account` as `ClusterViewModel`s, by name; empty when there is none. */
  clusters(account: string, app: string): Promise<Record<string, unknown>[]>;
  /** One cluster (`expand` false: without server groups and load balancers); undefined when it does not exist. */
  cluster(account: string, app: string, name: string, expand: boolean): Promise<Record<string, unknown> | undefined>;
  /** The server groups of one cluster, in full (undefined when the cluster does not exist). */
  serverGroups(account: string, app: string, name: string): Promise<Record<string, unknown>[] | undefined>;
  /** The dynamic target of one cluster; the request's `serverGroups` are read here. */
  target(account: string, app: string, request: Omit<TargetRequest, 'serverGroups'>, rawTarget: string): Promise<TargetChoice>;
}

/** A load balancer's identity within an account: namespace and full name. */
const lbKey = (lb: Record<string, unknown>) => `${(lb.metadata as { namespace?: string }).namespace ?? ''}\u0000${fullNameOf(lb)}`;
const byName = (a: Record<string, unknown>, b: Record<string, unknown>) => String(a.name).localeCompare(String(b.name));

/** The moniker of a cluster (kork `Moniker` with only app and cluster set). */
const clusterMoniker = (app: string, cluster: string) => ({ app, cluster, detail: null, stack: null, sequence: null });

/** Creates the reads over the store. */
export function createClusterReads(store: InfrastructureStore): ClusterReads {
  /** The joined server groups of `app` in `account`, grouped by cluster name. */
  const serverGroupsByCluster = async (account: string, app: string, pods: ObjectShape): Promise<Map<string, JoinedServerGroup[]>> => {
    const rows = visible(await store.linkedToApp([account], app, SERVER_GROUP_KINDS)).filter((r) => {
      const moniker = korkMonikerOf(r.object);
      return moniker.app === app && moniker.cluster !== null;
    });
    const out = new Map<string, JoinedServerGroup[]>();
    for (const sg of await joinServerGroups(store, rows, pods)) {
      const cluster = korkMonikerOf(sg.object).cluster!;
      out.set(cluster, [...(out.get(cluster) ?? []), sg]);
    }
    return out;
  };

  /** The Services linked to the server groups (selectors, `serviceName`), each once, by full name. */
  const loadBalancersOf = (account: string, serverGroups: readonly JoinedServerGroup[]): AccountObject[] => {
    const found = new Map<string, AccountObject>();
    for (const sg of serverGroups) {
      for (const lb of trafficOf(sg.object, sg.services).linked) {
        found.set(lbKey(lb), { account, object: lb });
      }
    }
    return [...found.values()].sort((a, b) => fullNameOf(a.object).localeCompare(fullNameOf(b.object)));
  };

  const exists = async (account: string, app: string, name: string) =>
    (await store.clusterKeys([account], app)).some((key) => key.cluster === name);

  return {
    async clusters(account, app) {
      const names = [...new Set((await store.clusterKeys([account], app)).map((k) => k.cluster))].sort();
      if (names.length === 0) return [];
      const groups = await serverGroupsByCluster(account, app, 'instance');
      return names.map((name) => {
        const serverGroups = groups.get(name) ?? [];
        return {
          name,
          account,
          moniker: clusterMoniker(app, name),
          loadBalancers: loadBalancersOf(account, serverGroups).map((lb) => fullNameOf(lb.object)),
          serverGroups: serverGroups.map((sg) => fullNameOf(sg.object)).sort(),
        };
      });
    },
    async cluster(account, app, name, expand) {
      if (!(await exists(account, app, name))) return undefined;
      const base = { name, moniker: clusterMoniker(app, name), type: 'kubernetes', accountName: account, application: app };
      if (!expand) return { ...base, serverGroups: [], loadBalancers: [] };
      const serverGroups = (await serverGroupsByCluster(account, app, 'full')).get(name) ?? [];
      const loadBalancers = loadBalancersOf(account, serverGroups).map((lb) =>
        loadBalancerView(
          lb,
          serverGroups.filter((sg) => trafficOf(sg.object, sg.services).linked.some((l) => lbKey(l) === lbKey(lb.object))),
        ),
      );
      return { ...base, serverGroups: serverGroups.map(serverGroupDetails).sort(byName), loadBalancers };
    },
    async serverGroups(account, app, name) {
      if (!(await exists(account, app, name))) return undefined;
      return ((await serverGroupsByCluster(account, app, 'full')).get(name) ?? []).map(serverGroupDetails).sort(byName);
    },
    async target(account, app, request, rawTarget) {
      const serverGroups = (await serverGroupsByCluster(account, app, 'full')).get(request.cluster) ?? [];
      return chooseTarget({ ...request, serverGroups }, rawTarget);
    },
  };
}
