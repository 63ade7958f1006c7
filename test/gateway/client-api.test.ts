/**
 * The client API over real sockets: ListObjects/GetObject/ListAccounts as Connect JSON over HTTP/1.1 (plain fetch),
 * as gRPC over HTTP/2 (connect-node transport) and through the `buf curl` binary; plus the REST routes.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { createClient } from '@connectrpc/connect';
import { createGrpcTransport } from '@connectrpc/connect-node';
import { AccountService } from '../../src/gen/outpost/api/v1/account_service_pb.js';
import { ObjectService } from '../../src/gen/outpost/api/v1/object_service_pb.js';
import { testDrivers } from '../../testkit/databases.js';
import {
  Code,
  ConnectError,
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  SyncPhase,
  syncMarker,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const run = promisify(execFile);
const repo = fileURLToPath(new URL('../..', import.meta.url));

type JsonObject = {
  account: string;
  kind: string;
  apiVersion: string;
  namespace?: string;
  name: string;
  labels?: Record<string, string>;
  object?: any;
};

const TIERS = ['a', 'b', 'c'];

for (const driver of testDrivers()) {
  describe(`client API (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: TestAgentStream;
    before(async () => {
      t = await startTestGateway(driver);
      agent = openAgentStream(t.gateway.grpcUrl);
      await connectAgent(agent, 'agent-api', [{ name: 'prod' }, { name: 'dev' }]);
      let seq = 0;
      agent.send(syncMarker(++seq, 'prod', SyncPhase.START));
      for (let page = 0; page < 3; page++) {
        const list = [];
        for (let i = page * 100; i < Math.min(250, (page + 1) * 100); i++) {
          const labels: Record<string, string> = { app: i % 2 === 0 ? 'web' : 'api', tier: TIERS[i % 3]! };
          if (i % 10 === 0) labels.canary = 'true';
          list.push(
            event(
              'prod',
              EventType.ADDED,
              configMap(`cm-${String(i).padStart(3, '0')}`, 1000 + i, { namespace: i < 125 ? 'ns-a' : 'ns-b', labels }),
            ),
          );
        }
        agent.send(events(++seq, list));
      }
      agent.send(syncMarker(++seq, 'prod', SyncPhase.END, '2000', 250));
      const deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'ns-a', uid: 'd1', resourceVersion: '3000', labels: { app: 'web' } },
        spec: { replicas: 2 },
      };
      agent.send(events(++seq, [event('prod', EventType.ADDED, deployment), event('dev', EventType.ADDED, configMap('dev-cm', 5))]));
      await agent.waitForAck(seq);
    });
    after(async () => {
      agent?.end();
      await agent?.ended;
      await t?.close();
    });

    const connectJson = async (method: string, body: unknown) => {
      const res = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.${method}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as any };
    };
    const listAll = async (request: Record<string, unknown>) => {
      const all: JsonObject[] = [];
      let pageToken = '';
      let pages = 0;
      do {
        const { status, body } = await connectJson('ObjectService/ListObjects', { ...request, pageToken });
        assert.equal(status, 200, JSON.stringify(body));
        all.push(...(body.objects ?? []));
        pageToken = body.nextPageToken ?? '';
        pages++;
      } while (pageToken);
      return { all, pages };
    };

    test('ListObjects over Connect JSON (HTTP/1.1): filters, ordering and keyset paging', async () => {
      const { all, pages } = await listAll({ account: 'prod', kind: 'ConfigMap', pageSize: 100 });
      assert.equal(all.length, 250);
      assert.equal(pages, 3);
      const keys = all.map((o) => `${o.namespace}/${o.name}`);
      assert.deepEqual(keys, [...keys].sort(), 'ordered by namespace, name');
      assert.equal(new Set(keys).size, 250, 'no duplicates across pages');
      assert.equal(all[0]!.object.data.v, '1000');

      const everything = await listAll({ pageSize: 7 });
      assert.equal(everything.all.length, 252);
      assert.deepEqual(
        everything.all.map((o) => `${o.account}|${o.kind}`).filter((v, i, a) => a.indexOf(v) === i),
        ['dev|ConfigMap', 'prod|ConfigMap', 'prod|Deployment'],
      );

      const ns = await listAll({ account: 'prod', namespace: 'ns-a', omitObject: true });
      assert.equal(ns.all.length, 126);
      assert.ok(ns.all.every((o) => o.object === undefined && o.labels !== undefined));

      const { body } = await connectJson('ObjectService/ListObjects', { account: 'prod' });
      assert.equal(body.objects.length, 100, 'default page size is 100');
      const big = await connectJson('ObjectService/ListObjects', { pageSize: 5000 });
      assert.equal(big.body.objects.length, 252, 'page size is capped at 1000, not refused');
    });

    test('label selectors select in SQL with Kubernetes semantics', async () => {
      const count = async (labelSelector: string) =>
        (await listAll({ account: 'prod', kind: 'ConfigMap', labelSelector, pageSize: 1000 })).all.length;
      assert.equal(await count('app=web'), 125);
      assert.equal(await count('app==web,tier=a'), 42);
      assert.equal(await count('app!=web'), 125);
      assert.equal(await count('tier in (a,b)'), 167);
      assert.equal(await count('tier notin (a,b)'), 83);
      assert.equal(await count('canary'), 25);
      assert.equal(await count('!canary'), 225);
      assert.equal(await count('canary,app=api'), 0);
      assert.equal(await count('missing notin (x)'), 250, 'notin matches objects without the label');
    });

    test('bad selector, bad token and bad page size → 400 with a Connect error body', async () => {
      for (const body of [
        { labelSelector: 'app in (' },
        { labelSelector: '!!x' },
        { pageToken: 'not-a-token' },
        { pageToken: Buffer.from('{"v":1,"k":[1,2]}').toString('base64url') },
        { pageSize: -1 },
      ]) {
        const res = await connectJson('ObjectService/ListObjects', body);
        assert.equal(res.status, 400, JSON.stringify(body));
        assert.equal(res.body.code, 'invalid_argument');
        assert.ok(typeof res.body.message === 'string' && res.body.message.length > 0);
      }
      const first = await connectJson('ObjectService/ListObjects', { account: 'prod', pageSize: 10 });
      const reused = await connectJson('ObjectService/ListObjects', { account: 'dev', pageToken: first.body.nextPageToken });
      assert.equal(reused.status, 400);
      assert.match(reused.body.message, /different filters/);
    });

    test('ListObjects and GetObject over gRPC (HTTP/2)', async () => {
      const client = createClient(ObjectService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      const page = await client.listObjects({ account: 'prod', kind: 'Deployment' });
      assert.equal(page.objects.length, 1);
      assert.equal(page.objects[0]!.name, 'web');
      assert.equal((page.objects[0]!.object as any).spec.replicas, 2);
      assert.ok(page.objects[0]!.updatedAt);
      assert.equal(page.nextPageToken, '');

      const got = await client.getObject({ account: 'prod', kind: 'ConfigMap', namespace: 'ns-b', name: 'cm-200' });
      assert.equal(got.object?.resourceVersion, '1200');
      assert.deepEqual(got.object?.labels, { app: 'web', tier: 'c', canary: 'true' });

      await assert.rejects(client.getObject({ account: 'prod', kind: 'ConfigMap', namespace: 'ns-b', name: 'nope' }), (err) => {
        assert.equal(ConnectError.from(err).code, Code.NotFound);
        return true;
      });
      await assert.rejects(client.getObject({ account: 'prod', name: 'x' }), (err) => {
        assert.equal(ConnectError.from(err).code, Code.InvalidArgument);
        assert.match(ConnectError.from(err).rawMessage, /kind is required/);
        return true;
      });
      await assert.rejects(client.listObjects({ labelSelector: 'a in (' }), (err) => ConnectError.from(err).code === Code.InvalidArgument);
    });

    test('buf curl lists objects over gRPC with HTTP/2 prior knowledge', async () => {
      const { stdout } = await run(
        `${repo}node_modules/.bin/buf`,
        [
          'curl',
          '--protocol',
          'grpc',
          '--http2-prior-knowledge',
          '--schema',
          `${repo}proto`,
          '-d',
          JSON.stringify({ account: 'prod', kind: 'Deployment', omitObject: true }),
          `${t.gateway.grpcUrl}/outpost.api.v1.ObjectService/ListObjects`,
        ],
        { timeout: 60_000 },
      );
      const body = JSON.parse(stdout) as { objects: JsonObject[] };
      assert.deepEqual(
        body.objects.map((o) => o.name),
        ['web'],
      );
      assert.equal(body.objects[0]!.object, undefined);
    });

    test('ListAccounts reports every field: counts and sync state per kind, progress, state, times', async () => {
      const { status, body } = await connectJson('AccountService/ListAccounts', {});
      assert.equal(status, 200);
      assert.deepEqual(
        body.accounts.map((a: any) => a.name),
        ['dev', 'prod'],
      );
      const prod = body.accounts[1];
      assert.equal(prod.state, 'ACTIVE');
      assert.equal(prod.agentId, 'agent-api');
      assert.equal(prod.gatewayId, 'gw-test');
      assert.equal(prod.apiHost, 'https://cluster-prod:6443');
      assert.equal(prod.kubernetesVersion, 'v1.30.0');
      assert.ok(Date.parse(prod.lastEventTime) > 0 && Date.parse(prod.lastConnectionTime) > 0);
      const kinds = Object.fromEntries(prod.kinds.map((k: any) => [k.kind, k]));
      assert.deepEqual(kinds.ConfigMap, { apiVersion: 'v1', kind: 'ConfigMap', count: '250', synced: true, listed: '250' });
      assert.equal(kinds.Deployment.count, '1');
      assert.equal(kinds.Deployment.synced ?? false, false);
      assert.deepEqual(prod.syncProgress, { kindsTotal: 2, kindsSynced: 1, objectsListed: '250' });

      const client = createClient(AccountService, createGrpcTransport({ baseUrl: t.gateway.grpcUrl }));
      const one = await client.listAccounts({ name: 'dev' });
      assert.deepEqual(
        one.accounts.map((a) => [a.name, a.kinds.find((k) => k.kind === 'ConfigMap')?.count]),
        [['dev', 1n]],
      );
      assert.deepEqual((await client.listAccounts({ name: 'nope' })).accounts, []);
    });

    test('REST: /health, /armory/clouddrivers, JSON errors for unknown paths and methods', async () => {
      for (const base of [t.gateway.httpUrl]) {
        const health = await fetch(`${base}/health`);
        assert.equal(health.status, 200);
        assert.deepEqual(await health.json(), { status: 'ok', id: 'gw-test', database: 'ok' });
        const list = await fetch(`${base}/armory/clouddrivers`);
        const instances = (await list.json()) as any[];
        assert.equal(instances.length, 1);
        assert.equal(instances[0].id, 'gw-test');
        assert.equal(instances[0].baseUrl, t.gateway.httpUrl);
        assert.equal(instances[0].ready, true);
        assert.ok(Date.parse(instances[0].lastUpdated) > 0);
        const one = await fetch(`${base}/armory/clouddrivers/gw-test`);
        assert.equal(((await one.json()) as any).id, 'gw-test');
        const missing = await fetch(`${base}/armory/clouddrivers/other`);
        assert.equal(missing.status, 404);
        assert.equal(((await missing.json()) as any).error, 'not_found');
        const unknown = await fetch(`${base}/no/such/path`);
        assert.equal(unknown.status, 404);
        assert.deepEqual(Object.keys((await unknown.json()) as object).sort(), ['error', 'message']);
        const wrongMethod = await fetch(`${base}/health`, { method: 'DELETE' });
        assert.equal(wrongMethod.status, 405);
        assert.equal(((await wrongMethod.json()) as any).error, 'method_not_allowed');
      }
    });
  });
}
