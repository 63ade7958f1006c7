/**
 * Rows of the authorization matrix for kubectl through the gateway (`/k8s/{account}/…`, served before the REST app's
 * routes, so `unrouted`) and for the Secret rule of JSON patches: what each credential gets from the admission the
 * gateway does itself — the role and account rule, the one canonical path (refused before authentication), a caller
 * header only a replica may send and whose caller is admitted again, names the cluster would trim — and a patch of a
 * Secret that reads its values, refused on every surface that submits one. What the cluster answers is not the
 * matrix's: the account `team-a-none` has no agent, so an admitted request ends `503`.
 */
import { FIXTURE } from './identities.js';
import { rowOf, type MatrixRow, type Probe } from './matrix-types.js';

const K8S = 'ALL /k8s/:account/*';
const ADMITTED = '/k8s/team-a-none/api/v1/namespaces/default/pods';
const kube = (path: string, headers?: Record<string, string>): Extract<Probe, { kind: 'rest' }> => ({
  kind: 'rest',
  method: 'GET',
  path,
  headers,
  raw: true,
});
/** The caller header a forwarding replica sends: base64url JSON of a principal's description. */
const callerHeader = (caller: Record<string, unknown>) => ({
  'x-outpost-kube-caller': Buffer.from(JSON.stringify(caller)).toString('base64url'),
});
/** A path no URL parser may read another way than the check: 400 for everyone, before credentials are looked at. */
const beforeAuthentication = (scenario: string, path: string): MatrixRow =>
  rowOf(K8S, 'kube', kube(path), {
    scenario: `${scenario}: refused before authentication`,
    valid: '400 BadRequest',
    cells: { none: { expect: '400 BadRequest' }, wrong: { expect: '400 BadRequest' }, other: { expect: '400 BadRequest' } },
    unrouted: true,
  });
const SECRET_COPY = JSON.stringify([{ op: 'copy', from: '/data/password', path: '/metadata/annotations/leak' }]);

/** The `/k8s` rows (REST surface). */
export const KUBE_ROWS: readonly MatrixRow[] = [
  rowOf(K8S, 'kube', kube(ADMITTED), { valid: '503 ServiceUnavailable', unrouted: true }),
  rowOf(K8S, 'kube', kube(`/k8s/${FIXTURE.agentB.account}/api/v1/namespaces/default/pods`), {
    scenario: "an account the caller's kube rule does not list",
    valid: '403 Forbidden',
    unrouted: true,
  }),
  beforeAuthentication(
    'backslashes, which URL parsers read as "/"',
    '/k8s/team-a-none/x\\..\\..\\..\\outpost.api.v1.ObjectService\\ListObjects',
  ),
  beforeAuthentication('an encoded separator', '/k8s/team-a-none/api/v1/namespaces%2Fkube-system%2Fsecrets'),
  beforeAuthentication('an encoded dot segment', `/k8s/team-a-none/%2e%2e/${FIXTURE.agentB.account}/api/v1/pods`),
  rowOf(K8S, 'kube', kube(ADMITTED, callerHeader({ method: 'token', subject: 'admin', groups: [] })), {
    scenario: 'a caller header sent by an identity that is not a replica (recorded in the audit log)',
    valid: '403 Forbidden',
    unrouted: true,
  }),
  rowOf(
    K8S,
    'kube',
    kube(`/k8s/${FIXTURE.agentB.account}/api/v1/pods`, callerHeader({ method: 'token', subject: 'kube-user', groups: [] })),
    {
      scenario: "a replica forwards a caller to an account that caller's rule does not list: admitted again, refused",
      valid: '403 Forbidden',
      cells: { valid: { as: 'replica' } },
      unrouted: true,
    },
  ),
  rowOf(K8S, 'kube', kube(ADMITTED), {
    scenario: 'a JWT whose groups claim holds " system:masters" (whitespace the cluster trims)',
    valid: '403 Forbidden',
    cells: { valid: { as: 'jwtKube' } },
    unrouted: true,
  }),
  rowOf(
    'POST /:cloudProvider/ops',
    'spinnaker',
    {
      kind: 'rest',
      method: 'POST',
      path: '/kubernetes/ops',
      body: [
        {
          patchManifest: {
            account: FIXTURE.agentA.account,
            location: 'default',
            manifestName: 'secret db',
            options: { mergeStrategy: 'json' },
            patchBody: JSON.parse(SECRET_COPY),
          },
        },
      ],
    },
    { scenario: 'a JSON patch of a Secret copying its data: refused, no task exists', valid: '400 Bad Request' },
  ),
];

/** The RPC rows. */
export const SECRET_PATCH_RPC_ROWS: readonly MatrixRow[] = [
  rowOf(
    'outpost.api.v1.OperationService/SubmitOperation',
    'write',
    {
      kind: 'rpc',
      transport: 'connect-json',
      service: 'outpost.api.v1.OperationService',
      method: 'SubmitOperation',
      message: {
        account: FIXTURE.agentA.account,
        id: 'authz-secret-copy',
        patch: { apiVersion: 'v1', kind: 'Secret', namespace: 'default', name: 'db', type: 'PATCH_TYPE_JSON', patch: SECRET_COPY },
      },
    },
    { scenario: 'a JSON patch of a Secret copying its data: refused, nothing is stored', valid: 'InvalidArgument' },
  ),
];
