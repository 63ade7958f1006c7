/**
 * What the hostile cases are sent to: an in-process gateway (insecure dev mode, so every handler is reachable without
 * credentials — authorization has its own suite) on a fresh database of the chosen driver, seeded with data that
 * valid requests can find (a cached account with objects, a dynamic account, a finished operation); a sandbox API
 * server for apply operations; and a scratch directory for agent configuration files.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '../../src/gen/grpc/health/v1/health_pb.js';
import { OperationService, OperationState } from '../../src/gen/outpost/api/v1/operation_service_pb.js';
import { createKubeClient, type KubeClient } from '../../src/agent/kube/kube-client.js';
import { createResourceResolver, type ResourceResolver } from '../../src/agent/operations/resource-resolver.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { configMap, connectAgent, event, events, EventType, openAgentStream } from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import type { Query } from './db-snapshot.js';
import { eventually } from '../../testkit/eventually.js';
import { PatchType } from '../../src/gen/outpost/agent/v1/operation_pb.js';

/** Names of the seeded data, for valid base requests. */
export const SEED = {
  agentId: 'hx-seed-agent',
  account: 'hx-seed',
  namespace: 'default',
  objects: ['cm-a', 'cm-b', 'cm-c'],
  dynamicAccount: 'hx-dynamic',
  operationId: 'hx-seed-operation',
} as const;

/** Largest account-route body the target's gateway accepts (kept small so oversized bodies are cheap to send). */
export const ACCOUNT_BODY_LIMIT = 64 * 1024;

/** A running target. */
export interface HostileTarget {
  readonly driver: 'pglite' | 'postgres';
  /** HTTP/1.1 port (Connect, REST). */
  readonly httpUrl: string;
  /** h2c port (gRPC, the agent stream). */
  readonly grpcUrl: string;
  readonly query: Query;
  /** A directory cases may write files into. */
  readonly scratchDir: string;
  /** A Kubernetes client and resolver for the sandbox (started on first use). */
  kube(): Promise<{ client: KubeClient; resolver: ResourceResolver }>;
  /** Undefined when `GET /health` is 200 and gRPC health SERVING; what is wrong otherwise. */
  unhealthy(): Promise<string | undefined>;
  close(): Promise<void>;
}

/** Starts the gateway on `driver`, seeds it, and waits until the seeding's own writes are over. */
export async function startHostileTarget(driver: 'pglite' | 'postgres'): Promise<HostileTarget> {
  const scratchDir = mkdtempSync(join(tmpdir(), 'outpost-hostile-'));
  const webDir = join(scratchDir, 'web');
  mkdirSync(join(webDir, 'assets'), { recursive: true });
  writeFileSync(join(webDir, 'index.html'), '<!doctype html><title>hostile</title>');
  writeFileSync(join(webDir, 'assets', 'app-1234.js'), 'export {};');
  let t: TestGateway;
  try {
    t = await startTestGateway(driver, {
      // Nothing may move by itself during a run: no activation timeout or clean-up of the seeded or accepted accounts.
      accounts: { maxBodyBytes: ACCOUNT_BODY_LIMIT, activationTimeoutSeconds: 86_400, cleanupGraceSeconds: 86_400 },
      // Accepted operations find no agent: they fail quickly, well inside a batch.
      operations: { agentWaitSeconds: 0.2 },
      web: { dir: webDir },
    });
  } catch (err) {
    rmSync(scratchDir, { recursive: true, force: true });
    throw err;
  }
  try {
    await seed(t);
  } catch (err) {
    await t.close();
    rmSync(scratchDir, { recursive: true, force: true });
    throw err;
  }
  let sandbox: Promise<{ sandbox: Sandbox; client: KubeClient; resolver: ResourceResolver }> | undefined;
  const health = createClient(Health, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
  return {
    driver,
    httpUrl: t.gateway.httpUrl,
    grpcUrl: t.gateway.grpcUrl,
    query: (text) => t.query(text),
    scratchDir,
    kube() {
      sandbox ??= (async () => {
        const sb = await startSandbox({ seed: 'none' });
        return { sandbox: sb, client: createKubeClient(sb.kubeConfig()), resolver: createResourceResolver() };
      })();
      return sandbox.then(({ client, resolver }) => ({ client, resolver }));
    },
    async unhealthy() {
      try {
        const res = await fetch(`${t.gateway.httpUrl}/health`, { signal: AbortSignal.timeout(30_000) });
        if (res.status !== 200) return `GET /health answered ${res.status}`;
        const grpc = await health.check({ service: '' }, { timeoutMs: 30_000 });
        if (grpc.status !== ServingStatus.SERVING) return `gRPC health is ${ServingStatus[grpc.status]}`;
        return undefined;
      } catch (err) {
        return `health check failed: ${(err as Error).message}`;
      }
    },
    async close() {
      if (sandbox) {
        const { sandbox: sb, client } = await sandbox;
        client.close();
        await sb.close();
      }
      await t.close();
      rmSync(scratchDir, { recursive: true, force: true });
    },
  };
}

/** A cached account with objects (its agent gone: INACTIVE, cache kept), a dynamic account, a failed operation. */
async function seed(t: TestGateway): Promise<void> {
  const agent = openAgentStream(t.gateway.grpcUrl);
  await connectAgent(agent, SEED.agentId, [{ name: SEED.account }]);
  agent.send(
    events(
      1,
      SEED.objects.map((name, i) => event(SEED.account, EventType.ADDED, configMap(name, i + 1, { labels: { app: 'web', tier: name } }))),
    ),
  );
  await agent.waitForAck(1);
  agent.end();
  await agent.ended;
  await eventually(
    'the seed session ended',
    async () => (await t.query(`select 1 from agent_sessions where agent_id = '${SEED.agentId}' and ended_at is not null`)).length === 1,
  );
  await eventually(
    'the seed account INACTIVE',
    async () => (await t.query(`select 1 from accounts where name = '${SEED.account}' and state = 'INACTIVE'`)).length === 1,
  );

  const created = await fetch(`${t.gateway.httpUrl}/armory/accounts/dynamic`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([{ name: SEED.dynamicAccount, kubeconfigFile: '/kube/config', namespaces: ['web'] }]),
  });
  if (created.status !== 201) throw new Error(`seeding the dynamic account failed: ${created.status} ${await created.text()}`);

  const operations = createClient(OperationService, createConnectTransport({ baseUrl: t.gateway.httpUrl, httpVersion: '1.1' }));
  await operations.submitOperation({
    account: SEED.account,
    id: SEED.operationId,
    wait: true,
    // A stored operation (reads are not stored): an empty merge patch.
    spec: { case: 'patch', value: { kind: 'ConfigMap', namespace: 'default', name: 'cm-a', type: PatchType.MERGE, patch: '{}' } },
  });
  await eventually('the seed operation past SENT', async () => {
    const { operation } = await operations.getOperation({ id: SEED.operationId });
    return operation !== undefined && operation.state !== OperationState.PENDING && operation.state !== OperationState.SENT;
  });
}
