/**
 * A valid request (protobuf JSON) for every method of every service the gateway serves through connect-node — the
 * starting point the RPC cases mutate. Reads name the seeded data so they reach real rows; writes name accounts and
 * operations unique to the case, so an accepted write touches only rows the case owns. A method without a sample
 * makes the generator throw: a new RPC cannot stay out of the suite.
 */
import type { DescMethod, DescService, JsonValue } from '@bufbuild/protobuf';
import { Health } from '../../src/gen/grpc/health/v1/health_pb.js';
import { ServerReflection as ServerReflectionV1 } from '../../src/gen/grpc/reflection/v1/reflection_pb.js';
import { ServerReflection as ServerReflectionV1alpha } from '../../src/gen/grpc/reflection/v1alpha/reflection_pb.js';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { AuditService } from '../../src/gen/outpost/api/v1/audit_service_pb.js';
import { FleetService } from '../../src/gen/outpost/api/v1/fleet_service_pb.js';
import { ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import type { Rng } from '../../testkit/rng.js';
import { SEED } from './hostile-target.js';

/** The services whose every method the RPC categories cover (the agent stream has categories of its own). */
const RPC_SERVICES: readonly DescService[] = [
  ObjectService,
  AccountService,
  OperationService,
  FleetService,
  AuditService,
  Health,
  ServerReflectionV1,
  ServerReflectionV1alpha,
];

type Sample = (rng: Rng, tag: string) => JsonValue;

const definition = (rng: Rng, tag: string): JsonValue => ({
  accounts: [
    {
      definition: {
        name: `hx-${tag}`,
        kubeconfigFile: '/kube/config',
        namespaces: rng.chance(0.5) ? ['web'] : [],
        kinds: rng.chance(0.5) ? ['Deployment'] : [],
        properties: rng.chance(0.5) ? { team: 'a' } : {},
      },
      zoneId: rng.pick(['', 'zone-a']),
    },
  ],
});

const reflection: Sample = (rng) =>
  rng.pick<JsonValue>([
    { listServices: '' },
    { fileContainingSymbol: 'outpost.api.v1.ObjectService' },
    { fileByFilename: 'outpost/api/v1/object_service.proto' },
    { allExtensionNumbersOfType: 'outpost.api.v1.Account' },
  ]);

const SPECS: ((rng: Rng) => [string, JsonValue])[] = [
  (rng) => [
    'apply',
    {
      manifests: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c${rng.int(0, 9)}\n  namespace: default\ndata:\n  a: "1"\n`,
      serverSide: rng.chance(0.3),
    },
  ],
  (rng) => ['scale', { kind: 'Deployment', namespace: 'default', name: 'web', replicas: rng.int(0, 5) }],
  () => ['delete', { kind: 'ConfigMap', namespace: 'default', name: 'c1', propagationPolicy: 'PROPAGATION_POLICY_FOREGROUND' }],
  () => ['patch', { kind: 'Deployment', namespace: 'default', name: 'web', type: 'PATCH_TYPE_MERGE', patch: '{"spec":{"paused":true}}' }],
  () => ['rollout', { kind: 'Deployment', namespace: 'default', name: 'web', action: 'ROLLOUT_ACTION_RESTART' }],
  () => ['get', { kind: 'ConfigMap', namespace: 'default', name: 'c1' }],
  () => ['list', { kind: 'ConfigMap', namespace: 'default', labelSelector: 'app=web', limit: 10 }],
  () => ['logs', { namespace: 'default', pod: 'web-1', tailLines: '10' }],
  () => ['history', { kind: 'Deployment', namespace: 'default', name: 'web' }],
];

/** `package.Service/Method` → a valid request. */
const SAMPLES: Record<string, Sample> = {
  'outpost.api.v1.ObjectService/ListObjects': (rng) => ({
    account: SEED.account,
    kind: 'ConfigMap',
    namespace: SEED.namespace,
    labelSelector: rng.pick(['app=web', 'tier in (cm-a,cm-b)', '!missing', 'app!=x', '']),
    pageSize: rng.int(1, 10),
    omitObject: rng.chance(0.5),
  }),
  'outpost.api.v1.ObjectService/GetObject': (rng) => ({
    account: SEED.account,
    kind: 'ConfigMap',
    namespace: SEED.namespace,
    name: rng.pick(SEED.objects),
    apiVersion: 'v1',
  }),
  'outpost.api.v1.ObjectService/SummarizeHealth': (rng) => ({
    account: rng.pick(['', SEED.account]),
  }),
  'outpost.api.v1.AccountService/ListAccounts': (rng) => ({
    name: rng.pick(['', SEED.account]),
    page: rng.int(1, 3),
    limit: rng.int(1, 20),
  }),
  'outpost.api.v1.AccountService/GetAccount': (rng) => ({ name: rng.pick([SEED.account, SEED.dynamicAccount]) }),
  'outpost.api.v1.AccountService/CreateAccounts': definition,
  'outpost.api.v1.AccountService/SetAccountStates': (rng, tag) => ({
    accounts: [{ name: `hx-${tag}`, state: rng.pick(['ACTIVE', 'INACTIVE']), zoneId: '' }],
  }),
  'outpost.api.v1.AccountService/PutDynamicAccounts': definition,
  'outpost.api.v1.AccountService/DeleteAccounts': (_, tag) => ({ names: [`hx-${tag}`] }),
  'outpost.api.v1.AccountService/ReleaseBinding': (_, tag) => ({ name: `hx-${tag}` }),
  'outpost.api.v1.AccountService/RebindAccount': (rng, tag) => ({
    name: `hx-${tag}`,
    identity: rng.pick(['token:agent-hx', 'certificate:CN=agent-hx', 'jwt:agent-hx']),
  }),
  'outpost.api.v1.AccountService/ListAgents': (rng) => ({ agentId: rng.pick(['', SEED.agentId]) }),
  'outpost.api.v1.OperationService/SubmitOperation': (rng, tag) => {
    const [kind, spec] = rng.pick(SPECS)(rng);
    return { account: `hx-${tag}`, id: `hx-op-${tag}`, timeout: rng.pick(['5s', '0.5s', '60s']), wait: rng.chance(0.2), [kind]: spec };
  },
  'outpost.api.v1.OperationService/GetOperation': () => ({ id: SEED.operationId }),
  'outpost.api.v1.OperationService/WaitOperation': () => ({ id: SEED.operationId }),
  'outpost.api.v1.OperationService/ListOperations': (rng) => ({
    account: SEED.account,
    state: rng.pick(['OPERATION_STATE_FAILED', 'OPERATION_STATE_UNSPECIFIED']),
    pageSize: rng.int(0, 20),
    pageToken: '',
  }),
  'outpost.api.v1.FleetService/GetFleet': () => ({}),
  'outpost.api.v1.FleetService/WatchFleet': () => ({}),
  'outpost.api.v1.AuditService/ListAuditEvents': (rng) => ({
    account: rng.pick(['', SEED.account]),
    principal: rng.pick(['', 'token:admin']),
    kind: rng.pick(['', 'kube', 'operation']),
    ...(rng.chance(0.5) ? { since: '2026-01-01T00:00:00Z' } : {}),
    pageSize: rng.int(0, 20),
    pageToken: '',
  }),
  'grpc.health.v1.Health/Check': (rng) => ({ service: rng.pick(['', 'outpost.api.v1.ObjectService', 'no.such.Service']) }),
  'grpc.health.v1.Health/Watch': (rng) => ({ service: rng.pick(['', 'outpost.api.v1.ObjectService']) }),
  'grpc.reflection.v1.ServerReflection/ServerReflectionInfo': reflection,
  'grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo': reflection,
};

/** Every method of {@link RPC_SERVICES}. */
export const RPC_METHODS: readonly DescMethod[] = RPC_SERVICES.flatMap((s) => s.methods);

/** A valid request for `method`; throws when the method has no sample yet. */
export function sampleRequest(method: DescMethod, rng: Rng, tag: string): JsonValue {
  const sample = SAMPLES[`${method.parent.typeName}/${method.name}`];
  if (!sample) throw new Error(`no sample request for ${method.parent.typeName}/${method.name}: add one to test/hostile/rpc-samples.ts`);
  return sample(rng, tag);
}
