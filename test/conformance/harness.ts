/**
 * What the conformance suite starts, in one place: gateways on a test database with short timers, a sandbox cluster
 * seeded for the scenarios, the gateway's client APIs (operations, the object cache) over connect-es — a client of the
 * gateway, not of the agent protocol — and Outpost's own agent (the reference agent) configured like an operator
 * would. Nothing here speaks the agent protocol: that is the mini agent's and the scripted streams' job.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Code, ConnectError, createClient, type Client } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { SignJWT } from 'jose';
import { loadAgentConfig, startAgent, type RunningAgent } from '../../src/agent/index.js';
import type { GatewayConfigInput } from '../../src/gateway/index.js';
import { ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { OperationService } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { createKubeClient, type KubeClient } from './kube-client.js';
import type { RequestMessage } from './agent-stream.js';

export type { TestGateway };

/** Static tokens of the authenticated gateway ({@link startAuthenticatedGateway}). */
export const TOKENS = {
  /** Agent role, accounts `conf-*`. */
  agentA: 'conformance-agent-a-0123456789',
  /** Agent role, accounts `conf-*` (another identity: bindings, other identity's session). */
  agentB: 'conformance-agent-b-0123456789',
  /** Read and write, no agent role. */
  client: 'conformance-client-0123456789',
  /** In the token file (revocation). */
  file: 'conformance-file-token-0123456789',
} as const;

const JWT_SECRET = 'conformance-jwt-secret-0123456789-0123456789';

/** A gateway with authentication on (static tokens, a token file, JWTs) and files that go with it. */
export interface AuthenticatedGateway extends TestGateway {
  /** The token file of subject `agent-file` (rewrite it to revoke). */
  tokenFile: string;
  /** A HS256 JWT for subject `agent-jwt` (agent role) expiring at `exp` (epoch seconds). */
  jwt(exp: number): Promise<string>;
}

/**
 * Starts a gateway on PGlite with `insecure: false`: agents `agent-a`, `agent-b`, `agent-file` (token file) and
 * `agent-jwt` may register `conf-*`; `client` may read and write but is no agent.
 */
export async function startAuthenticatedGateway(overrides: GatewayConfigInput = {}): Promise<AuthenticatedGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'outpost-conformance-'));
  const tokenFile = join(dir, 'agent-token');
  writeFileSync(tokenFile, `${TOKENS.file}\n`);
  writeFileSync(join(dir, 'jwt-secret'), JWT_SECRET);
  const t = await startTestGateway('pglite', {
    insecure: false,
    agents: { heartbeatIntervalSeconds: 0.5, deadAfterSeconds: 20 },
    operations: { agentWaitSeconds: 2, sweepIntervalMs: 100 },
    auth: {
      tokens: [
        { subject: 'agent-a', token: TOKENS.agentA },
        { subject: 'agent-b', token: TOKENS.agentB },
        { subject: 'client', token: TOKENS.client },
        { subject: 'agent-file', tokenFile },
      ],
      jwt: {
        issuer: 'https://issuer.conformance',
        audience: 'outpost',
        secretFile: join(dir, 'jwt-secret'),
        clockToleranceSeconds: 0,
        maxLifetimeSeconds: 3600,
      },
    },
    authorization: {
      rules: [
        { kind: 'token', subject: '^agent-(a|b|file)$', roles: ['agent'], accounts: ['conf-*'] },
        { kind: 'token', subject: '^client$', roles: ['read', 'write'], accounts: ['*'] },
        { kind: 'jwt', subject: '^agent-jwt$', roles: ['agent'], accounts: ['conf-*'] },
      ],
    },
    ...overrides,
  });
  return {
    ...t,
    tokenFile,
    jwt: (exp) =>
      new SignJWT({})
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuer('https://issuer.conformance')
        .setAudience('outpost')
        .setSubject('agent-jwt')
        .setIssuedAt()
        .setExpirationTime(exp)
        .sign(new TextEncoder().encode(JWT_SECRET)),
    async close() {
      await t.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The gateway's operation API (connect-es over gRPC), with a bearer token when the gateway needs one. */
export function operationClient(grpcUrl: string, bearer?: string): Client<typeof OperationService> {
  return createClient(
    OperationService,
    createGrpcTransport({
      baseUrl: grpcUrl,
      interceptors: bearer ? [(next) => (req) => (req.header.set('authorization', `Bearer ${bearer}`), next(req))] : [],
    }),
  );
}

/** The gateway's object cache API (connect-es over gRPC). */
export function objectClient(grpcUrl: string, bearer?: string): Client<typeof ObjectService> {
  return createClient(
    ObjectService,
    createGrpcTransport({
      baseUrl: grpcUrl,
      interceptors: bearer ? [(next) => (req) => (req.header.set('authorization', `Bearer ${bearer}`), next(req))] : [],
    }),
  );
}

/**
 * The cached objects of an account as `apiVersion/Kind/namespace/name` → resourceVersion, read through ObjectService.
 * An account the gateway has never recorded (ListObjects answers NOT_FOUND for it) has nothing cached: empty.
 */
export async function cachedVersions(grpcUrl: string, account: string, bearer?: string): Promise<Map<string, string>> {
  const client = objectClient(grpcUrl, bearer);
  const out = new Map<string, string>();
  let pageToken = '';
  do {
    const page = await client.listObjects({ account, pageSize: 1000, pageToken, omitObject: true }).catch((err: unknown) => {
      if (err instanceof ConnectError && err.code === Code.NotFound && !pageToken) return { objects: [], nextPageToken: '' };
      throw err;
    });
    for (const o of page.objects) out.set(`${o.apiVersion}/${o.kind}/${o.namespace}/${o.name}`, o.resourceVersion);
    pageToken = page.nextPageToken;
  } while (pageToken);
  return out;
}

/** What the sandbox holds for the given kinds, in the same form as {@link cachedVersions}. */
export function clusterVersions(sandbox: Sandbox, kinds: { apiVersion: string; kind: string }[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const { apiVersion, kind } of kinds) {
    for (const o of sandbox.store.list(apiVersion, kind))
      out.set(`${apiVersion}/${kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, String(o.metadata.resourceVersion));
  }
  return out;
}

/** Differences between cache and cluster (empty when equal), for assertion messages. */
export function versionDiff(cache: Map<string, string>, cluster: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [k, rv] of cluster) if (cache.get(k) !== rv) out.push(`${k}: cache ${cache.get(k) ?? 'missing'}, cluster ${rv}`);
  for (const k of cache.keys()) if (!cluster.has(k)) out.push(`${k}: cached, gone from the cluster`);
  return out;
}

/** The kinds the positive scenarios cache. */
export const SCENARIO_KINDS = [
  { apiVersion: 'v1', kind: 'ConfigMap' },
  { apiVersion: 'v1', kind: 'Secret' },
  { apiVersion: 'apps/v1', kind: 'Deployment' },
];

/** A sandbox cluster for the positive scenarios, and a fetch client on it. */
export interface ScenarioCluster {
  sandbox: Sandbox;
  kube: KubeClient;
  kubeconfig: string;
  dir: string;
  close(): Promise<void>;
}

/**
 * Starts a sandbox (no recorded Events: nothing changes unless the test changes it; bookmarks every 300 ms) holding
 * namespace `conf` with `objects` ConfigMaps, a Secret with data (and a last-applied annotation holding the same
 * values) and a Deployment `web`.
 */
export async function startScenarioCluster(objects = 500): Promise<ScenarioCluster> {
  const sandbox = await startSandbox({ seed: 'none', events: false, bookmarkIntervalMs: 300 });
  const dir = mkdtempSync(join(tmpdir(), 'outpost-conformance-cluster-'));
  const kubeconfig = join(dir, 'kubeconfig');
  await sandbox.writeKubeconfig(kubeconfig);
  sandbox.store.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'conf' } });
  for (let i = 0; i < objects; i++) {
    sandbox.store.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `cm-${String(i).padStart(4, '0')}`, namespace: 'conf', labels: { app: 'conformance', shard: String(i % 5) } },
      data: { i: String(i) },
    });
  }
  sandbox.store.create({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: 'creds',
      namespace: 'conf',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"stringData":{"password":"hunter2"}}', keep: 'me' },
    },
    type: 'Opaque',
    data: { password: Buffer.from('hunter2').toString('base64') },
  });
  sandbox.store.create({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'conf' },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
    },
  });
  return {
    sandbox,
    kube: createKubeClient(sandbox.url, sandbox.adminToken),
    kubeconfig,
    dir,
    async close() {
      await sandbox.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts Outpost's own agent (the reference agent) against the cluster's kubeconfig, dialling `grpcAddress`
 * (`host:port`, cleartext), for one account caching `kinds`, reconnecting fast.
 */
export async function startReferenceAgent(
  cluster: ScenarioCluster,
  grpcAddress: string,
  opts: { id: string; account: string; kinds: string[]; bearer?: string },
): Promise<RunningAgent> {
  const path = join(cluster.dir, `${opts.id}.yaml`);
  const lines = [
    'clouddriver:',
    `  grpc: ${grpcAddress}`,
    '  insecure: true',
    '  reconnect:',
    '    baseSeconds: 0.1',
    '    maxSeconds: 0.5',
    ...(opts.bearer ? ['  auth:', `    token: ${opts.bearer}`] : []),
    'agent:',
    `  id: ${opts.id}`,
    'server:',
    '  port: 0',
    'prometheus:',
    '  enabled: false',
    'kubernetes:',
    '  accounts:',
    `    - name: ${opts.account}`,
    `      kubeconfigFile: ${cluster.kubeconfig}`,
    `      kinds: ${JSON.stringify(opts.kinds)}`,
  ];
  writeFileSync(path, `${lines.join('\n')}\n`);
  return startAgent(loadAgentConfig(path, {}));
}

/** A Hello for the given accounts (api_host set, one ConfigMap kind), for scripted streams. */
export function helloFor(
  agentId: string,
  accounts: string[],
  extra: { resumeSessionId?: string; resumeSessionToken?: string } = {},
): RequestMessage {
  return {
    case: 'hello',
    value: {
      agentId,
      zone: 'conformance',
      version: 'scripted',
      replicas: 1,
      ...extra,
      accounts: accounts.map((name) => ({
        name,
        apiHost: `https://cluster-${name}.example:6443`,
        kubernetesVersion: 'v1.30.0',
        kinds: [{ apiVersion: 'v1', kind: 'ConfigMap', resource: 'configmaps', namespaced: true }],
      })),
    },
  };
}
