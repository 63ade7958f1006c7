/**
 * Manifest reads (Orca's WaitForManifestStable, Find Artifacts From Resource, red/black's old-version lookup):
 * `GET /manifests/{account}/{location}/{kind name}` (also `_` for cluster-scoped objects, and the short form without a
 * location) answers Clouddriver's manifest container — the object read live through the agent (never older than a
 * write Outpost made), its status by Clouddriver's model (status/manifest-status.ts), moniker, artifacts, events when
 * `includeEvents` is not false, and `warnings: []`. 404 for an unknown account, a name that is not "kind name", or a
 * missing object. Dynamic targets — `…/{kind}/cluster/{app}/{cluster}` (every version, oldest first) and
 * `…/dynamic/{oldest|newest|second_newest|largest|smallest}` — are chosen from the cache by moniker. With Fiat, as
 * Clouddriver's ManifestController: account READ before the read, and READ on the object's moniker application after
 * it (`@PostAuthorize`); the cluster routes, which Clouddriver leaves unchecked, need account and application READ.
 */
import type { Context, Hono } from 'hono';
import type { RestEnv } from '../../auth/rest-auth.js';
import { HttpError } from '../../http/errors.js';
import { manifestStatus } from '../../status/manifest-status.js';
import type { AccountLookup } from '../account-lookup.js';
import type { CacheReads } from '../cache-reads.js';
import { listArtifacts } from '../deploy/list-artifacts.js';
import type { KubeObject } from '../deploy/deploy-types.js';
import { groupOf, parseKind, parseResourceName, spinnakerKindOf } from '../../status/kind-names.js';
import type { LiveReads } from '../live-reads.js';
import { eventsFor } from '../manifest-events.js';
import { monikerOf } from '../moniker.js';
import type { SpinnakerAccess } from '../spinnaker-access.js';

/** What the routes need. */
export interface ManifestRoutesDeps {
  accounts: AccountLookup;
  /** Reads on behalf of a requester (requesterOf). */
  /** The reads of one request, as its caller (never stored: live-reads.ts). */
  reads(c: Context<RestEnv>): LiveReads;
  cache: CacheReads;
  access: SpinnakerAccess;
}

const notFound = (message: string) => new HttpError(404, 'Not Found', message);
const CRITERIA = new Set(['oldest', 'newest', 'second_newest', 'largest', 'smallest']);

/** Adds the routes. */
export function addManifestRoutes(app: Hono<RestEnv>, deps: ManifestRoutesDeps): void {
  const account = async (c: Context<RestEnv>) => {
    const name = c.req.param('account') ?? '';
    await deps.access.requireAccount(c, name, 'READ');
    if (!(await deps.accounts.exists(name))) throw notFound(`no account named ${JSON.stringify(name)}`);
    return name;
  };

  const container = async (c: Context<RestEnv>) => {
    const acct = await account(c);
    const location = c.req.param('location') ?? '_';
    const namespace = location === '_' ? '' : location;
    const text = c.req.param('name') ?? '';
    const parsed = parseResourceName(text);
    if (!parsed) throw notFound(`${JSON.stringify(text)} is not "<kind> <name>"`);
    const reads = deps.reads(c);
    const object = await reads.get(acct, parsed.kind.agentKind, namespace, parsed.name);
    if (!object)
      throw notFound(`${parsed.kind.spinnakerName} ${parsed.name} not found in ${namespace || 'the cluster'} of account ${acct}`);
    const moniker = monikerOf(object);
    await deps.access.requireApplication(c, moniker.app ?? '', 'READ');
    const includeEvents = c.req.query('includeEvents') !== 'false';
    const ns = String(object.metadata.namespace ?? '');
    const events =
      includeEvents && ns
        ? eventsFor(object, await reads.list(acct, 'Event', ns, { fieldSelector: `involvedObject.name=${parsed.name}` }))
        : [];
    return c.json({
      account: acct,
      name: `${spinnakerKindOf(String(object.apiVersion ?? ''), String(object.kind ?? ''))} ${object.metadata.name}`,
      location: ns,
      moniker: {
        app: moniker.app,
        cluster: moniker.cluster,
        ...(moniker.stack ? { stack: moniker.stack } : {}),
        ...(moniker.detail ? { detail: moniker.detail } : {}),
        ...(moniker.sequence !== undefined ? { sequence: moniker.sequence } : {}),
      },
      manifest: object,
      status: manifestStatus(object),
      artifacts: listArtifacts(object as KubeObject, acct),
      events,
      warnings: [],
      metrics: [],
    });
  };
  app.get('/manifests/:account/:location/:name', container);
  app.get('/manifests/:account/:name', container);

  /** The cached versions of a cluster, oldest first (by creation time, then name). */
  const cluster = async (c: Context<RestEnv>) => {
    const acct = await account(c);
    const location = c.req.param('location') ?? '_';
    const kindText = c.req.param('kind') ?? '';
    const kind = parseKind(kindText);
    if (!kind) throw notFound(`${JSON.stringify(kindText)} is not a kind`);
    const app = c.req.param('app') ?? '';
    await deps.access.requireApplication(c, app, 'READ');
    const clusterName = c.req.param('cluster') ?? '';
    const k8sKind = kind.registered?.kind ?? kind.agentKind.split('.')[0]!;
    const objects = (await deps.cache.byMoniker(acct, k8sKind, location === '_' ? '' : location, app)).filter(
      (o) => (!kind.customGroup || groupOf(String(o.apiVersion ?? '')) === kind.customGroup) && monikerOf(o).cluster === clusterName,
    ) as KubeObject[];
    const created = (o: KubeObject) => String(o.metadata.creationTimestamp ?? '');
    objects.sort((a, b) =>
      created(a) < created(b) ? -1 : created(a) > created(b) ? 1 : String(a.metadata.name) < String(b.metadata.name) ? -1 : 1,
    );
    return { objects, describe: `(account: ${acct}, location: ${location}, kind: ${kindText}, app: ${app}, cluster: ${clusterName})` };
  };
  const coordinates = (o: KubeObject) => ({
    kind: spinnakerKindOf(o.apiVersion, o.kind),
    namespace: o.metadata.namespace ?? '',
    name: o.metadata.name,
  });

  app.get('/manifests/:account/:location/:kind/cluster/:app/:cluster', async (c) => c.json((await cluster(c)).objects.map(coordinates)));
  app.get('/manifests/:account/:location/:kind/cluster/:app/:cluster/dynamic/:criteria', async (c) => {
    const criteria = c.req.param('criteria');
    if (!CRITERIA.has(criteria))
      throw new HttpError(400, 'Bad Request', `criteria must be one of ${[...CRITERIA].join(', ')} (got ${JSON.stringify(criteria)})`);
    const { objects, describe } = await cluster(c);
    if (criteria === 'largest' || criteria === 'smallest') {
      const replicas = (o: KubeObject) => Number((o.spec as { replicas?: number } | undefined)?.replicas ?? 0);
      objects.sort((a, b) => replicas(a) - replicas(b));
    }
    const pick =
      criteria === 'oldest' || criteria === 'smallest' ? objects[0] : criteria === 'second_newest' ? objects.at(-2) : objects.at(-1);
    if (!pick) throw notFound(`No manifests matching ${describe} found for criteria ${criteria}`);
    return c.json(coordinates(pick));
  });
}
