/**
 * One application's clusters in one account (route #21 of the Deck contract; Clouddriver's `ClusterController`, which
 * Gate forwards for `/applications/{app}/clusters/{account}/{cluster}` and Orca calls for Check Preconditions and
 * dynamic targets): the cluster list, one cluster, one cluster of a cloud provider, its server groups, one of them,
 * and its dynamic target in a namespace. Every route needs READ on the application and on the account (403; 503 when
 * Fiat cannot answer), an unknown account or cluster is a 404 in Spring's error shape with Clouddriver's message, and
 * a cloud provider other than `kubernetes` is a 404 (Outpost has no other provider).
 */
import type { Context, Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import type { AccountLookup } from '../account-lookup.js';
import type { ClusterReads } from '../infrastructure/cluster-reads.js';
import { serverGroupDetails } from '../infrastructure/infrastructure-views.js';
import { parseTarget } from '../infrastructure/target-server-group.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';

/** What the routes need. */
export interface ClusterRoutesDeps {
  accounts: AccountLookup;
  clusters: ClusterReads;
  access: SpinnakerAccess;
}

const notFound = (message: string) => new HttpError(404, 'Not Found', message);
const BASE = '/applications/:app/clusters/:account';

/** Adds the routes. */
export function addClusterRoutes(app: Hono<RestEnv>, deps: ClusterRoutesDeps): void {
  const { clusters, access } = deps;
  /** The application and account of the route, both readable by the caller, the account known. */
  const admitted = async (c: Context<RestEnv>) => {
    const application = c.req.param('app') ?? '';
    const account = c.req.param('account') ?? '';
    await access.requireApplication(c, application, 'READ');
    await access.requireAccount(c, account, 'READ');
    if (!(await deps.accounts.exists(account))) throw notFound(`no account named ${JSON.stringify(account)}`);
    return { application, account };
  };
  /** The `expand` query parameter (default true, as Clouddriver's); 400 for anything but true/false. */
  const expandOf = (c: Context<RestEnv>) => {
    const text = c.req.query('expand');
    if (text === undefined || text === '' || text.toLowerCase() === 'true') return true;
    if (text.toLowerCase() === 'false') return false;
    throw new HttpError(400, 'Bad Request', `expand must be true or false (got ${JSON.stringify(text)})`);
  };
  /** The cloud provider of the route: only `kubernetes` has clusters here. */
  const requireKubernetes = (provider: string, what: string) => {
    if (provider !== 'kubernetes') throw notFound(`No cluster provider of type: ${provider} found that can handle ${what}`);
  };

  app.get(BASE, async (c) => {
    const { application, account } = await admitted(c);
    const list = await clusters.clusters(account, application);
    if (list.length === 0) throw notFound(`No clusters found (application: ${application}, account: ${account})`);
    return c.json(list);
  });
  app.get(`${BASE}/:name`, async (c) => {
    const { application, account } = await admitted(c);
    const name = c.req.param('name');
    const cluster = await clusters.cluster(account, application, name, expandOf(c));
    if (!cluster) throw notFound(`Cluster not found (application: ${application}, account: ${account}, name: ${name})`);
    return c.json([cluster]);
  });
  app.get(`${BASE}/:name/:type`, async (c) => {
    const { application, account } = await admitted(c);
    const { name, type } = c.req.param();
    requireKubernetes(type, `cluster: ${name} in application: ${application}, account: ${account}`);
    const cluster = await clusters.cluster(account, application, name, expandOf(c));
    if (!cluster) throw notFound(`No clusters found (application: ${application}, account: ${account}, type: ${type})`);
    return c.json(cluster);
  });
  app.get(`${BASE}/:name/:type/serverGroups`, async (c) => {
    const { application, account } = await admitted(c);
    const { name, type } = c.req.param();
    requireKubernetes(type, `cluster: ${name} in application: ${application}, account: ${account}`);
    const list = await clusters.serverGroups(account, application, name);
    if (!list) throw notFound(`No clusters found (application: ${application}, account: ${account}, type: ${type})`);
    const region = c.req.query('region');
    return c.json(region ? list.filter((sg) => sg.region === region) : list);
  });
  app.get(`${BASE}/:name/:type/serverGroups/:serverGroup`, async (c) => {
    const { application, account } = await admitted(c);
    const { name, type, serverGroup } = c.req.param();
    const region = c.req.query('region');
    const list = type === 'kubernetes' ? ((await clusters.serverGroups(account, application, name)) ?? []) : [];
    const found = list.filter((sg) => sg.name === serverGroup && (!region || sg.region === region));
    if (found.length === 0) throw notFound(`Server group not found (account: ${account}, name: ${serverGroup}, type: ${type})`);
    // Clouddriver answers a list without a region and the one server group with one.
    return c.json(region ? found[0] : found);
  });
  app.get(`${BASE}/:name/:cloudProvider/:scope/serverGroups/target/:target`, async (c) => {
    const { application, account } = await admitted(c);
    const { name, cloudProvider, scope, target: rawTarget } = c.req.param();
    const target = parseTarget(rawTarget);
    if (!target) throw notFound(`Target not found (target: ${rawTarget})`);
    const flag = (key: string, fallback: boolean) => {
      const text = c.req.query(key);
      return text === undefined ? fallback : text.toLowerCase() === 'true';
    };
    const choice =
      cloudProvider === 'kubernetes'
        ? await clusters.target(
            account,
            application,
            {
              scope,
              target,
              onlyEnabled: flag('onlyEnabled', false),
              validateOldest: flag('validateOldest', true),
              account,
              cluster: name,
              cloudProvider,
            },
            rawTarget,
          )
        : {
            notFound: `No server groups found (account: ${account}, location: ${scope}, cluster: ${name}, type: ${cloudProvider.toUpperCase()})`,
          };
    if ('notFound' in choice) throw notFound(choice.notFound);
    return c.json(serverGroupDetails(choice.serverGroup));
  });
}
