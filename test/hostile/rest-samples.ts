/**
 * A valid request for every REST route of the gateway (path parameters, query, JSON body), the starting point of the
 * REST cases. Reads name the seeded data; writes name accounts and operations unique to the case. Catch-all routes
 * (`ALL`, answering 405) need no sample. A route without a sample makes the generator throw, so a new route cannot
 * stay out of the suite.
 */
import type { Rng } from '../../testkit/rng.js';
import { listRestRoutes, type RestRoute } from '../../testkit/rest-routes.js';
import { SEED } from './hostile-target.js';
import type { Json } from './json-mutations.js';

/** A valid request for one route. */
export interface RestSample {
  /** Values of the route's `:param`s and of its `*`. */
  params?: Record<string, string>;
  query?: string;
  body?: Json;
}

type Sample = (rng: Rng, tag: string) => RestSample;

const definitions = (rng: Rng, tag: string): RestSample => ({
  body: [
    {
      name: `hx-${tag}`,
      kubeconfigFile: '/kube/config',
      namespaces: rng.chance(0.5) ? ['web'] : [],
      kinds: ['Deployment'],
      properties: { team: 'a' },
    },
  ],
});

/** An artifact the built-in embedded account decodes (no artifact account is configured on the hostile target). */
const embeddedArtifact = (rng: Rng): Json => ({
  type: 'embedded/base64',
  reference: Buffer.from(rng.pick(['kind: ConfigMap\n', 'a: 1\n---\nb: 2\n'])).toString('base64'),
  artifactAccount: 'embedded-artifact',
  metadata: {},
});

/** An Orca operations array on the seeded account (its agent is gone: the task runs and fails). */
const clouddriverOps = (rng: Rng): Json => [
  rng.pick<Json>([
    {
      scaleManifest: {
        account: SEED.account,
        cloudProvider: 'kubernetes',
        manifestName: 'deployment web',
        location: 'default',
        replicas: rng.int(0, 5),
      },
    },
    { deleteManifest: { account: SEED.account, manifestName: 'configMap cm-a', location: 'default', options: { cascading: true } } },
    {
      patchManifest: {
        account: SEED.account,
        manifestName: 'deployment web',
        location: 'default',
        patchBody: { metadata: { labels: { a: 'b' } } },
        options: { mergeStrategy: 'strategic' },
      },
    },
  ]),
];

/** A forwarded operation (the forwarding route, and its earlier path kept for a rolling upgrade). */
const forwardedSample: Sample = (rng, tag) => {
  const operation = {
    id: `hx-op-${tag}`,
    account: `hx-${tag}`,
    timeout: '5s',
    get: { kind: 'ConfigMap', namespace: 'default', name: 'c1' },
  };
  return { body: { operation: rng.chance(0.3) ? JSON.stringify(operation) : operation, origin: 'gw-other' } };
};

const SAMPLES: Record<string, Sample> = {
  'GET /health': () => ({}),
  'GET /metrics': () => ({}),
  'GET /armory/clouddrivers': () => ({}),
  'GET /armory/clouddrivers/:id': (rng) => ({ params: { id: rng.pick(['gw-test', 'gw-other']) } }),
  'POST /armory/agent/forwardedoperations': forwardedSample,
  'POST /armory/agent/forwardedreads': (rng, tag) => ({
    body: {
      operation: {
        id: `hx-read-${tag}`,
        account: `hx-${tag}`,
        timeout: '1s',
        get: { kind: 'ConfigMap', namespace: 'default', name: 'c1' },
      },
      caller: Buffer.from(JSON.stringify({ method: 'token', subject: `hx-${tag}`, groups: [] })).toString('base64url'),
      role: rng.chance(0.5) ? 'write' : 'spinnaker',
      requestedBy: `token:hx-${tag}`,
    },
  }),
  'POST /armory/agent/operations': forwardedSample,
  'POST /armory/agent/operationresults': (rng, tag) => ({
    body: {
      result: { id: rng.pick([`hx-op-${tag}`, SEED.operationId]), account: `hx-${tag}`, success: true, statusCode: 200 },
      sessionId: `session-${tag}`,
      sessionToken: 'not-the-token',
    },
  }),
  'GET /armory/agent/operations': (rng) => ({ query: `page=${rng.int(1, 3)}&items=${rng.int(1, 50)}` }),
  'GET /armory/agent/operations/:id': () => ({ params: { id: SEED.operationId } }),
  'GET /armory/accounts': (rng) => ({ query: `page=${rng.int(1, 3)}&limit=${rng.int(1, 50)}` }),
  'POST /armory/accounts': definitions,
  'PATCH /armory/accounts': (rng, tag) => ({ body: [{ name: `hx-${tag}`, state: rng.pick(['ACTIVE', 'INACTIVE']) }] }),
  'DELETE /armory/accounts': (_, tag) => ({ body: [`hx-${tag}`] }),
  'POST /armory/accounts/dynamic': definitions,
  'PATCH /armory/accounts/dynamic': definitions,
  'PUT /armory/accounts/dynamic': definitions,
  'GET /armory/accounts/:name': (rng) => ({ params: { name: rng.pick([SEED.account, SEED.dynamicAccount]) } }),
  'DELETE /armory/accounts/:name': (_, tag) => ({ params: { name: `hx-${tag}` } }),
  'DELETE /armory/accounts/:name/binding': (_, tag) => ({ params: { name: `hx-${tag}` } }),
  'PUT /armory/accounts/:name/binding': (rng, tag) => ({
    params: { name: `hx-${tag}` },
    body: { identity: rng.pick(['token:agent-hx', 'certificate:CN=agent-hx']) },
  }),
  'GET /armory/agents': () => ({}),
  'GET /armory/agents/:id': () => ({ params: { id: SEED.agentId } }),
  'POST /:cloudProvider/ops': (rng, tag) => ({
    params: { cloudProvider: 'kubernetes' },
    query: `clientRequestId=hx-${tag}`,
    body: clouddriverOps(rng),
  }),
  'POST /ops': (rng, tag) => ({ query: `clientRequestId=hx-${tag}`, body: clouddriverOps(rng) }),
  'GET /task/:id': (_, tag) => ({ params: { id: `hx-${tag}` } }),
  'GET /:cloudProvider/task/:id': (_, tag) => ({ params: { cloudProvider: 'kubernetes', id: `hx-${tag}` } }),
  'GET /credentials': (rng) => ({ query: `expand=${rng.pick(['true', 'false'])}` }),
  'GET /credentials/:account': () => ({ params: { account: SEED.account } }),
  'GET /applications/:app/jobs/:account/:location/:name': (_, tag) => ({
    params: { app: 'hx', account: `hx-${tag}`, location: 'default', name: 'job x' },
  }),
  'GET /applications/:app/jobs/:account/:location/:name/:fileName': (_, tag) => ({
    params: { app: 'hx', account: `hx-${tag}`, location: 'default', name: 'job x', fileName: 'main' },
  }),
  'DELETE /applications/:app/jobs/:account/:location/:name': (_, tag) => ({
    params: { app: 'hx', account: `hx-${tag}`, location: 'default', name: 'job x' },
  }),
  'GET /applications': (rng) => ({ query: `expand=${rng.pick(['true', 'false'])}&restricted=false` }),
  'GET /applications/:app': (rng) => ({ params: { app: rng.pick(['web', 'hx']) } }),
  'GET /applications/:app/clusters': (rng) => ({ params: { app: rng.pick(['web', 'hx']) } }),
  'GET /applications/:app/serverGroups': (rng) => ({ params: { app: rng.pick(['web', 'hx']) }, query: 'expand=false' }),
  'GET /applications/:app/serverGroupManagers': (rng) => ({ params: { app: rng.pick(['web', 'hx']) } }),
  'GET /applications/:app/loadBalancers': (rng) => ({ params: { app: rng.pick(['web', 'hx']) } }),
  'GET /applications/:app/serverGroups/:account/:namespace/:name': (rng) => ({
    params: { app: 'web', account: SEED.account, namespace: 'default', name: rng.pick(['replicaSet web', 'replicaset x', 'nokind']) },
  }),
  'GET /applications/:app/clusters/:account': (rng) => ({ params: { app: rng.pick(['web', 'hx']), account: SEED.account } }),
  'GET /applications/:app/clusters/:account/:name': (rng) => ({
    params: { app: 'web', account: SEED.account, name: rng.pick(['replicaSet web', 'web']) },
    query: `expand=${rng.pick(['true', 'false'])}`,
  }),
  'GET /applications/:app/clusters/:account/:name/:type': (rng) => ({
    params: { app: 'web', account: SEED.account, name: 'web', type: rng.pick(['kubernetes', 'aws']) },
  }),
  'GET /applications/:app/clusters/:account/:name/:type/serverGroups': () => ({
    params: { app: 'web', account: SEED.account, name: 'web', type: 'kubernetes' },
    query: 'region=default',
  }),
  'GET /applications/:app/clusters/:account/:name/:type/serverGroups/:serverGroup': (rng) => ({
    params: { app: 'web', account: SEED.account, name: 'web', type: 'kubernetes', serverGroup: rng.pick(['replicaSet web', 'x']) },
  }),
  'GET /applications/:app/clusters/:account/:name/:cloudProvider/:scope/serverGroups/target/:target': (rng) => ({
    params: {
      app: 'web',
      account: SEED.account,
      name: 'web',
      cloudProvider: 'kubernetes',
      scope: 'default',
      target: rng.pick(['current', 'previous', 'oldest', 'largest', 'fail', 'current_asg_dynamic', 'bogus']),
    },
    query: `onlyEnabled=${rng.pick(['true', 'false'])}`,
  }),
  'GET /instances/:account/:namespace/:name': (rng) => ({
    params: { account: SEED.account, namespace: 'default', name: rng.pick(['pod web', 'pod x', 'nokind']) },
  }),
  // Live reads through an agent: an account no agent serves, as for the manifest reads below.
  'GET /instances/:account/:namespace/:name/console': (rng, tag) => ({
    params: { account: `hx-${tag}`, namespace: 'default', name: rng.pick(['pod web', 'pod x', 'nokind']) },
    query: 'provider=kubernetes',
  }),
  'GET /securityGroups': () => ({}),
  'GET /securityGroups/:account/:cloudProvider/:namespace/:name': () => ({
    params: { account: SEED.account, cloudProvider: 'kubernetes', namespace: 'default', name: 'networkPolicy x' },
  }),
  'GET /search': (rng) => ({
    query: `q=${rng.pick(['web', 'x'])}&type=${rng.pick(['serverGroups', 'instances', 'securityGroups'])}&pageSize=10`,
  }),
  'GET /serverGroups': () => ({ query: `ids=${SEED.account}:default:replicaSet%20web` }),
  'GET /manifests/:account/:location/:name': (rng, tag) => ({
    params: { account: `hx-${tag}`, location: rng.pick(['default', '_']), name: rng.pick(['deployment web', 'configMap cm-a']) },
    query: 'includeEvents=false',
  }),
  'GET /manifests/:account/:name': (_, tag) => ({ params: { account: `hx-${tag}`, name: 'namespace default' } }),
  'GET /manifests/:account/:location/:kind/cluster/:app/:cluster': (rng) => ({
    params: {
      account: SEED.account,
      location: 'default',
      kind: rng.pick(['replicaSet', 'deployment']),
      app: 'web',
      cluster: 'replicaSet web',
    },
  }),
  'GET /manifests/:account/:location/:kind/cluster/:app/:cluster/dynamic/:criteria': (rng) => ({
    params: {
      account: SEED.account,
      location: 'default',
      kind: 'replicaSet',
      app: 'web',
      cluster: 'replicaSet web',
      criteria: rng.pick(['oldest', 'newest', 'second_newest', 'largest', 'smallest']),
    },
  }),
  'POST /cache/:cloudProvider/:type': (rng) => ({
    params: { cloudProvider: 'kubernetes', type: rng.pick(['manifest', 'Manifest']) },
    body: { account: SEED.account, location: 'default', name: 'deployment web' },
  }),
  'GET /cache/:cloudProvider/:type': () => ({ params: { cloudProvider: 'kubernetes', type: 'manifest' } }),
  'PUT /artifacts/fetch': (rng) => ({ body: embeddedArtifact(rng) }),
  'PUT /artifacts/fetch/': (rng) => ({ body: embeddedArtifact(rng) }),
  'GET /artifacts/credentials': () => ({}),
  'GET /artifacts/account/:account/names': (rng) => ({
    params: { account: rng.pick(['embedded-artifact', 'no-such-helm']) },
    query: rng.pick(['type=embedded/base64', 'type=helm/chart']),
  }),
  'GET /artifacts/account/:account/versions': (rng) => ({
    params: { account: rng.pick(['embedded-artifact', 'no-such-helm']) },
    query: `${rng.pick(['type=embedded/base64', 'type=helm/chart'])}&artifactName=x`,
  }),
  'GET /': () => ({}),
  'HEAD /': () => ({}),
  'GET /index.html': () => ({}),
  'HEAD /index.html': () => ({}),
  'GET /favicon.svg': () => ({}),
  'HEAD /favicon.svg': () => ({}),
  'GET /assets/*': () => ({ params: { '*': 'app-1234.js' } }),
  'HEAD /assets/*': () => ({ params: { '*': 'app-1234.js' } }),
};

/** A stand-in generator for reading which samples have bodies (their shape does not depend on the choices). */
const fakeRng: Rng = { seed: 0, next: () => 0, int: (min) => min, pick: (items) => items[0]!, chance: () => false, fork: () => fakeRng };

/** Every REST route (read from the app). */
export const REST_ROUTES: readonly RestRoute[] = listRestRoutes();

/** The routes that take a JSON body. */
export const BODY_ROUTES: readonly RestRoute[] = REST_ROUTES.filter(
  (r) => r.method !== 'ALL' && SAMPLES[`${r.method} ${r.path}`]?.(fakeRng, 'x').body !== undefined,
);

/** A valid request for `route` (catch-alls: no parameters, no body); throws when a route has no sample yet. */
export function sampleRest(route: RestRoute, rng: Rng, tag: string): RestSample {
  if (route.method === 'ALL') return { params: Object.fromEntries(paramNames(route.path).map((p) => [p, 'x'])) };
  const sample = SAMPLES[`${route.method} ${route.path}`];
  if (!sample) throw new Error(`no sample request for ${route.method} ${route.path}: add one to test/hostile/rest-samples.ts`);
  return sample(rng, tag);
}

/** The parameter names of a Hono path pattern (`:name`, and `*`). */
export function paramNames(path: string): string[] {
  return path.split('/').flatMap((s) => (s.startsWith(':') ? [s.slice(1)] : s === '*' ? ['*'] : []));
}

/** The path with its parameters filled in with already-encoded segments. */
export function fillPath(path: string, encoded: Record<string, string>): string {
  return path
    .split('/')
    .map((s) => (s.startsWith(':') ? (encoded[s.slice(1)] ?? 'x') : s === '*' ? (encoded['*'] ?? 'x') : s))
    .join('/');
}
