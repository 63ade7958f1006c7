/**
 * Spinnaker through a replica that does not hold the account's agent stream (two in-process gateways on one Postgres,
 * tokens, not insecure): Orca's submissions to replica B run as operations forwarded to replica A, which holds the
 * real agent's stream; the task is readable from both replicas; reads (manifests, wait for stable) go the same way,
 * stored nowhere;
 * a repeated clientRequestId still runs once. Orca authenticates with a bearer token that has only the `spinnaker`
 * role; an agent or writer token is refused.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadAgentConfig, startAgent, type RunningAgent } from '../../src/agent/index.js';
import { loadGatewayConfig, startGateway, type GatewayConfigInput, type RunningGateway } from '../../src/gateway/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createSilentLogger } from '../../src/shared/logger.js';
import { testDrivers } from '../../testkit/databases.js';
import { tokenGateway } from '../../testkit/token-gateway.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';
import { createOrcaClient, type Obj } from './orca-client.js';
import { waitForAccounts } from '../../testkit/accounts-ready.js';

const pg = testDrivers().includes('postgres');
const AGENT_TOKEN = 'agent-token-0123456789abcdef';
const ORCA_TOKEN = 'orca-token-0123456789abcdef';
const READER_TOKEN = 'reader-token-0123456789abcdef';

describe('Spinnaker through a forwarding replica (postgres)', {
  skip: pg ? false : 'needs OUTPOST_TEST_POSTGRES',
  concurrency: false,
}, () => {
  let dir: string;
  let sandbox: Sandbox;
  let a: TestGateway;
  let b: RunningGateway;
  let agent: RunningAgent;

  const secure = (): GatewayConfigInput => ({
    ...tokenGateway(
      [
        { subject: 'agent', token: AGENT_TOKEN, roles: ['agent'], accounts: ['*'] },
        { subject: 'orca', token: ORCA_TOKEN, roles: ['spinnaker'], accounts: ['*'] },
        { subject: 'reader', token: READER_TOKEN, roles: ['read', 'write'], accounts: ['*'] },
      ],
      'authenticated',
      join(dir, 'replica-secret'),
    ),
    replicas: { heartbeatIntervalSeconds: 0.2, deadAfterSeconds: 2, leaseSeconds: 30 },
  });
  const orcaOn = (gw: RunningGateway, token = ORCA_TOKEN) =>
    createOrcaClient(gw.httpUrl, { authorization: `Bearer ${token}`, 'X-SPINNAKER-USER': 'bob' });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'outpost-spin-fwd-'));
    writeFileSync(join(dir, 'replica-secret'), 'replica-secret-0123456789-0123456789-abcdef');
    sandbox = await startSandbox({ seed: 'demo', logger: createSilentLogger() });
    await sandbox.writeKubeconfig(join(dir, 'kubeconfig'));
    a = await startTestGateway('postgres', { id: 'gw-a', ...secure() });
    b = await startGateway(
      loadGatewayConfig({
        env: {},
        overrides: { host: '127.0.0.1', httpPort: 0, grpcPort: 0, database: a.testDb.url, id: 'gw-b', ...secure() },
      }),
      {
        logger: createSilentLogger(),
      },
    );
    for (;;) {
      const res = await fetch(`${b.httpUrl}/armory/clouddrivers`, { headers: { authorization: `Bearer ${READER_TOKEN}` } });
      if (((await res.json()) as unknown[]).length === 2) break;
      await sleep(100);
    }
    const config = join(dir, 'agent.yaml');
    writeFileSync(
      config,
      [
        'clouddriver:',
        `  grpc: ${new URL(a.gateway.grpcUrl).host}`,
        '  insecure: true',
        '  auth:',
        `    token: ${AGENT_TOKEN}`,
        'agent:',
        '  id: agent-fwd',
        'server:',
        '  port: 0',
        'kubernetes:',
        '  accounts:',
        '    - name: remote',
        `      kubeconfigFile: ${join(dir, 'kubeconfig')}`,
        '',
      ].join('\n'),
    );
    agent = await startAgent(loadAgentConfig(config, {}), { logger: createSilentLogger() });
    await waitForAccounts(a.gateway.httpUrl, ['remote'], { headers: { authorization: `Bearer ${READER_TOKEN}` } });
  });
  after(async () => {
    await agent?.close();
    await b?.close();
    await a?.close();
    await sandbox?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('deploy, wait for stable and scale submitted to the replica without the stream; the task reads the same on both', async () => {
    const orcaB = orcaOn(b);
    const manifest: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'fwd-web', namespace: 'demo' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'fwd-web' } },
        template: { metadata: { labels: { app: 'fwd-web' } }, spec: { containers: [{ name: 'main', image: 'nginx:1' }] } },
      },
    };
    const ops = [
      {
        deployManifest: { account: 'remote', cloudProvider: 'kubernetes', source: 'text', manifests: [manifest], moniker: { app: 'fwd' } },
      },
    ];
    const id = await orcaB.submit(ops, 'fwd-request-1');
    assert.equal(await orcaB.submit(ops, 'fwd-request-1'), id, 'the retried submission returns the same task');
    const outcome = await orcaB.monitor(id, true);
    assert.equal(outcome.status, 'SUCCEEDED', JSON.stringify(outcome.task));
    const fromA = await orcaOn(a.gateway).get(`/task/${id}`);
    assert.deepEqual(fromA.body, outcome.task, 'every replica answers the task from the database');
    const stable = await orcaB.waitStable('remote', outcome.outputs.manifestNamesByNamespace!);
    assert.equal(stable.status, 'SUCCEEDED');
    // Wait for stable read the manifest through A's stream, one hop, and stored nothing (the task's own steps are its history).
    const reads = await a.query<{ id: string }>(
      `select id from operations where type in ('get', 'list', 'logs') and id not like '${id}-%'`,
    );
    assert.deepEqual(reads, [], 'reads are never stored');
    const metrics = await (await fetch(`${b.httpUrl}/metrics`, { headers: { authorization: `Bearer ${READER_TOKEN}` } })).text();
    assert.match(metrics, /^outpost_gateway_reads_total\{type="get",via="forwarded",state="SUCCEEDED"\} [1-9]/m);
    const rows = await a.query<{ id: string; gateway_id: string; agent_id: string; type: string; requested_by: string }>(
      `select id, gateway_id, agent_id, type, requested_by from operations where id like '${id}-%' order by id`,
    );
    assert.ok(rows.length > 0);
    for (const row of rows) {
      assert.deepEqual([row.gateway_id, row.agent_id], ['gw-b', 'agent-fwd'], 'received by B, run by the agent behind A');
      assert.equal(row.requested_by, 'token:orca for spinnaker user bob', 'every operation records who asked');
    }
    assert.equal(rows.filter((r) => r.type === 'apply').length, 1, 'applied once');
    const scale = await orcaB.run(
      'scaleManifest',
      { account: 'remote', manifestName: 'deployment fwd-web', location: 'demo', replicas: 3 },
      false,
    );
    assert.equal(scale.status, 'SUCCEEDED');
    assert.equal((sandbox.store.get('apps/v1', 'Deployment', 'demo', 'fwd-web') as Obj).spec.replicas, 3);
    const task = await a.query<{ spinnaker_user: string; gateway_id: string }>(
      `select spinnaker_user, gateway_id from spinnaker_tasks where id = '${id}'`,
    );
    assert.deepEqual(task, [{ spinnaker_user: 'bob', gateway_id: 'gw-b' }]);
  });

  test('only the spinnaker role reaches the Clouddriver API', async () => {
    for (const token of [AGENT_TOKEN, READER_TOKEN]) {
      const res = await orcaOn(b, token).get('/credentials');
      assert.equal(res.status, 403);
      assert.equal(res.body.error, 'Forbidden');
    }
    const none = await fetch(`${b.httpUrl}/credentials`);
    assert.equal(none.status, 401);
    const ok = await orcaOn(b).get('/credentials?expand=true');
    assert.equal(ok.status, 200);
    const remote = (ok.body as unknown as Obj[]).find((x) => x.name === 'remote')!;
    assert.equal(remote.type, 'kubernetes');
    assert.ok(remote.namespaces.includes('demo'), JSON.stringify(remote.namespaces));
    assert.equal(remote.spinnakerKindMap.deployment, 'serverGroupManagers');
  });
});
