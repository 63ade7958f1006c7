/**
 * THE authorization matrix of the gateway: every REST route (as the Hono app registers it) and every RPC method of
 * every service the gateway serves, with what each credential kind must get. The matrix test sends every cell to a
 * real gateway and fails on any difference; docs/authorization-matrix.md is rendered from this table. A new route or
 * method fails the completeness check until it has a row here.
 */
import { FIXTURE } from './identities.js';
import { KUBE_ROWS, SECRET_PATCH_RPC_ROWS } from './kube-and-secret-rows.js';
import { rowOf, type MatrixRow, type Probe } from './matrix-types.js';

const A = FIXTURE.agentA;
const rest = (method: string, path: string, body?: unknown): Extract<Probe, { kind: 'rest' }> => ({ kind: 'rest', method, path, body });
const rpc = (
  service: string,
  method: string,
  message: Record<string, unknown> = {},
  transport: 'connect-json' | 'grpc' = 'connect-json',
): Extract<Probe, { kind: 'rpc' }> => ({
  kind: 'rpc',
  transport,
  service,
  method,
  message,
});
const spec = (name: string, extra: Record<string, unknown> = {}) => ({ name, kubeconfigFile: '/k', ...extra });
/**
 * A forwarded operation (the body of `POST /armory/agent/forwardedoperations`, and of its earlier path
 * `POST /armory/agent/operations`): the open operation the matrix gateway stored
 * during set-up, as stored (sent to agent A again, which de-duplicates on its id); or with another spec or an id no
 * row has.
 */
const forwardedOp = (id: string, name = 'x') => ({
  origin: FIXTURE.gatewayId,
  operation: {
    id,
    account: A.account,
    timeout: '30s',
    patch: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name, type: 'PATCH_TYPE_MERGE', patch: '{"data":{}}' },
  },
});
/**
 * A forwarded read (the body of `POST /armory/agent/forwardedreads`) for a caller described by its subject: agent A
 * never answers, so an admitted read ends TIMED_OUT after its second (the answer is still a 200).
 */
const forwardedRead = (subject: string, kind = 'get') => ({
  operation: {
    id: 'authz-forwarded-read',
    account: A.account,
    timeout: '1s',
    [kind]: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x', ...(kind === 'scale' ? { replicas: 1 } : {}) },
  },
  caller: Buffer.from(JSON.stringify({ method: 'token', subject, groups: [] })).toString('base64url'),
  role: 'write',
  requestedBy: `token:${subject}`,
});
const forwarded = forwardedOp(FIXTURE.operationId);
/** A relayed result (the body of `POST /armory/agent/operationresults`) for an operation id nobody knows: recorded as ignored. */
const relayed = (session: string, token: string) => ({
  result: { id: 'authz-unknown-op', account: A.account, success: true },
  sessionId: `$session:${session}`,
  sessionToken: `$token:${token}`,
});

const OPEN = { valid: '200' };
/** An artifact the built-in embedded account decodes (no artifact account needs configuring). */
const embeddedArtifact = {
  type: 'embedded/base64',
  reference: Buffer.from('kind: ConfigMap\n').toString('base64'),
  artifactAccount: 'embedded-artifact',
};

/** The rows of a path replicas forward operations on: allowed for replicas, and nothing runs for an unstored or altered operation. */
function forwardingRows(path: string, who: string): MatrixRow[] {
  const refused = (scenario: string, expect: string, operation: ReturnType<typeof forwardedOp>) =>
    rowOf(`POST ${path}`, 'replica', rest('POST', path, forwarded), {
      scenario: `${who} ${scenario}: nothing runs`,
      valid: '200',
      cells: { other: { as: 'replica', expect, request: rest('POST', path, operation) } },
    });
  return [
    rowOf(`POST ${path}`, 'replica', rest('POST', path, forwarded), { valid: '200' }),
    refused('an operation no replica stored', '404 not_found', forwardedOp('authz-never-stored')),
    refused('a stored operation with another spec', '403 permission_denied', forwardedOp(FIXTURE.operationId, 'tampered')),
  ];
}

/** Every REST route of the gateway. `ALL` rows are the 405 catch-alls, probed with a method the route does not allow. */
const REST_ROWS: MatrixRow[] = [
  rowOf('GET /health', 'none', rest('GET', '/health'), OPEN),
  rowOf('ALL /health', 'admin', rest('POST', '/health'), { valid: '405 method_not_allowed' }),
  rowOf('GET /metrics', 'read', rest('GET', '/metrics'), { valid: '200' }),
  rowOf('GET /armory/clouddrivers', 'read', rest('GET', '/armory/clouddrivers'), { valid: '200' }),
  rowOf('GET /armory/clouddrivers/:id', 'read', rest('GET', `/armory/clouddrivers/${FIXTURE.gatewayId}`), { valid: '200' }),
  rowOf('ALL /armory/clouddrivers', 'admin', rest('POST', '/armory/clouddrivers'), { valid: '405 method_not_allowed' }),
  rowOf('ALL /armory/clouddrivers/:id', 'admin', rest('DELETE', `/armory/clouddrivers/${FIXTURE.gatewayId}`), {
    valid: '405 method_not_allowed',
  }),

  ...forwardingRows('/armory/agent/forwardedoperations', 'a replica forwards'),
  // The forwarding route's earlier path, still served for replicas of an earlier version during a rolling upgrade.
  ...forwardingRows('/armory/agent/operations', "a replica forwards on the route's earlier path (kept for a rolling upgrade)"),
  rowOf('POST /armory/agent/forwardedreads', 'replica', rest('POST', '/armory/agent/forwardedreads', forwardedRead('writer')), {
    valid: '200',
  }),
  rowOf('POST /armory/agent/forwardedreads', 'replica', rest('POST', '/armory/agent/forwardedreads', forwardedRead('writer')), {
    scenario: "a replica forwards a read for a caller this replica's rules do not let reach the account: nothing runs",
    valid: '200',
    cells: {
      other: {
        as: 'replica',
        expect: '403 permission_denied',
        request: rest('POST', '/armory/agent/forwardedreads', forwardedRead('reader')),
      },
    },
  }),
  rowOf('POST /armory/agent/forwardedreads', 'replica', rest('POST', '/armory/agent/forwardedreads', forwardedRead('writer')), {
    scenario: 'a replica forwards a change on the reads route: nothing runs',
    valid: '200',
    cells: {
      other: {
        as: 'replica',
        expect: '400 bad_request',
        request: rest('POST', '/armory/agent/forwardedreads', forwardedRead('writer', 'scale')),
      },
    },
  }),
  rowOf('POST /armory/agent/operationresults', 'replica', rest('POST', '/armory/agent/operationresults', relayed('agentA', 'agentA')), {
    valid: '200',
  }),
  rowOf('POST /armory/agent/operationresults', 'replica', rest('POST', '/armory/agent/operationresults', relayed('agentA', 'agentA')), {
    scenario: 'a replica relays a result from a session of the account (with its own token) that the operation was not sent on',
    valid: '200',
    cells: {
      other: {
        as: 'replica',
        expect: '403 permission_denied',
        request: rest('POST', '/armory/agent/operationresults', {
          result: { id: FIXTURE.operationId, account: A.account, success: true },
          sessionId: '$session:agentAStandby',
          sessionToken: '$token:agentAStandby',
        }),
      },
    },
  }),
  rowOf('POST /armory/agent/operationresults', 'replica', rest('POST', '/armory/agent/operationresults', relayed('agentA', 'agentA')), {
    scenario: "a replica relays a result with one stream's session id and another stream's session token",
    valid: '200',
    cells: {
      other: {
        as: 'replica',
        expect: '401 unauthenticated',
        request: rest('POST', '/armory/agent/operationresults', relayed('agentA', 'agentB')),
      },
    },
  }),
  rowOf('POST /armory/agent/operationresults', 'replica', rest('POST', '/armory/agent/operationresults', relayed('agentA', 'agentA')), {
    scenario: "a replica relays agent B's session (its own token) with a result for agent A's account",
    valid: '200',
    cells: {
      other: {
        as: 'replica',
        expect: '403 permission_denied',
        request: rest('POST', '/armory/agent/operationresults', relayed('agentB', 'agentB')),
      },
    },
  }),
  rowOf('GET /armory/agent/operations', 'read', rest('GET', '/armory/agent/operations?page=1&items=5'), { valid: '200' }),
  rowOf('GET /armory/agent/operations/:id', 'read', rest('GET', `/armory/agent/operations/${FIXTURE.operationId}`), { valid: '200' }),
  rowOf(
    'GET /armory/agent/operations/:id',
    'read',
    { ...rest('GET', `/armory/agent/operations/${FIXTURE.secretOperationId}`), secret: FIXTURE.secretValue },
    {
      scenario: 'an operation whose request carried Secret values: every reader sees them redacted',
      valid: '200 redacted',
    },
  ),
  rowOf(
    'GET /armory/agent/operations',
    'read',
    { ...rest('GET', '/armory/agent/operations?page=1&items=50'), secret: FIXTURE.secretValue },
    {
      scenario: 'the operation list, with an operation whose request carried Secret values',
      valid: '200 redacted',
    },
  ),
  rowOf('ALL /armory/agent/operations', 'admin', rest('PUT', '/armory/agent/operations'), { valid: '405 method_not_allowed' }),
  rowOf('ALL /armory/agent/operations/:id', 'admin', rest('POST', `/armory/agent/operations/${FIXTURE.operationId}`), {
    valid: '405 method_not_allowed',
  }),

  rowOf('GET /armory/accounts', 'read', rest('GET', '/armory/accounts?page=1&limit=10'), { valid: '200' }),
  rowOf('POST /armory/accounts', 'admin', rest('POST', '/armory/accounts', [spec('authz-rest-create')]), { valid: '201' }),
  rowOf('PATCH /armory/accounts', 'admin', rest('PATCH', '/armory/accounts', [{ name: 'authz-rest-patch', state: 'INACTIVE' }]), {
    valid: '200',
  }),
  rowOf('DELETE /armory/accounts', 'admin', rest('DELETE', '/armory/accounts', ['authz-rest-delete-body']), { valid: '200' }),
  rowOf(
    'POST /armory/accounts/dynamic',
    'admin',
    rest('POST', '/armory/accounts/dynamic', [spec('authz-dyn-post', { zoneId: 'elsewhere' })]),
    { valid: '201' },
  ),
  rowOf(
    'PATCH /armory/accounts/dynamic',
    'admin',
    rest('PATCH', '/armory/accounts/dynamic', [spec('authz-dyn-patch', { zoneId: 'elsewhere' })]),
    { valid: '200' },
  ),
  rowOf(
    'PUT /armory/accounts/dynamic',
    'admin',
    rest('PUT', '/armory/accounts/dynamic', [spec('authz-dyn-put', { zoneId: 'elsewhere' })]),
    { valid: '200' },
  ),
  rowOf('GET /armory/accounts/:name', 'read', rest('GET', `/armory/accounts/${A.account}`), { valid: '200' }),
  rowOf('DELETE /armory/accounts/:name', 'admin', rest('DELETE', '/armory/accounts/authz-rest-delete-name'), { valid: '200' }),
  rowOf('DELETE /armory/accounts/:name/binding', 'admin', rest('DELETE', '/armory/accounts/authz-rest-binding/binding'), { valid: '200' }),
  rowOf(
    'PUT /armory/accounts/:name/binding',
    'admin',
    rest('PUT', '/armory/accounts/authz-rest-rebind/binding', { identity: 'token:agent-b' }),
    { valid: '200' },
  ),
  rowOf('ALL /armory/accounts', 'admin', rest('PUT', '/armory/accounts'), { valid: '405 method_not_allowed' }),
  // GET, HEAD and DELETE of /armory/accounts/dynamic reach /armory/accounts/:name (an account may be named `dynamic`).
  rowOf('ALL /armory/accounts/dynamic', 'admin', rest('OPTIONS', '/armory/accounts/dynamic'), { valid: '405 method_not_allowed' }),
  rowOf('ALL /armory/accounts/:name', 'admin', rest('PUT', `/armory/accounts/${A.account}`), { valid: '405 method_not_allowed' }),
  rowOf('ALL /armory/accounts/:name/binding', 'read', rest('GET', `/armory/accounts/${A.account}/binding`), {
    valid: '405 method_not_allowed',
  }),

  rowOf('GET /armory/agents', 'read', rest('GET', '/armory/agents'), { valid: '200' }),
  rowOf('GET /armory/agents/:id', 'read', rest('GET', `/armory/agents/${A.agentId}`), { valid: '200' }),
  rowOf('ALL /armory/agents', 'admin', rest('POST', '/armory/agents'), { valid: '405 method_not_allowed' }),
  rowOf('ALL /armory/agents/:id', 'admin', rest('DELETE', `/armory/agents/${A.agentId}`), { valid: '405 method_not_allowed' }),

  // The Clouddriver API (docs/spinnaker.md): role spinnaker, errors in Spring's shape.
  rowOf(
    'POST /:cloudProvider/ops',
    'spinnaker',
    rest('POST', '/kubernetes/ops?clientRequestId=authz-1', [
      { scaleManifest: { account: A.account, manifestName: 'deployment authz', location: 'default', replicas: 1 } },
    ]),
    { valid: '200' },
  ),
  rowOf('POST /ops', 'spinnaker', rest('POST', '/ops', [{ frobnicate: {} }]), { valid: '400 Bad Request' }),
  rowOf(
    'POST /:cloudProvider/ops',
    'spinnaker',
    rest('POST', '/kubernetes/ops', [
      { scaleManifest: { account: A.account, manifestName: 'deployment authz', location: 'default', replicas: 1 } },
    ]),
    {
      scenario: 'X-SPINNAKER-ACCOUNTS does not list the account: refused, nothing runs',
      valid: '400 Bad Request',
      cells: {
        valid: {
          as: 'spinnaker',
          expect: '400 Bad Request',
          request: {
            kind: 'rest',
            method: 'POST',
            path: '/kubernetes/ops',
            body: [{ scaleManifest: { account: A.account, manifestName: 'deployment authz', location: 'default', replicas: 1 } }],
            headers: { 'X-SPINNAKER-ACCOUNTS': 'team-b-web' },
          },
        },
      },
    },
  ),
  rowOf(
    'POST /:cloudProvider/ops',
    'spinnaker',
    rest('POST', '/kubernetes/ops', [
      { scaleManifest: { account: FIXTURE.agentB.account, manifestName: 'deployment authz', location: 'default', replicas: 1 } },
    ]),
    { scenario: "an account the caller's spinnaker rule does not list: refused, nothing runs", valid: '400 Bad Request' },
  ),
  rowOf('ALL /ops', 'spinnaker', rest('GET', '/ops'), { valid: '405 Method Not Allowed' }),
  rowOf('ALL /:cloudProvider/ops', 'spinnaker', rest('GET', '/kubernetes/ops'), { valid: '405 Method Not Allowed' }),
  rowOf('GET /task/:id', 'spinnaker', rest('GET', '/task/authz-no-such-task'), { valid: '404 Not Found' }),
  rowOf('GET /:cloudProvider/task/:id', 'spinnaker', rest('GET', '/kubernetes/task/authz-no-such-task'), { valid: '404 Not Found' }),
  rowOf('GET /credentials', 'spinnaker', rest('GET', '/credentials?expand=true'), { valid: '200' }),
  rowOf('GET /credentials/:account', 'spinnaker', rest('GET', `/credentials/${A.account}`), { valid: '200' }),
  rowOf('GET /manifests/:account/:location/:name', 'spinnaker', rest('GET', '/manifests/authz-no-account/default/deployment%20x'), {
    valid: '404 Not Found',
  }),
  rowOf('GET /manifests/:account/:name', 'spinnaker', rest('GET', '/manifests/authz-no-account/namespace%20x'), { valid: '404 Not Found' }),
  rowOf(
    'GET /manifests/:account/:location/:kind/cluster/:app/:cluster',
    'spinnaker',
    rest('GET', `/manifests/${A.account}/default/replicaSet/cluster/app/replicaSet%20x`),
    { valid: '200' },
  ),
  rowOf(
    'GET /manifests/:account/:location/:kind/cluster/:app/:cluster/dynamic/:criteria',
    'spinnaker',
    rest('GET', `/manifests/${A.account}/default/replicaSet/cluster/app/replicaSet%20x/dynamic/newest`),
    { valid: '404 Not Found' },
  ),
  rowOf('GET /manifests/:account/:location/:name', 'spinnaker', rest('GET', `/manifests/${A.account}/default/deployment%20x`), {
    scenario: 'X-SPINNAKER-ACCOUNTS does not list the account',
    valid: '200',
    cells: {
      valid: {
        as: 'spinnaker',
        expect: '403 Forbidden',
        request: {
          kind: 'rest',
          method: 'GET',
          path: `/manifests/${A.account}/default/deployment%20x`,
          headers: { 'X-SPINNAKER-ACCOUNTS': 'team-b-web' },
        },
      },
    },
  }),
  rowOf(
    'GET /manifests/:account/:location/:name',
    'spinnaker',
    rest('GET', `/manifests/${FIXTURE.agentB.account}/default/deployment%20x`),
    {
      scenario: "an account the caller's spinnaker rule does not list",
      valid: '403 Forbidden',
    },
  ),
  rowOf('GET /credentials/:account', 'spinnaker', rest('GET', `/credentials/${FIXTURE.agentB.account}`), {
    scenario: "an account the caller's spinnaker rule does not list: as if it did not exist",
    valid: '404 Not Found',
  }),
  rowOf(
    'POST /cache/:cloudProvider/:type',
    'spinnaker',
    rest('POST', '/cache/kubernetes/manifest', { account: A.account, location: 'default', name: 'deployment x' }),
    { valid: '200' },
  ),
  rowOf('GET /cache/:cloudProvider/:type', 'spinnaker', rest('GET', '/cache/kubernetes/manifest'), { valid: '200' }),
  rowOf('PUT /artifacts/fetch/', 'spinnaker', rest('PUT', '/artifacts/fetch/', embeddedArtifact), { valid: '200' }),
  rowOf('PUT /artifacts/fetch', 'spinnaker', rest('PUT', '/artifacts/fetch', embeddedArtifact), { valid: '200' }),
  rowOf('GET /artifacts/credentials', 'spinnaker', rest('GET', '/artifacts/credentials'), { valid: '200' }),
  rowOf(
    'GET /artifacts/account/:account/names',
    'spinnaker',
    rest('GET', '/artifacts/account/embedded-artifact/names?type=embedded/base64'),
    {
      valid: '501 Not Implemented',
    },
  ),
  rowOf(
    'GET /artifacts/account/:account/versions',
    'spinnaker',
    rest('GET', '/artifacts/account/embedded-artifact/versions?type=embedded/base64&artifactName=x'),
    { valid: '501 Not Implemented' },
  ),
  rowOf(
    'GET /applications/:app/jobs/:account/:location/:name',
    'spinnaker',
    rest('GET', '/applications/app/jobs/authz-no-account/default/job%20x'),
    { valid: '404 Not Found' },
  ),
  rowOf(
    'GET /applications/:app/jobs/:account/:location/:name/:fileName',
    'spinnaker',
    rest('GET', '/applications/app/jobs/authz-no-account/default/job%20x/main'),
    { valid: '404 Not Found' },
  ),
  rowOf(
    'DELETE /applications/:app/jobs/:account/:location/:name',
    'spinnaker',
    rest('DELETE', '/applications/app/jobs/authz-no-account/default/job%20x'),
    { valid: '404 Not Found' },
  ),
  rowOf('GET /applications', 'spinnaker', rest('GET', '/applications?restricted=false&expand=true'), { valid: '200' }),
  rowOf('GET /applications/:app', 'spinnaker', rest('GET', '/applications/app'), { valid: '404 Not Found' }),
  rowOf('GET /applications/:app/clusters', 'spinnaker', rest('GET', '/applications/app/clusters'), { valid: '200' }),
  rowOf('GET /applications/:app/serverGroups', 'spinnaker', rest('GET', '/applications/app/serverGroups?expand=false'), { valid: '200' }),
  rowOf('GET /applications/:app/serverGroupManagers', 'spinnaker', rest('GET', '/applications/app/serverGroupManagers'), { valid: '200' }),
  rowOf('GET /applications/:app/loadBalancers', 'spinnaker', rest('GET', '/applications/app/loadBalancers'), { valid: '200' }),
  rowOf(
    'GET /applications/:app/serverGroups/:account/:namespace/:name',
    'spinnaker',
    rest('GET', `/applications/app/serverGroups/${A.account}/default/replicaSet%20x`),
    { valid: '404 Not Found' },
  ),
  rowOf(
    'GET /applications/:app/serverGroups/:account/:namespace/:name',
    'spinnaker',
    rest('GET', `/applications/app/serverGroups/${FIXTURE.agentB.account}/default/replicaSet%20x`),
    { scenario: "an account the caller's spinnaker rule does not list", valid: '403 Forbidden' },
  ),
  rowOf('GET /applications/:app/clusters/:account', 'spinnaker', rest('GET', `/applications/app/clusters/${A.account}`), {
    valid: '404 Not Found',
  }),
  rowOf('GET /applications/:app/clusters/:account', 'spinnaker', rest('GET', `/applications/app/clusters/${FIXTURE.agentB.account}`), {
    scenario: "an account the caller's spinnaker rule does not list",
    valid: '403 Forbidden',
  }),
  rowOf('GET /applications/:app/clusters/:account/:name', 'spinnaker', rest('GET', `/applications/app/clusters/${A.account}/app`), {
    valid: '404 Not Found',
  }),
  rowOf(
    'GET /applications/:app/clusters/:account/:name/:type',
    'spinnaker',
    rest('GET', `/applications/app/clusters/${A.account}/app/kubernetes`),
    {
      valid: '404 Not Found',
    },
  ),
  rowOf(
    'GET /applications/:app/clusters/:account/:name/:type/serverGroups',
    'spinnaker',
    rest('GET', `/applications/app/clusters/${A.account}/app/kubernetes/serverGroups`),
    { valid: '404 Not Found' },
  ),
  rowOf(
    'GET /applications/:app/clusters/:account/:name/:type/serverGroups/:serverGroup',
    'spinnaker',
    rest('GET', `/applications/app/clusters/${A.account}/app/kubernetes/serverGroups/replicaSet%20x`),
    { valid: '404 Not Found' },
  ),
  rowOf(
    'GET /applications/:app/clusters/:account/:name/:cloudProvider/:scope/serverGroups/target/:target',
    'spinnaker',
    rest('GET', `/applications/app/clusters/${A.account}/app/kubernetes/default/serverGroups/target/current`),
    { valid: '404 Not Found' },
  ),
  rowOf('GET /instances/:account/:namespace/:name', 'spinnaker', rest('GET', `/instances/${A.account}/default/pod%20x`), {
    valid: '404 Not Found',
  }),
  rowOf(
    'GET /instances/:account/:namespace/:name/console',
    'spinnaker',
    rest('GET', '/instances/authz-no-account/default/pod%20x/console?provider=kubernetes'),
    { valid: '404 Not Found' },
  ),
  rowOf('GET /securityGroups', 'spinnaker', rest('GET', '/securityGroups'), { valid: '200' }),
  rowOf(
    'GET /securityGroups/:account/:cloudProvider/:namespace/:name',
    'spinnaker',
    rest('GET', `/securityGroups/${A.account}/kubernetes/default/networkPolicy%20x`),
    { valid: '404 Not Found' },
  ),
  rowOf('GET /search', 'spinnaker', rest('GET', '/search?q=app&type=securityGroups&pageSize=500'), { valid: '200' }),
  rowOf('GET /serverGroups', 'spinnaker', rest('GET', `/serverGroups?ids=${A.account}:default:replicaSet%20x`), { valid: '200' }),

  rowOf('GET /', 'none', rest('GET', '/'), OPEN),
  rowOf('HEAD /', 'none', rest('HEAD', '/'), OPEN),
  rowOf('GET /index.html', 'none', rest('GET', '/index.html'), OPEN),
  rowOf('HEAD /index.html', 'none', rest('HEAD', '/index.html'), OPEN),
  rowOf('GET /favicon.svg', 'none', rest('GET', '/favicon.svg'), OPEN),
  rowOf('HEAD /favicon.svg', 'none', rest('HEAD', '/favicon.svg'), OPEN),
  rowOf('GET /assets/*', 'none', rest('GET', '/assets/app.js'), OPEN),
  rowOf('HEAD /assets/*', 'none', rest('HEAD', '/assets/app.js'), OPEN),

  rowOf('GET /no/such/route', 'admin', rest('GET', '/no/such/route'), {
    scenario: 'no route: refused before routing, so probing reveals nothing',
    valid: '404 not_found',
    unrouted: true,
  }),
];

const ACC = 'outpost.api.v1.AccountService';
const OPS = 'outpost.api.v1.OperationService';
const AGENT = 'outpost.agent.v1.AgentService';
const agentCall = (
  transport: 'grpc' | 'connect-h2',
  agentId: string,
  account: string,
  extra: Partial<Extract<Probe, { kind: 'agent' }>> = {},
): Probe => ({
  kind: 'agent',
  transport,
  agentId,
  accounts: [account],
  ...extra,
});
const listServices = { listServices: '' };

/** Every RPC method of every service the gateway serves. */
const RPC_ROWS: MatrixRow[] = [
  rowOf(`${AGENT}/Connect`, 'agent', agentCall('grpc', 'agent-a-cell', 'team-a-cell'), { valid: 'OK' }),
  rowOf(`${AGENT}/Connect`, 'agent', agentCall('connect-h2', 'agent-a-cell-connect', 'team-a-cell-connect'), {
    scenario: 'Connect protocol over HTTP/2 (served by connect-node, not the gRPC fast path)',
    valid: 'OK',
  }),
  rowOf(
    `${AGENT}/Connect`,
    'agent',
    agentCall('grpc', FIXTURE.agentAResume.agentId, FIXTURE.agentAResume.account, {
      resume: { session: 'agentAResume', token: 'agentAResume' },
    }),
    {
      scenario: "agent B resumes agent A's session, presenting its own session token",
      valid: 'OK',
      cells: {
        other: {
          as: 'agentB',
          expect: 'Unauthenticated',
          request: agentCall('grpc', FIXTURE.agentAResume.agentId, FIXTURE.agentAResume.account, {
            resume: { session: 'agentAResume', token: 'agentB' },
          }),
        },
      },
    },
  ),
  rowOf(
    `${AGENT}/Connect`,
    'agent',
    agentCall('grpc', FIXTURE.agentAResume.agentId, FIXTURE.agentAResume.account, {
      resume: { session: 'agentAResume', token: 'agentAResume' },
    }),
    {
      scenario: "agent B resumes agent A's session with A's own session token (copied): a session stays with its identity",
      valid: 'OK',
      cells: {
        other: {
          as: 'agentB',
          expect: 'Unauthenticated',
          request: agentCall('grpc', FIXTURE.agentAResume.agentId, FIXTURE.agentAResume.account, {
            resume: { session: 'agentAResume', token: 'agentAResume' },
          }),
        },
      },
    },
  ),
  rowOf(`${AGENT}/Connect`, 'agent', agentCall('grpc', 'agent-a-verdict', 'team-a-verdict', { verdicts: true }), {
    scenario: "agent B registers an account name only agent A's identity may register",
    valid: 'OK CACHING',
    cells: {
      other: { as: 'agentB', expect: 'OK REFUSED', request: agentCall('grpc', 'agent-b-verdict', 'team-a-verdict-b', { verdicts: true }) },
    },
  }),
  rowOf(`${AGENT}/Connect`, 'agent', agentCall('grpc', 'agent-a-shared-standby', FIXTURE.agentAShared.account, { verdicts: true }), {
    scenario:
      "agent B claims a name both identities may register, reporting the same cluster, while it is bound to agent A's identity; valid: another stream of agent A stands by",
    valid: 'OK STANDBY',
    cells: {
      other: {
        as: 'agentB',
        expect: 'OK REFUSED',
        request: agentCall('grpc', 'agent-b-shared', FIXTURE.agentAShared.account, { verdicts: true }),
      },
    },
  }),
  rowOf(
    `${AGENT}/Connect`,
    'agent',
    {
      kind: 'result',
      operationId: FIXTURE.forgedOperationId,
      marker: 'from-a-new-stream',
      from: { agentId: 'agent-a-standby', account: A.account },
    },
    {
      scenario:
        'an agent answers an operation sent to another agent (a STANDBY stream of the same account); valid: the agent it was sent to',
      valid: 'recorded',
      cells: {
        other: { as: 'agentA', expect: 'ignored' },
        valid: {
          as: 'none',
          expect: 'recorded',
          request: { kind: 'result', operationId: FIXTURE.answeredOperationId, marker: 'from-agent-a', from: { fixture: 'agentA' } },
        },
      },
    },
  ),

  rowOf('outpost.api.v1.ObjectService/ListObjects', 'read', rpc('outpost.api.v1.ObjectService', 'ListObjects', { account: A.account }), {
    valid: 'OK',
  }),
  // Unauthenticated floods (docs/architecture.md, rule 9): refused from the headers while the body is still being sent, so a
  // stalled body costs nothing. Counts and memory are checked by test/gateway/unauthenticated-flood.test.ts.
  rowOf(
    'outpost.api.v1.ObjectService/ListObjects',
    'read',
    { kind: 'stalled', service: 'outpost.api.v1.ObjectService', method: 'ListObjects', message: { account: A.account } },
    {
      scenario: 'the chunked body stalls halfway (an unauthenticated flood holds bodies open)',
      valid: 'OK after the body ended',
      cells: {
        none: { expect: 'Unauthenticated before the body ended' },
        wrong: { expect: 'Unauthenticated before the body ended' },
        other: { expect: 'PermissionDenied before the body ended' },
      },
    },
  ),
  rowOf(
    'outpost.api.v1.ObjectService/GetObject',
    'read',
    rpc('outpost.api.v1.ObjectService', 'GetObject', { account: A.account, kind: 'ConfigMap', ...FIXTURE.configMap }),
    {
      valid: 'OK',
    },
  ),
  rowOf(
    'outpost.api.v1.ObjectService/SummarizeHealth',
    'read',
    rpc('outpost.api.v1.ObjectService', 'SummarizeHealth', { account: A.account }),
    {
      valid: 'OK',
    },
  ),

  rowOf(
    `${OPS}/SubmitOperation`,
    'write',
    rpc(OPS, 'SubmitOperation', {
      account: A.account,
      id: 'authz-submit-1',
      patch: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x', type: 'PATCH_TYPE_MERGE', patch: '{"data":{}}' },
    }),
    {
      valid: 'OK',
    },
  ),
  rowOf(
    `${OPS}/SubmitOperation`,
    'write',
    // Agent A never answers: an admitted read ends TIMED_OUT after its second, still OK.
    rpc(OPS, 'SubmitOperation', {
      account: A.account,
      timeout: '1s',
      get: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x' },
    }),
    { scenario: 'a read (never stored): the same write role and account rules', valid: 'OK' },
  ),
  rowOf(
    `${OPS}/SubmitOperation`,
    'write',
    rpc(OPS, 'SubmitOperation', {
      account: FIXTURE.agentB.account,
      id: 'authz-submit-other-account',
      get: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'x' },
    }),
    { scenario: "an account the caller's write rule does not list: refused, nothing is stored", valid: 'PermissionDenied' },
  ),
  rowOf(`${OPS}/GetOperation`, 'read', rpc(OPS, 'GetOperation', { id: FIXTURE.operationId }), { valid: 'OK' }),
  rowOf(
    `${OPS}/GetOperation`,
    'read',
    { ...rpc(OPS, 'GetOperation', { id: FIXTURE.secretOperationId }), secret: FIXTURE.secretValue },
    {
      scenario: 'an operation whose request carried Secret values: every reader sees them redacted',
      valid: 'OK redacted',
    },
  ),
  rowOf(
    `${OPS}/ListOperations`,
    'read',
    { ...rpc(OPS, 'ListOperations', { account: FIXTURE.agentA.account }), secret: FIXTURE.secretValue },
    {
      scenario: 'the operation list, with an operation whose request carried Secret values',
      valid: 'OK redacted',
    },
  ),
  rowOf(
    `${OPS}/WaitOperation`,
    'read',
    { ...rpc(OPS, 'WaitOperation', { id: FIXTURE.secretOperationId }), secret: FIXTURE.secretValue },
    {
      scenario: 'waiting on an operation whose request carried Secret values',
      valid: 'OK redacted',
    },
  ),
  rowOf(`${OPS}/WaitOperation`, 'read', rpc(OPS, 'WaitOperation', { id: FIXTURE.operationId }), { valid: 'OK' }),
  rowOf(`${OPS}/ListOperations`, 'read', rpc(OPS, 'ListOperations', { pageSize: 5 }), { valid: 'OK' }),

  rowOf(`${ACC}/ListAccounts`, 'read', rpc(ACC, 'ListAccounts'), { valid: 'OK' }),
  rowOf(`${ACC}/GetAccount`, 'read', rpc(ACC, 'GetAccount', { name: A.account }), { valid: 'OK' }),
  rowOf(`${ACC}/ListAgents`, 'read', rpc(ACC, 'ListAgents'), { valid: 'OK' }),
  rowOf(`${ACC}/CreateAccounts`, 'admin', rpc(ACC, 'CreateAccounts', { accounts: [{ definition: spec('authz-rpc-create') }] }), {
    valid: 'OK',
  }),
  rowOf(`${ACC}/SetAccountStates`, 'admin', rpc(ACC, 'SetAccountStates', { accounts: [{ name: 'authz-rpc-states', state: 'INACTIVE' }] }), {
    valid: 'OK',
  }),
  rowOf(
    `${ACC}/PutDynamicAccounts`,
    'admin',
    rpc(ACC, 'PutDynamicAccounts', { accounts: [{ definition: spec('authz-rpc-dyn'), zoneId: 'elsewhere' }] }),
    {
      valid: 'OK',
    },
  ),
  rowOf(`${ACC}/DeleteAccounts`, 'admin', rpc(ACC, 'DeleteAccounts', { names: ['authz-rpc-delete'] }), { valid: 'OK' }),
  rowOf(`${ACC}/DeleteAccounts`, 'admin', rpc(ACC, 'DeleteAccounts', { names: ['authz-rpc-delete-jwt'] }), {
    // admitted, then no such account
    valid: 'NotFound',
    scenario: "a JWT whose sub is the static admin token's subject: identity kinds are separate namespaces",
    cells: { other: { as: 'jwtAdmin' } },
  }),
  rowOf(`${ACC}/ReleaseBinding`, 'admin', rpc(ACC, 'ReleaseBinding', { name: 'authz-rpc-binding' }), { valid: 'OK' }),
  rowOf(`${ACC}/RebindAccount`, 'admin', rpc(ACC, 'RebindAccount', { name: 'authz-rpc-rebind', identity: 'token:agent-b' }), {
    valid: 'OK',
  }),

  rowOf('outpost.api.v1.FleetService/GetFleet', 'read', rpc('outpost.api.v1.FleetService', 'GetFleet'), { valid: 'OK' }),
  rowOf('outpost.api.v1.FleetService/WatchFleet', 'read', rpc('outpost.api.v1.FleetService', 'WatchFleet'), { valid: 'OK' }),
  rowOf('outpost.api.v1.MetricsService/GetHistory', 'read', rpc('outpost.api.v1.MetricsService', 'GetHistory'), { valid: 'OK' }),
  rowOf('outpost.api.v1.AuditService/ListAuditEvents', 'admin', rpc('outpost.api.v1.AuditService', 'ListAuditEvents'), {
    valid: 'OK',
  }),

  rowOf('grpc.health.v1.Health/Check', 'none', rpc('grpc.health.v1.Health', 'Check'), { valid: 'OK' }),
  rowOf('grpc.health.v1.Health/Watch', 'none', rpc('grpc.health.v1.Health', 'Watch'), { valid: 'OK' }),
  rowOf(
    'grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
    'read',
    rpc('grpc.reflection.v1.ServerReflection', 'ServerReflectionInfo', listServices, 'grpc'),
    {
      valid: 'OK',
    },
  ),
  rowOf(
    'grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
    'read',
    rpc('grpc.reflection.v1alpha.ServerReflection', 'ServerReflectionInfo', listServices, 'grpc'),
    { valid: 'OK' },
  ),
];

/** The whole matrix: REST rows, then RPC rows. */
export const AUTHORIZATION_TABLE: readonly MatrixRow[] = [...REST_ROWS, ...KUBE_ROWS, ...RPC_ROWS, ...SECRET_PATCH_RPC_ROWS];
