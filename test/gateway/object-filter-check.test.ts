/**
 * ListObjects with a wrong filter says so instead of answering an empty list: an unknown account is NOT_FOUND, an
 * unknown kind is NOT_FOUND naming the kinds the account (or every account) has. Known accounts without objects,
 * accounts that reported no kinds yet, and filters that merely match nothing still answer an empty list; callers
 * without the read role get the same refusal whether the account exists or not.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { testDrivers } from '../../testkit/databases.js';
import {
  configMap,
  connectAgent,
  event,
  events,
  EventType,
  openAgentStream,
  type TestAgentStream,
} from '../../testkit/test-agent-stream.js';
import { startTestGateway, type TestGateway } from '../../testkit/test-gateway.js';

const AGENT_TOKEN = 'filter-agent-token-0123456789abcdef';
const READER_TOKEN = 'filter-reader-token-0123456789abcdef';

for (const driver of testDrivers()) {
  describe(`ListObjects refuses a wrong filter (${driver})`, { concurrency: false }, () => {
    let t: TestGateway;
    let agent: TestAgentStream;
    before(async () => {
      t = await startTestGateway(driver, {
        insecure: false,
        auth: {
          tokens: [
            { subject: 'agent', token: AGENT_TOKEN },
            { subject: 'reader', token: READER_TOKEN },
          ],
        },
        authorization: {
          rules: [
            { kind: 'token', subject: '^agent$', roles: ['agent'], accounts: ['*'] },
            { kind: 'token', subject: '^reader$', roles: ['read'], accounts: [] },
          ],
        },
      });
      agent = openAgentStream(t.gateway.grpcUrl, { bearer: AGENT_TOKEN });
      // Both accounts report the one kind ConfigMap (testkit's Hello); prod also caches a Deployment.
      await connectAgent(agent, 'agent-filter', [{ name: 'prod' }, { name: 'empty' }]);
      const deployment = {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web', namespace: 'ns-a', uid: 'd1', resourceVersion: '3' },
      };
      agent.send(
        events(1, [event('prod', EventType.ADDED, configMap('cm', 2, { namespace: 'ns-a' })), event('prod', EventType.ADDED, deployment)]),
      );
      await agent.waitForAck(1);
      // A known account whose agent has not reported any kind yet.
      await t.query(`insert into accounts (name) values ('fresh')`);
    });
    after(async () => {
      agent?.end();
      await agent?.ended;
      await t?.close();
    });

    const list = async (body: Record<string, unknown>, token: string | null = READER_TOKEN) => {
      const res = await fetch(`${t.gateway.httpUrl}/outpost.api.v1.ObjectService/ListObjects`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { code?: string; message?: string; objects?: { name: string }[] } };
    };

    test('an unknown account is not_found (404) naming it', async () => {
      const r = await list({ account: 'nope', kind: 'ConfigMap' });
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.code, 'not_found');
      assert.equal(r.body.message, 'account "nope" not found');
      const paged = await list({ account: 'nope', pageSize: 1 });
      assert.equal(paged.status, 404);
    });

    test('an unknown kind is not_found naming the kinds of the account, or of every account', async () => {
      const r = await list({ account: 'prod', kind: 'Deploymnt' });
      assert.equal(r.status, 404, JSON.stringify(r.body));
      assert.equal(r.body.code, 'not_found');
      assert.equal(r.body.message, 'kind "Deploymnt" not found in account "prod"; its kinds: ConfigMap, Deployment');
      const lower = await list({ account: 'prod', kind: 'deployment' });
      assert.equal(lower.status, 404, 'kinds compare exactly: clients send canonical Kind names');
      const anywhere = await list({ kind: 'Pod' });
      assert.equal(anywhere.status, 404);
      assert.equal(anywhere.body.message, 'kind "Pod" not found in any account; the kinds of all accounts: ConfigMap, Deployment');
      const empty = await list({ account: 'empty', kind: 'Deployment' });
      assert.equal(empty.status, 404, 'the kinds are per account: "empty" reported only ConfigMap');
      assert.match(empty.body.message!, /its kinds: ConfigMap$/);
    });

    test('filters that are right but match nothing still answer an empty list', async () => {
      for (const body of [
        { account: 'empty' },
        { account: 'empty', kind: 'ConfigMap' },
        { account: 'fresh' },
        { account: 'fresh', kind: 'Anything' },
        { account: 'prod', kind: 'ConfigMap', namespace: 'elsewhere' },
        { account: 'prod', kind: 'Deployment', labelSelector: 'app=none' },
        { kind: 'Deployment', namespace: 'elsewhere' },
      ]) {
        const r = await list(body);
        assert.equal(r.status, 200, `${JSON.stringify(body)}: ${JSON.stringify(r.body)}`);
        assert.deepEqual(r.body.objects ?? [], [], JSON.stringify(body));
      }
      const found = await list({ account: 'prod', kind: 'Deployment' });
      assert.deepEqual(
        found.body.objects?.map((o) => o.name),
        ['web'],
      );
    });

    test('a caller without the read role learns nothing: the same refusal for known and unknown accounts', async () => {
      for (const [token, status, code] of [
        [AGENT_TOKEN, 403, 'permission_denied'],
        [null, 401, 'unauthenticated'],
      ] as const) {
        const known = await list({ account: 'prod', kind: 'Deploymnt' }, token);
        const unknown = await list({ account: 'nope' }, token);
        assert.equal(known.status, status, JSON.stringify(known.body));
        assert.equal(unknown.status, status);
        assert.equal(known.body.code, code);
        assert.equal(unknown.body.code, code);
        assert.equal(known.body.message, unknown.body.message);
      }
    });
  });
}
