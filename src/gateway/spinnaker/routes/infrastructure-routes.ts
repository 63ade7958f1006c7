/**
 * Deck's infrastructure reads through Gate (§1a of the Deck contract; docs/spinnaker.md, "Infrastructure views"):
 * applications and their clusters, server groups, server-group managers and load balancers, one server group, one
 * instance, firewalls, search and server groups by id — all from the object cache (infrastructure/). Lists answer only
 * what the caller's `spinnaker` rules and `X-SPINNAKER-ACCOUNTS` — and, with Fiat, the user's account and application
 * READ — let it read (others are left out, `[]`/`{}` when nothing is left); a single object of an account it may not
 * read, or any route below an application it may not read, is a 403 (503 when Fiat cannot answer); an unknown
 * application or object a 404 in Spring's error shape.
 */
import type { Context, Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import type { AccountLookup } from '../account-lookup.js';
import { createAnswerCache, type AnswerCache } from '../infrastructure/answer-cache.js';
import type { InfrastructureReads } from '../infrastructure/infrastructure-reads.js';
import { SEARCH_TYPES, type SearchType } from '../infrastructure/infrastructure-search.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';

/** What the routes need. */
export interface InfrastructureRoutesDeps {
  accounts: AccountLookup;
  reads: InfrastructureReads;
  /** The one access check (rules, X-SPINNAKER-ACCOUNTS, Fiat when configured). */
  access: SpinnakerAccess;
  /** Keeps the application routes' answers while their accounts' objects do not change; none kept when absent. */
  answers?: AnswerCache;
}

const notFound = (message: string) => new HttpError(404, 'Not Found', message);
const MAX_PAGE_SIZE = 10_000;

/** A positive integer query parameter, or the fallback; 400 for anything else. */
function positive(c: Context<RestEnv>, key: string, fallback: number): number {
  const text = c.req.query(key);
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 1)
    throw new HttpError(400, 'Bad Request', `${key} must be a positive integer (got ${JSON.stringify(text)})`);
  return Math.min(value, MAX_PAGE_SIZE);
}

/** Adds the routes. */
export function addInfrastructureRoutes(app: Hono<RestEnv>, deps: InfrastructureRoutesDeps): void {
  const { reads, access } = deps;
  const answers = deps.answers ?? createAnswerCache({ versions: async () => new Map(), maxBytes: 0 });
  /** Answers `build()`'s value as JSON, through the answer cache under `key` for the accounts `readable` gave. */
  const cached = async (c: Context<RestEnv>, key: string, accounts: readonly string[], build: () => Promise<unknown>) =>
    c.body(await answers.answer(key, accounts, build), 200, { 'Content-Type': 'application/json' });
  /** The accounts the request may read (rules, header and, with Fiat, account READ), by name. */
  const readable = async (c: Context<RestEnv>) => access.filter(c, await deps.accounts.names(), { account: (name) => name });
  /** The account of a single-object route: 403 when the caller may not read it (503 when Fiat cannot say), 404 when unknown. */
  const account = async (c: Context<RestEnv>) => {
    const name = c.req.param('account') ?? '';
    await access.requireAccount(c, name, 'READ');
    if (!(await deps.accounts.exists(name))) throw notFound(`no account named ${JSON.stringify(name)}`);
    return name;
  };
  /** Routes below /applications/{app} need READ on the application too (Clouddriver's @PreAuthorize; Fiat only). */
  const application = async (c: Context<RestEnv>) => {
    const name = c.req.param('app') ?? '';
    await access.requireApplication(c, name, 'READ');
    return name;
  };
  /** Items whose moniker names an application the user may not read are left out (Clouddriver's @PostFilter). */
  const byApplication = <T extends Record<string, unknown>>(c: Context<RestEnv>, items: T[], appOf: (item: T) => unknown) =>
    access.filter(c, items, { application: (item) => (typeof appOf(item) === 'string' ? (appOf(item) as string) : undefined) });
  const monikerApp = (item: Record<string, unknown>) => (item.moniker as { app?: unknown } | undefined)?.app;

  app.get('/applications', async (c) => {
    const apps = await reads.applications(await readable(c), c.req.query('expand') !== 'false');
    return c.json(await byApplication(c, apps as Record<string, unknown>[], (a) => a.name));
  });
  app.get('/applications/:app', async (c) => {
    const name = await application(c);
    const accounts = await readable(c);
    const text = await answers.answer(`application\u0000${name}`, accounts, async () => (await reads.application(accounts, name)) ?? null);
    if (text === 'null') throw notFound(`Application ${name} not found`);
    return c.body(text, 200, { 'Content-Type': 'application/json' });
  });
  app.get('/applications/:app/clusters', async (c) => {
    const [accounts, name] = [await readable(c), await application(c)];
    return cached(c, `clusters\u0000${name}`, accounts, () => reads.clusterNames(accounts, name));
  });
  app.get('/applications/:app/serverGroups', async (c) => {
    const filter = c.req.query('clusters');
    const clusters = filter
      ? new Set(
          filter
            .split(',')
            .map((k) => k.trim())
            .filter(Boolean),
        )
      : undefined;
    const [accounts, name] = [await readable(c), await application(c)];
    const key = `serverGroups\u0000${name}\u0000${clusters ? [...clusters].sort().join(',') : '*'}`;
    return cached(c, key, accounts, () => reads.serverGroups(accounts, name, clusters));
  });
  app.get('/applications/:app/serverGroupManagers', async (c) => {
    const [accounts, name] = [await readable(c), await application(c)];
    return cached(c, `serverGroupManagers\u0000${name}`, accounts, () => reads.serverGroupManagers(accounts, name));
  });
  app.get('/applications/:app/loadBalancers', async (c) => {
    const [accounts, name] = [await readable(c), await application(c)];
    return cached(c, `loadBalancers\u0000${name}`, accounts, () => reads.loadBalancers(accounts, name));
  });
  app.get('/applications/:app/serverGroups/:account/:namespace/:name', async (c) => {
    await application(c);
    const acct = await account(c);
    const { namespace, name } = c.req.param();
    const view = await reads.serverGroup(acct, namespace, name);
    if (!view) throw notFound(`Server group ${name} not found in ${namespace} of account ${acct}`);
    return c.json(view);
  });
  app.get('/instances/:account/:namespace/:name', async (c) => {
    const acct = await account(c);
    const { namespace, name } = c.req.param();
    const view = await reads.instance(acct, namespace, name);
    if (!view) throw notFound(`Instance ${name} not found in ${namespace} of account ${acct}`);
    return c.json(view);
  });
  app.get('/securityGroups', async (c) => c.json(await reads.securityGroupIndex(await readable(c))));
  app.get('/securityGroups/:account/:cloudProvider/:namespace/:name', async (c) => {
    const acct = await account(c);
    const { namespace, name } = c.req.param();
    const view = await reads.securityGroup(acct, namespace, name);
    if (!view) throw notFound(`Security group ${name} not found in ${namespace} of account ${acct}`);
    return c.json(view);
  });
  app.get('/search', async (c) => {
    const type = c.req.query('type');
    const types = type
      ? type
          .split(',')
          .map((t) => t.trim())
          .filter((t): t is SearchType => (SEARCH_TYPES as readonly string[]).includes(t))
      : [];
    const request = { q: c.req.query('q') ?? '', types, pageSize: positive(c, 'pageSize', 10), page: positive(c, 'page', 1) };
    // Clouddriver asks only the providers of `platform`: another platform finds nothing here, in the merged shape its
    // SearchController answers when no provider (or several) answered. Other extra keys are filters, which its
    // Kubernetes provider ignores ("TODO: Use filters"), and so does Outpost.
    const platform = c.req.query('platform');
    if (platform && platform !== 'kubernetes')
      return c.json([
        { totalMatches: 0, pageNumber: request.page, pageSize: request.pageSize, platform: 'aws', query: request.q, results: [] },
      ]);
    // A type Outpost does not answer (projects) finds nothing here, as in a Clouddriver without that provider.
    const page = type && types.length === 0 ? { ...(await reads.search([], request)) } : await reads.search(await readable(c), request);
    const results = await byApplication(c, page.results as Record<string, unknown>[], (r) => r.application);
    return c.json([{ ...page, results }]);
  });
  app.get('/serverGroups', async (c) => {
    const ids = c.req.query('ids');
    const applications = c.req.query('applications');
    if (!!ids === !!applications)
      throw new HttpError(400, 'Bad Request', "Provide either 'applications' or 'ids' parameter (but not both)");
    const accounts = await readable(c);
    const list = (text: string) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    if (ids) return c.json(await byApplication(c, await reads.serverGroupsByIds(accounts, list(ids)), monikerApp));
    const out: Record<string, unknown>[] = [];
    for (const name of list(applications!)) out.push(...(await reads.serverGroups(accounts, name)));
    return c.json(await byApplication(c, out, monikerApp));
  });
}
